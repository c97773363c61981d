"""Where a sweep's output is read from: a local folder, a ``file://`` URL, or object storage.

The table (``data/*.parquet``) is scanned lazily by polars' own readers, which read local
files and, natively, object stores (``s3://``, ``gs://``, ``az://`` and their aliases),
taking credentials from the environment as the cloud's own tools do. ``sweep.json`` is
one small file; on object storage it is read through fsspec and the store's fsspec
package (``s3fs``, ``gcsfs``, ``adlfs``), which must then be installed. Any other URL is
refused with one line naming it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

import polars as pl

from reconsim.errors import ReconsimError


class ReportError(ReconsimError, ValueError):
    """A sweep directory the report cannot read: the message names the path and the problem."""


#: Object-store URL schemes polars scans natively -> the fsspec package that reads
#: ``sweep.json`` there.
OBJECT_STORES: Final = {
    "s3": "s3fs", "s3a": "s3fs",
    "gs": "gcsfs", "gcs": "gcsfs",
    "az": "adlfs", "abfs": "adlfs", "abfss": "adlfs", "adl": "adlfs",
}


@dataclass(frozen=True)
class SweepSource:
    """A sweep's output directory: a local ``path``, or a ``url`` on object storage."""

    path: Path | None = None
    url: str | None = None

    @classmethod
    def parse(cls, where: str | Path) -> SweepSource:
        """A local path, a ``file://`` URL or an object-store URL; anything else is refused.

        >>> SweepSource.parse("file:///tmp/sweep").path
        PosixPath('/tmp/sweep')
        >>> SweepSource.parse("results/default").path
        PosixPath('results/default')
        """
        if isinstance(where, Path):
            return cls(path=where)
        parts = urlsplit(where)
        scheme = parts.scheme.lower()
        # One letter before a colon is a Windows drive, not a scheme.
        if not scheme or len(scheme) == 1 or "://" not in where:
            return cls(path=Path(where))
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise ReportError(f"{where}: a file:// URL must name a local path "
                                  f"(host {parts.netloc!r} is not this machine)")
            return cls(path=Path(url2pathname(unquote(parts.path))))
        if scheme in OBJECT_STORES:
            return cls(url=where.rstrip("/"))
        supported = ", ".join(f"{s}://" for s in ("file", *OBJECT_STORES))
        raise ReportError(f"{where}: unsupported URL scheme {scheme!r} (a local path or "
                          f"{supported})")

    @property
    def remote(self) -> bool:
        """Whether the directory is on object storage (the report's files go elsewhere)."""
        return self.url is not None

    def name(self, relative: str) -> str:
        """A file or folder of the directory, as messages show it."""
        return f"{self.url}/{relative}" if self.url is not None else str(self.local / relative)

    @property
    def local(self) -> Path:
        """The local folder (only for a local directory)."""
        assert self.path is not None
        return self.path

    def read_meta(self) -> dict[str, Any]:
        """``sweep.json``, parsed; :class:`ReportError` naming it when absent or unreadable."""
        where = self.name("sweep.json")
        try:
            text = (self._read_remote(where) if self.url is not None
                    else self.local.joinpath("sweep.json").read_text(encoding="utf-8"))
            meta = json.loads(text)
        except FileNotFoundError:
            raise ReportError(f"{where}: no such file (is {self.url or self.local} a "
                              "sweep's output?)") from None
        except (OSError, ValueError) as exc:
            raise ReportError(f"{where}: unreadable: {exc}") from None
        if not isinstance(meta, dict):
            raise ReportError(f"{where}: expected a JSON object")
        return meta

    def _read_remote(self, url: str) -> str:
        """One small text file on object storage, through fsspec."""
        scheme = url.split("://", 1)[0].lower()
        package = OBJECT_STORES[scheme]
        try:
            import fsspec  # type: ignore[import-untyped]

            fsspec.get_filesystem_class(scheme)
        except ImportError:
            raise ReportError(f"{url}: reading a sweep on {scheme}:// needs the packages "
                              f"fsspec and {package} (pip install fsspec {package})") from None
        with fsspec.open(url, "rt", encoding="utf-8") as f:
            text: str = f.read()
        return text

    def scan_parts(self) -> pl.LazyFrame:
        """A lazy scan of every ``data/*.parquet``, in name order; :class:`ReportError` when
        there is none."""
        if self.url is not None:
            # polars lists and orders the parts itself (glob on the object store).
            return pl.scan_parquet(f"{self.url}/data/*.parquet")
        return pl.scan_parquet(self.part_files())

    def part_files(self) -> list[Path]:
        """Every local ``data/*.parquet``, in name order; :class:`ReportError` when there is
        none."""
        parts = sorted((self.local / "data").glob("*.parquet"))
        if not parts:
            raise ReportError(f"{self.local / 'data'}: no *.parquet files")
        return parts
