"""The CI workflows users copy: valid GitHub workflows, free of zizmor's medium and high
findings, and running only nox sessions this project has."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def tool(name: str) -> str:
    """A command-line tool of the test extra: beside this interpreter, or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def test_the_workflows_exist() -> None:
    assert [p.name for p in WORKFLOWS] == ["bench.yml", "ci.yml"]


def test_workflows_follow_the_github_schema() -> None:
    done = subprocess.run([tool("check-jsonschema"), "--builtin-schema",
                           "vendor.github-workflows", *map(str, WORKFLOWS)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_of_medium_or_high_severity() -> None:
    done = subprocess.run([tool("zizmor"), "--offline", "--format", "json",
                           "--min-severity", "medium", str(ROOT / ".github" / "workflows")],
                          capture_output=True, text=True, check=False)
    findings = json.loads(done.stdout)
    assert findings == [], [(f["ident"], f["determinations"]["severity"]) for f in findings]
    assert done.returncode == 0, done.stderr


def test_a_bad_workflow_is_caught_by_both_checks(tmp_path: Path) -> None:
    """The checks can fail: an unpinned action with persisted credentials, an unknown key."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - uses: actions/checkout@v4\n        colour: red\n", encoding="utf-8")
    schema = subprocess.run([tool("check-jsonschema"), "--builtin-schema",
                             "vendor.github-workflows", str(bad)],
                            capture_output=True, text=True, check=False)
    assert schema.returncode != 0
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                   "      - uses: actions/checkout@v4\n", encoding="utf-8")
    zizmor = subprocess.run([tool("zizmor"), "--offline", "--format", "json",
                             "--min-severity", "medium", str(bad)],
                            capture_output=True, text=True, check=False)
    assert {f["ident"] for f in json.loads(zizmor.stdout)} >= {"artipacked"}


def test_workflows_run_only_nox_sessions_of_this_project() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    sessions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                and any("session" in ast.unparse(d) for d in f.decorator_list)}
    used = {m for p in WORKFLOWS for m in re.findall(r"nox -s (\w+)", p.read_text())}
    assert used == {"tests", "lint", "bench", "bench_compare", "sweep"}
    assert used <= sessions


def test_actions_are_pinned_to_full_commits() -> None:
    for p in WORKFLOWS:
        for ref in re.findall(r"uses:\s*(\S+)", p.read_text()):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), (p.name, ref)
