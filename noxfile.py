"""Entry points for people and CI: ``nox -s tests``, ``sweep``, ``bench``, ``lint``, ``docs``
and ``dist``; ``checks`` runs what CI runs after the tests (lint, docs, quick benchmarks) in
one environment."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests"]

PYTHON = False if nox.options.default_venv_backend == "none" else None


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the test suite (property tests, golden figures, CLI, doctests) on every core
    (pytest-xdist, ``-n auto``); ``-- ARGS`` go to pytest after it: ``-- -k foo``,
    ``-- -n 0`` for one process."""
    session.install("-e", ".[test]")
    # worksteal: an idle worker takes queued tests from a busy one, so that the long ones
    # (property tests against the reference model, sweeps) do not end up on one worker.
    xdist = ["-n", "auto", "--dist", "worksteal"]
    if any(a.replace(" ", "") in ("no:xdist", "-pno:xdist") for a in session.posargs):
        xdist = []  # -p no:xdist knows no -n
    # the slowest tests named at the end, so that one creeping past its budget shows
    session.run("pytest", *xdist, "--durations=15", *session.posargs)


@nox.session(python=PYTHON)
def sweep(session: nox.Session) -> None:
    """Run a sweep and its report: ``nox -s sweep [-- SPEC] [--jobs N ...]``
    (default sweeps/default.toml); then index results/ (``results/index.html``)."""
    session.install("-e", ".")
    args = list(session.posargs)
    spec = args.pop(0) if args and not args[0].startswith("-") else "sweeps/default.toml"
    session.run("reconsim", "sweep", spec, "--report", *args)
    session.run("reconsim", "publish", "results")


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Write a sweep's report: ``nox -s report [-- DIR]`` (default results/default)."""
    session.install("-e", ".")
    sweep_dir = session.posargs[0] if session.posargs else "results/default"
    session.run("reconsim", "report", sweep_dir)
    session.run("reconsim", "publish", "results")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Run the benchmarks (all of bench/, or the files named: ``-- bench/bench_node.py``);
    JSON lands under results/bench/. ``-- ARGS`` go to pytest:
    ``-- --benchmark-compare`` compares with the last saved run (quality figures must match),
    ``-- --quality-save`` rewrites bench/quality-baseline.json after an intended change."""
    session.install("-e", ".[test]")
    run_bench(session, session.posargs)


def run_bench(session: nox.Session, args: list[str]) -> None:
    """The benchmarks in ``session``'s environment (``bench`` and ``checks``), ``args`` to
    pytest."""
    # Files or nodes under bench/ among the arguments run alone; otherwise all of bench/.
    chosen = any(a.split("::")[0].startswith("bench/") for a in args)
    session.run("pytest", *([] if chosen else ["bench"]), "-p", "no:cacheprovider",
                "--benchmark-storage=results/bench", "--benchmark-autosave",
                "--benchmark-columns=min,median,max,rounds", *args)


@nox.session(python=PYTHON)
def bench_compare(session: nox.Session) -> None:
    """Compare two runs of the controller benchmarks:
    ``nox -s bench_compare -- BASE.json HEAD.json [--markdown] [--html FILE]``; quality
    changes pass only when bench/quality-baseline.json records the head's figures."""
    session.install("-e", ".")
    args = list(session.posargs)
    if not any(a.startswith("--baseline") for a in args):
        args += ["--baseline", "bench/quality-baseline.json"]
    session.run("reconsim", "bench-compare", *args)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, the import contracts (``[tool.importlinter]``), and the lints of
    tools/: the workflows (check-jsonschema, zizmor, pinned actions, nox sessions), no
    f-string writing HTML in the page code, the templates shipped as package data."""
    session.install("-e", ".[test,lint]")
    run_lint(session)


def run_lint(session: nox.Session) -> None:
    """The lints in ``session``'s environment (``lint`` and ``checks``)."""
    session.run("ruff", "check", ".")
    session.run("mypy")
    session.run("lint-imports")
    session.run("python", "tools/check_workflows.py")
    session.run("python", "tools/check_html_fstrings.py")
    session.run("python", "tools/check_package_data.py")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the documentation site: ``nox -s docs [-- OUT]`` (default docs/_build/html).
    Sphinx with MyST Markdown pages and the furo theme; the API pages come from the
    docstrings, which already use Sphinx roles (:func:, :mod:). Warnings are errors (-W),
    all of them reported in one build (--keep-going)."""
    session.install("-e", ".[docs]")
    run_docs(session, session.posargs[0] if session.posargs else "docs/_build/html")


def run_docs(session: nox.Session, out: str) -> None:
    """The documentation site into ``out``, in ``session``'s environment (``docs`` and
    ``checks``)."""
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", out)


@nox.session(python=PYTHON)
def checks(session: nox.Session) -> None:
    """What CI runs after ``nox -s tests`` (``.ci/run``), in one environment instead of
    three: the lints, the documentation site, then the benchmarks in quick mode
    (``RECONSIM_BENCH_QUICK=1``: smaller batches, every change still compared against the
    quality baseline), each step its session's; the first that fails stops the rest. The
    benchmarks load the kernels the tests compiled into numba's cache (beside the
    sources)."""
    if session.posargs:
        session.error("nox -s checks takes no arguments: give them to its sessions "
                      "(nox -s bench -- ARGS, nox -s docs -- OUT)")
    session.install("-e", ".[test,lint,docs]")
    run_lint(session)
    run_docs(session, "docs/_build/html")
    session.env["RECONSIM_BENCH_QUICK"] = "1"
    run_bench(session, [])


@nox.session(python=PYTHON)
def dist(session: nox.Session) -> None:
    """Build the sdist and the wheel into dist/ (``python -m build``) and check them
    (``twine check --strict``): what the release workflow publishes. ``-- vX.Y.Z``, the
    release's tag, must name the version in pyproject.toml, the package's only record of it."""
    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = project["version"]
    if session.posargs and session.posargs != [f"v{version}"]:
        session.error(f"the tag {' '.join(session.posargs)} is not v{version}, the version "
                      "in pyproject.toml: tag the version it names, or change it first")
    # build and twine alone (the release extra), not reconsim and its dependencies.
    session.install(*project["optional-dependencies"]["release"])
    shutil.rmtree("dist", ignore_errors=True)
    session.run("python", "-m", "build")
    built = sorted(p.name for p in Path("dist").iterdir())
    wanted = sorted([f"reconsim-{version}.tar.gz", f"reconsim-{version}-py3-none-any.whl"])
    if built != wanted:
        session.error(f"dist/ holds {built}, not {wanted}")
    session.run("twine", "check", "--strict", *(f"dist/{name}" for name in built))
