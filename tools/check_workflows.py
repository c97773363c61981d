"""Lint the CI workflows users copy (``nox -s lint``): valid GitHub workflows, free of
zizmor's medium and high findings, running only nox sessions this project has, with every
action pinned to a full commit; and first, that both checks do catch a bad workflow.

Exit 0 when all hold; otherwise 1, each failed check named on stderr.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


class CheckError(Exception):
    """A check that does not hold; its message says why."""


def require(condition: bool, message: object) -> None:
    if not condition:
        raise CheckError(str(message))


def tool(name: str) -> str:
    """A command-line tool of the lint extra: beside this interpreter, or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise CheckError(f"{name} is not installed: pip install -e '.[lint]'")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


def schema(*paths: Path) -> subprocess.CompletedProcess[str]:
    return run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
               *map(str, paths))


def zizmor(path: Path) -> subprocess.CompletedProcess[str]:
    return run(tool("zizmor"), "--offline", "--format", "json", "--min-severity", "medium",
               str(path))


def the_workflows_exist() -> None:
    require([p.name for p in WORKFLOWS] == ["bench.yml", "ci.yml"],
            [p.name for p in WORKFLOWS])


def a_bad_workflow_is_caught_by_both_checks() -> None:
    """The checks can fail: an unpinned action with persisted credentials, an unknown key."""
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.yml"
        bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                       "      - uses: actions/checkout@v4\n        colour: red\n",
                       encoding="utf-8")
        require(schema(bad).returncode != 0, "check-jsonschema passed an unknown key")
        bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
                       "      - uses: actions/checkout@v4\n", encoding="utf-8")
        found = {f["ident"] for f in json.loads(zizmor(bad).stdout)}
        require(found >= {"artipacked"}, f"zizmor found {found}, not artipacked")


def workflows_follow_the_github_schema() -> None:
    done = schema(*WORKFLOWS)
    require(done.returncode == 0, done.stdout + done.stderr)


def zizmor_finds_nothing_of_medium_or_high_severity() -> None:
    done = zizmor(ROOT / ".github" / "workflows")
    findings = json.loads(done.stdout)
    require(findings == [],
            [(f["ident"], f["determinations"]["severity"]) for f in findings])
    require(done.returncode == 0, done.stderr)


def workflows_run_only_nox_sessions_of_this_project() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    sessions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                and any("session" in ast.unparse(d) for d in f.decorator_list)}
    used = {m for p in WORKFLOWS for m in re.findall(r"nox -s (\w+)", p.read_text())}
    require(used == {"tests", "lint", "bench", "bench_compare", "sweep"}, used)
    require(used <= sessions, used - sessions)


def actions_are_pinned_to_full_commits() -> None:
    for p in WORKFLOWS:
        for ref in re.findall(r"uses:\s*(\S+)", p.read_text()):
            require(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref) is not None,
                    (p.name, ref))


CHECKS: list[Callable[[], None]] = [
    the_workflows_exist,
    a_bad_workflow_is_caught_by_both_checks,
    workflows_follow_the_github_schema,
    zizmor_finds_nothing_of_medium_or_high_severity,
    workflows_run_only_nox_sessions_of_this_project,
    actions_are_pinned_to_full_commits,
]


def main() -> int:
    failed = 0
    for check in CHECKS:
        try:
            check()
        except CheckError as exc:
            failed += 1
            print(f"{check.__name__}: {exc}", file=sys.stderr)
    print(f"workflows: {len(CHECKS) - failed} of {len(CHECKS)} checks hold "
          f"({', '.join(p.name for p in WORKFLOWS)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
