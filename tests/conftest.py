"""Every test's reconsim cache (the page's script bundle) lives in one folder of the test
session, not in the user's ~/.cache; the ``browser`` marker's rule; and what several test
modules build once per session (each xdist worker builds its own)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.helpers.browser import require_chromium


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("RECONSIM_CACHE_DIR")
    os.environ["RECONSIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        del os.environ["RECONSIM_CACHE_DIR"]
    else:
        os.environ["RECONSIM_CACHE_DIR"] = before


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """A test marked ``browser`` without a Chromium binary: skipped locally with the install
    hint, failed where ``CI`` is set (:func:`tests.helpers.browser.require_chromium`)."""
    if pyfuncitem.get_closest_marker("browser") is not None:
        require_chromium()
