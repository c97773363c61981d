"""Checks that must fail, not skip: the browser test under CI, a benchmark without baseline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_run(*args: str, ci: bool) -> subprocess.CompletedProcess[str]:
    """Run pytest in a subprocess whose PATH holds only this Python's folder (no Chromium)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = str(Path(sys.executable).parent)
    if ci:
        env["CI"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-o", "addopts=", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)


@pytest.mark.parametrize("ci", [False, True], ids=["local", "CI"])
def test_missing_chromium_fails_under_ci_and_skips_locally(ci: bool) -> None:
    proc = pytest_run("tests/test_report_browser.py", "-k", "renders", "-rsf", ci=ci)
    if ci:
        assert proc.returncode == 1, proc.stdout
        assert "2 failed" in proc.stdout
        assert "CI is set and no chromium binary on PATH" in proc.stdout
    else:
        assert proc.returncode == 0, proc.stdout
        assert "2 skipped" in proc.stdout


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
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
         "bench/bench_controllers.py", "-k", "ledger-cap2", f"--quality-baseline={path}"],
        cwd=ROOT, env={**os.environ, "RECONSIM_BENCH_QUICK": "1"}, capture_output=True,
        text=True, check=False)
    if baseline == "committed":
        assert proc.returncode == 0, proc.stdout
    else:
        assert proc.returncode == 1, proc.stdout
        assert "test_variant[ledger-cap2]: no quality baseline entry" in proc.stdout
