"""nox -s tests, nox -s bench, and what the pull-request workflow runs after them."""

import json
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests"]

BASELINE = Path("bench/quality-baseline.json")


@nox.session
def tests(session):
    """The tests (reconsim's checker on the controller, and what it does)."""
    session.install(".[test]")
    session.run("pytest", *session.posargs)


@nox.session
def bench(session):
    """The benchmarks: ``-- --benchmark-json=FILE`` saves the run to compare."""
    session.install(".[test]")
    session.run("pytest", "bench", "-p", "no:cacheprovider",
                "--benchmark-columns=min,median,max,rounds", *session.posargs)


@nox.session
def bench_compare(session):
    """Compare two runs: ``-- BASE.json HEAD.json [--markdown]`` (reconsim bench-compare).

    A figure that changed passes only when bench/quality-baseline.json records the head's."""
    session.install(".")
    session.run("reconsim", "bench-compare", "--baseline", str(BASELINE), *session.posargs)


@nox.session(python=False)
def bench_record(session):
    """Record a run's figures as the baseline: ``-- RUN.json`` (after a meant change)."""
    (path,) = session.posargs
    run = json.loads(Path(path).read_text(encoding="utf-8"))
    figures = {b["name"]: {"quality": b["extra_info"]["quality"]} for b in run["benchmarks"]
               if "quality" in b.get("extra_info", {})}
    BASELINE.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    session.log(f"{BASELINE}: {len(figures)} benchmarks recorded")
