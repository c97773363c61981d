"""Every test's reconsim cache (the page's script bundle) lives in one folder of the test
run, shared by its pytest-xdist workers, not in the user's ~/.cache; numba's cache of the
kernels is filled before the workers start (:mod:`tests.helpers.kernels`); the ``browser``
marker's rule."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.helpers import kernels
from tests.helpers.browser import require_chromium


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("RECONSIM_CACHE_DIR")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Each worker's basetemp is a folder of the run's: the bundle is made once a run
        # (written atomically, so two workers making it at once is harmless).
        cache = tmp_path_factory.getbasetemp().parent / "cache"
        cache.mkdir(exist_ok=True)
    else:
        cache = tmp_path_factory.mktemp("cache")
    os.environ["RECONSIM_CACHE_DIR"] = str(cache)
    yield
    if before is None:
        del os.environ["RECONSIM_CACHE_DIR"]
    else:
        os.environ["RECONSIM_CACHE_DIR"] = before


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist, before the workers start: compile the kernels into numba's cache
    once, one process per kernel (:mod:`tests.helpers.kernels`), so that the workers and
    the processes tests start load them instead of each compiling them again."""
    if session.config.pluginmanager.getplugin("dsession") is not None:
        kernels.wait(kernels.start())


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """A test marked ``browser`` without a Chromium binary: skipped locally with the install
    hint, failed where ``CI`` is set (:func:`tests.helpers.browser.require_chromium`)."""
    if pyfuncitem.get_closest_marker("browser") is not None:
        require_chromium()
