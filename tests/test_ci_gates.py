"""Checks that must fail, not skip: the browser test under CI, a benchmark without baseline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.child import child_env, pytest_command

ROOT = Path(__file__).resolve().parent.parent
#: Every module of tests that render in headless Chromium, and how many tests each holds.
BROWSER_TESTS = {"tests/test_report_browser.py": 2, "tests/test_pages_browser.py": 2,
                 "tests/test_history_browser.py": 1}


def pytest_run(*args: str, ci: bool) -> subprocess.CompletedProcess[str]:
    """Run pytest in a subprocess whose PATH holds only this Python's folder (no Chromium)."""
    env = {k: v for k, v in child_env(PATH=str(Path(sys.executable).parent)).items()
           if k != "CI"}
    if ci:
        env["CI"] = "1"
    return subprocess.run(pytest_command("-p", "no:cacheprovider", "-q", "-o", "addopts=",
                                         *args), cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize("ci", [False, True], ids=["local", "CI"])
def test_missing_chromium_fails_under_ci_and_skips_locally(ci: bool) -> None:
    """Every browser test, one rule: failed under CI, skipped with the install hint locally
    (and none of them runs, or passes, some other way)."""
    proc = pytest_run(*BROWSER_TESTS, "-rsf", ci=ci)
    n = sum(BROWSER_TESTS.values())
    why = "no chromium binary on PATH (apt-get install -y chromium)"
    if ci:
        assert proc.returncode == 1, proc.stdout
        assert re.search(rf"^{n} failed in ", proc.stdout, re.MULTILINE), proc.stdout
        failed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
        assert len(failed) == n, proc.stdout
        assert all(line.endswith(f"Failed: CI is set and {why}") for line in failed), failed
    else:
        assert proc.returncode == 0, proc.stdout
        assert re.search(rf"^{n} skipped in ", proc.stdout, re.MULTILINE), proc.stdout
        assert why in proc.stdout


@pytest.mark.parametrize("baseline", ["committed", "without-entry"])
def test_benchmark_without_baseline_entry_fails(tmp_path: Path, baseline: str) -> None:
    committed = ROOT / "bench" / "quality-baseline.json"
    path = committed
    if baseline == "without-entry":
        entries = json.loads(committed.read_text())
        del entries["test_variant[ledger-cap2]"]
        path = tmp_path / "baseline.json"
        path.write_text(json.dumps(entries))
    proc = subprocess.run(
        pytest_command("-p", "no:cacheprovider", "-q", "-o", "addopts=",
                       "bench/bench_controllers.py", "-k", "ledger-cap2",
                       f"--quality-baseline={path}"),
        cwd=ROOT, env=child_env(RECONSIM_BENCH_QUICK="1"), capture_output=True,
        text=True, check=False)
    if baseline == "committed":
        assert proc.returncode == 0, proc.stdout
    else:
        assert proc.returncode == 1, proc.stdout
        assert "test_variant[ledger-cap2]: no quality baseline entry" in proc.stdout
