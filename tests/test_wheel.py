"""reconsim's wheel, as a user's repository gets it: built offline from a copy of the files
it is made from, installed with the example of a user's repository (``examples/user-repo``)
into a fresh virtual environment outside our tree, where the example's own tests, a sweep
of its spec and the sweep's report run against the installed wheel alone: the templates
and the conformance data must have shipped in it.

The fresh environment installs no dependency from an index: a ``.pth`` file names this
environment's site-packages, which Python adds to the path without running the ``.pth``
files found there, so the editable install of reconsim that this environment may hold (a
``.pth`` file and its import finder) is not inherited.

The installed package starts with the machine code numba cached for this tree's kernels
(:func:`share_compiled_kernels`): numba keys each cache entry by its source file's content
(a numba that keys it by the file's time takes none, and compiles as before), so an entry
is taken only where the wheel's file is this tree's, byte for byte, and the example's tests
compile only what this tree has not compiled yet: on the 2-core development machine they
took 25 s compiling everything, 4 s with this tree's kernels.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import tomllib
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.helpers.user_repo import EXAMPLE, ROOT, UserRepo, copy_example, pip

#: The files the wheel is built from: pyproject.toml names the readme and the package.
SOURCES = ("pyproject.toml", "README.md", "reconsim")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]


#: The files of numba's disk cache: an index per compiled function and its machine code.
NUMBA_CACHE = ("*.nbi", "*.nbc")


def share_compiled_kernels(package: Path, installed: Path) -> None:
    """Link (else copy) every file of numba's disk cache under ``package`` to the same place
    under ``installed``. numba reads an entry only where the source file beside it hashes as
    the entry records, and writes its own entries by replacing files, never through them,
    so neither tree can change the other's."""
    for pattern in NUMBA_CACHE:
        for cached in package.rglob(f"__pycache__/{pattern}"):
            target = installed / cached.relative_to(package)
            if not target.parent.parent.is_dir():  # a folder the wheel does not ship
                continue
            target.parent.mkdir(exist_ok=True)
            try:
                target.hardlink_to(cached)
            except FileExistsError:
                continue
            except OSError:  # another file system
                shutil.copy2(cached, target)


def package_data(package: Path) -> set[str]:
    """The files of ``package``'s templates folders and data sets, relative to it."""
    folders = [*package.rglob("templates"), *package.glob("**/data/*")]
    return {f.relative_to(package).as_posix() for folder in folders if folder.is_dir()
            for f in folder.rglob("*") if f.is_file()}


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory: pytest.TempPathFactory) -> UserRepo:
    """reconsim's wheel and the example's, built offline from copies, installed into a
    fresh virtual environment, which then finds their dependencies in this environment."""
    base = tmp_path_factory.mktemp("wheel")
    ours = base / "reconsim"
    ours.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, ours / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))
        else:
            shutil.copy2(ROOT / name, ours / name)
    tree = copy_example(base / "acme")
    pip("wheel", "--wheel-dir", str(base / "dist"), str(ours), str(tree))
    venv.create(base / "venv", symlinks=True)
    python = base / "venv" / "bin" / "python"
    # Installed while the environment sees nothing else: pip finds no reconsim to replace.
    pip("install", *map(str, sorted((base / "dist").glob("*.whl"))), python=python)
    where = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path("
                            "'purelib'))"], capture_output=True, text=True, check=True)
    installed = Path(where.stdout.strip())
    share_compiled_kernels(ROOT / "reconsim", installed / "reconsim")
    (installed / "dependencies.pth").write_text(
        "".join(f"{p}\n" for p in site.getsitepackages()), encoding="utf-8")
    return UserRepo(tree, installed, python)


def test_reconsim_is_the_installed_wheel(user_repo: UserRepo) -> None:
    done = user_repo.run(str(user_repo.python), "-c", (
        "import importlib.metadata, json, pathlib, sys, reconsim\n"
        "package = pathlib.Path(reconsim.__file__).parent\n"
        "from reconsim.conformance.load import load\n"
        "print(json.dumps({'package': str(package), 'path': sys.path,\n"
        "    'finders': [getattr(f, '__module__', '') for f in sys.meta_path],\n"
        "    'version': importlib.metadata.version('reconsim'),\n"
        "    'scenarios': len(load().scenarios)}))"))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    package = Path(found["package"])
    assert package.parent == user_repo.site, package
    assert str(ROOT) not in found["path"]
    assert not [f for f in found["finders"] if f.startswith("__editable__")]
    assert found["version"] == VERSION
    # The package data, file for file, and the conformance data set read from it.
    assert package_data(package) == package_data(ROOT / "reconsim")
    assert found["scenarios"] == 400


def test_the_example_depends_on_this_version_by_a_range() -> None:
    """The example, a template users copy, asks for the release it is written for."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text("utf-8"))["project"]
    (wanted,) = (r for r in map(Requirement, project["dependencies"]) if r.name == "reconsim")
    assert {s.operator for s in wanted.specifier} == {">=", "<"}, wanted
    assert wanted.specifier.contains(VERSION), (
        f"{wanted}: not reconsim {VERSION}; raise the range in "
        "examples/user-repo/pyproject.toml with the version")


def test_the_examples_own_tests_pass(user_repo: UserRepo) -> None:
    done = user_repo.pytest("tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout, done.stdout


def test_the_examples_sweep_and_its_report(user_repo: UserRepo) -> None:
    """Through the ``reconsim`` command the wheel installs, as the example's README runs it."""
    out = user_repo.tree / "results" / "acme"
    done = user_repo.run(str(user_repo.python.parent / "reconsim"), "sweep", "sweeps/acme.toml",
                         "--out", str(out), "--jobs", "2", "--no-progress", "--report")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert manifest["version"] == VERSION
    assert manifest["model"]["controllers"] == ["patient@1.0"]
    assert manifest["cells"] == 48
    assert (out / "report.html").stat().st_size > 0
