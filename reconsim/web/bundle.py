"""The script every page inlines to draw its charts (Vega, Vega-Lite and vega-embed, from
vl-convert), made once per version and kept in reconsim's cache folder."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
from pathlib import Path
from typing import Final

import altair as alt
import vl_convert

from reconsim.io import write_atomic

#: The vl-convert that draws the charts and bundles the pages' script.
VL_CONVERT_VERSION: Final = importlib.metadata.version("vl-convert-python")


def vegalite_version() -> str | None:
    """The Vega-Lite version Altair writes specs for, as vl-convert names it (``6.4``)."""
    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return major_minor if major_minor in vl_convert.get_vegalite_versions() else None


def cache_dir() -> Path:
    """Where reconsim keeps what it can compute again: ``$RECONSIM_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/reconsim``, else ``~/.cache/reconsim``."""
    if os.environ.get("RECONSIM_CACHE_DIR"):
        return Path(os.environ["RECONSIM_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "reconsim"


def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one inline script (no network at view time).

    vl-convert bundles the script anew on every call (1.5 s of one core, as much as the
    queries of a million-cell report), always the same text for one vl-convert and
    Vega-Lite version: it is kept in :func:`cache_dir`, named by both versions, and made
    only where the file is missing (or the folder cannot be written). Making it removes
    the bundles of other versions (about 1 MB each) from the folder."""
    version = vegalite_version()
    cached = cache_dir() / f"vega-bundle-{VL_CONVERT_VERSION}-vl{version}.js"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return cached.read_text(encoding="utf-8")
    # The stub asks for a snippet; None selects vl-convert's default one (which puts
    # vegaEmbed, vega and vegaLite on window).
    bundle: str = vl_convert.javascript_bundle(None, vl_version=version)  # type: ignore[arg-type]
    # An inline script ends at the first "</script"; the bundle must not contain one.
    bundle = bundle.replace("</script", "<\\/script")
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cached, bundle.encode())
        for old in cached.parent.glob("vega-bundle-*.js"):
            if old != cached:
                old.unlink(missing_ok=True)
    return bundle
