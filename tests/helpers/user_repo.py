"""The example of a user's repository (``examples/user-repo``) as a user has it: its files
copied out of our tree, pip run offline (no index, no dependencies, this environment's
setuptools as the build backend), and commands run in the copy as a shell there would run
them, by the Python it is installed for."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.child import child_env

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "user-repo"
#: What building or running the example leaves beside its files.
LEFT_BEHIND = ("build", "*.egg-info", "__pycache__", ".nox", ".benchmarks", ".hypothesis",
               "results")


def copy_example(tree: Path) -> Path:
    """The example's files copied to ``tree`` (a build writes beside the sources)."""
    shutil.copytree(EXAMPLE, tree, ignore=shutil.ignore_patterns(*LEFT_BEHIND))
    return tree


def pip(command: str, *args: str, python: Path | None = None) -> None:
    """``pip COMMAND ARGS`` offline, with this environment's pip, for ``python``'s
    environment when given; pip's output is the failure's message."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", *(["--python", str(python)] if python else []),
         command, "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "--disable-pip-version-check", *args],
        env=child_env(), capture_output=True, text=True, check=False)
    assert done.returncode == 0, (
        f"pip {command} failed offline (setuptools >= 70.1 builds a wheel without the wheel "
        "package; pip install -e '.[test]'):\n" + done.stdout + done.stderr)


class UserRepo:
    """A copy of the example (its working tree), the folder it is installed in, and the
    Python that runs it: this test run's, which finds that folder through PYTHONPATH, or a
    virtual environment's, which finds everything it imports by itself."""

    def __init__(self, tree: Path, site: Path, python: Path = Path(sys.executable)) -> None:
        self.tree = tree
        self.site = site
        self.python = python

    def env(self, installed: bool = True) -> dict[str, str]:
        """This test run's environment, with ``site`` first on the path (or not at all,
        ``installed`` False: a process that cannot import the example); a virtual
        environment's Python gets no PYTHONPATH."""
        env = child_env()
        paths = [p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p]
        if self.python != Path(sys.executable):
            return env
        return env | {"PYTHONPATH": os.pathsep.join(
            [str(self.site), *paths] if installed else paths)}

    def run(self, *args: str, installed: bool = True) -> subprocess.CompletedProcess[str]:
        """``args`` in the example's folder, as a shell there would run them."""
        return subprocess.run(args, cwd=self.tree, env=self.env(installed),
                              capture_output=True, text=True, check=False, timeout=600)

    def reconsim(self, *args: str, installed: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.python), "-m", "reconsim", *args, installed=installed)

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The example's own pytest run (no xdist, no cache left in the copy)."""
        return self.run(str(self.python), "-m", "pytest", "-p", "no:xdist", "-p",
                        "no:cacheprovider", "-q", *args)
