"""Every test's reconsim cache (the page's script bundle) lives in one folder of the test
session, not in the user's ~/.cache."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    before = os.environ.get("RECONSIM_CACHE_DIR")
    os.environ["RECONSIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if before is None:
        del os.environ["RECONSIM_CACHE_DIR"]
    else:
        os.environ["RECONSIM_CACHE_DIR"] = before
