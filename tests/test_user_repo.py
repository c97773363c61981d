"""The user repository example (``examples/user-repo``), through the path a user takes:
pip installs the package (offline: no dependencies, this environment's setuptools as the
build backend) into a folder of its own, and every step then runs in a fresh process that
finds the controller only through that installation's entry point: its short name, its own
tests, ``reconsim check-controller``, a sweep of its spec and the report of that sweep.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.user_repo import EXAMPLE, UserRepo, copy_example, pip


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory: pytest.TempPathFactory) -> UserRepo:
    """The example, copied (a build writes beside the sources) and installed offline."""
    base = tmp_path_factory.mktemp("user-repo")
    tree, site = copy_example(base / "acme"), base / "site"
    pip("install", "--target", str(site), str(tree))
    return UserRepo(tree, site)


def test_the_controller_is_found_by_its_short_name(user_repo: UserRepo) -> None:
    done = user_repo.run(sys.executable, "-c", (
        "from reconsim.controllers import resolve\n"
        "from reconsim.model.controllers import registry\n"
        "import acme_controllers\n"
        "c = resolve('patient')\n"
        "print(c.identity, registry.named_by('patient'), acme_controllers.__file__)"))
    assert done.returncode == 0, done.stderr
    identity, named_by, module = done.stdout.split()
    assert identity == "patient@1.0"
    assert named_by == "reconsim.controllers:patient"
    assert Path(module).is_relative_to(user_repo.site)  # the installed copy, not src/


def test_the_examples_own_tests_pass(user_repo: UserRepo) -> None:
    done = user_repo.pytest("tests/test_controller.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout, done.stdout


def test_check_controller_passes_by_short_name(user_repo: UserRepo) -> None:
    done = user_repo.reconsim("check-controller", "patient", "--examples", "20")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("patient: 20 cells agree on every metric"), done.stdout


def test_the_examples_sweep_and_its_report(user_repo: UserRepo) -> None:
    out = user_repo.tree / "results" / "acme"
    done = user_repo.reconsim("sweep", "sweeps/acme.toml", "--out", str(out), "--jobs", "2",
                              "--no-progress")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert manifest["model"]["controllers"] == ["patient@1.0"]
    table = user_repo.run(sys.executable, "-c", (
        "import polars as pl, reconsim, sys\n"
        "t = reconsim.scan(sys.argv[1]).group_by('controller').agg(\n"
        "    pl.len(), pl.col('patience').unique().sort()).sort('controller').collect()\n"
        "print(t.rows())"), str(out), installed=False)
    assert table.returncode == 0, table.stderr
    assert table.stdout.strip() == "[('intent', 12, [None]), ('patient', 36, [0, 3, 10])]"
    # Reading a sweep imports nothing it names: the report is made where the package is not.
    done = user_repo.reconsim("report", str(out), installed=False)
    assert done.returncode == 0, done.stderr
    assert (out / "report.html").stat().st_size > 0


def test_the_benchmark_gives_the_committed_baseline(user_repo: UserRepo) -> None:
    """The figures its pull-request workflow compares: a run's, against the baseline
    the example commits, through ``reconsim bench-compare`` as the workflow calls it."""
    run = user_repo.tree / "head.json"
    done = user_repo.pytest("bench", f"--benchmark-json={run}")
    assert done.returncode == 0, done.stdout + done.stderr
    benchmarks = json.loads(run.read_text(encoding="utf-8"))["benchmarks"]
    figures = {b["name"]: {"quality": b["extra_info"]["quality"]} for b in benchmarks}
    baseline = json.loads((EXAMPLE / "bench" / "quality-baseline.json").read_text("utf-8"))
    assert figures == baseline, ("the example's figures changed: record them with "
                                 "nox -s bench_record -- HEAD.json in examples/user-repo")
    done = user_repo.reconsim("bench-compare", str(run), str(run), "--baseline",
                              "bench/quality-baseline.json", "--markdown")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Quality figures: identical on all 4 variants." in done.stdout
