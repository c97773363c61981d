"""A pytest run in a subprocess, as if started from a shell: not a pytest-xdist worker.

A child started from a test inherits what pytest and pytest-xdist set in the environment
for their own run (``PYTEST_XDIST_WORKER``, ``PYTEST_CURRENT_TEST``, ...): under ``-n``,
pytest-benchmark in the child would take itself for an xdist worker and disable its
benchmarks. :func:`child_env` drops those variables and :func:`pytest_command` loads no
xdist in the child."""

from __future__ import annotations

import os
import sys

#: Set by pytest (``PYTEST_CURRENT_TEST``, ``PYTEST_VERSION``) and pytest-xdist
#: (``PYTEST_XDIST_*``) for the run they belong to.
PYTEST_RUN_VARIABLES = ("PYTEST_CURRENT_TEST", "PYTEST_VERSION")
PYTEST_RUN_PREFIXES = ("PYTEST_XDIST_",)


def child_env(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (default: this process's environment) without the variables of this pytest
    run, with ``extra`` added."""
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if name in PYTEST_RUN_VARIABLES or name.startswith(PYTEST_RUN_PREFIXES):
            del env[name]
    return env | extra


def pytest_command(*args: str) -> list[str]:
    """``python -m pytest ARGS`` with this interpreter, without xdist."""
    return [sys.executable, "-m", "pytest", "-p", "no:xdist", *args]
