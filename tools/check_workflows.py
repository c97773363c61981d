"""Lint the CI workflows users copy (``nox -s lint``): ours and the user repository's
example (``examples/user-repo``): valid GitHub workflows, free of zizmor's medium and high
findings, each running only nox sessions of its own repository's noxfile, with every action
pinned to a full commit (the example to the same commits as ours); and first, that both
checks do catch a bad workflow.

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
#: The example of a user's own repository, with a workflow of its own.
USER_REPO = ROOT / "examples" / "user-repo"
#: Each repository's workflows, by the folder that holds its noxfile.
REPOS = {repo: sorted((repo / ".github" / "workflows").glob("*.yml"))
         for repo in (ROOT, USER_REPO)}
WORKFLOWS = [p for found in REPOS.values() for p in found]
#: The nox sessions each repository's workflows run or name (the example's comment tells
#: how to record a baseline), no more and no fewer.
SESSIONS_NAMED = {ROOT: {"tests", "lint", "bench", "bench_compare", "sweep", "docs", "dist"},
                  USER_REPO: {"bench", "bench_compare", "bench_record"}}


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


def zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    return run(tool("zizmor"), "--offline", "--format", "json", "--min-severity", "medium",
               *map(str, paths))


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT))


def the_workflows_exist() -> None:
    require([shown(p) for p in WORKFLOWS] == [
        ".github/workflows/bench.yml", ".github/workflows/ci.yml",
        ".github/workflows/release.yml", "examples/user-repo/.github/workflows/bench.yml"],
        [shown(p) for p in WORKFLOWS])


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
    done = zizmor(*(repo / ".github" / "workflows" for repo in REPOS))
    findings = json.loads(done.stdout)
    require(findings == [],
            [(f["ident"], f["determinations"]["severity"]) for f in findings])
    require(done.returncode == 0, done.stderr)


def nox_sessions(noxfile: Path) -> set[str]:
    """The sessions a noxfile defines: its functions decorated with ``nox.session``."""
    tree = ast.parse(noxfile.read_text(encoding="utf-8"))
    return {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
            and any("session" in ast.unparse(d) for d in f.decorator_list)}


def workflows_run_only_nox_sessions_of_their_repository() -> None:
    for repo, workflows in REPOS.items():
        sessions = nox_sessions(repo / "noxfile.py")
        used = {m for p in workflows for m in re.findall(r"nox -s (\w+)", p.read_text())}
        require(used == SESSIONS_NAMED[repo], (shown(repo / "noxfile.py"), used))
        require(used <= sessions, (shown(repo / "noxfile.py"), used - sessions))


def actions(path: Path) -> list[str]:
    """Every ``uses:`` of a workflow: ``owner/name@ref``."""
    return re.findall(r"uses:\s*(\S+)", path.read_text(encoding="utf-8"))


def actions_are_pinned_to_full_commits() -> None:
    for p in WORKFLOWS:
        for ref in actions(p):
            require(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref) is not None,
                    (shown(p), ref))


def the_example_pins_the_commits_we_pin() -> None:
    """A user copies the example's pins: they are ours, reviewed once, never drifting."""
    ours = {ref for p in REPOS[ROOT] for ref in actions(p)}
    for p in REPOS[USER_REPO]:
        require(set(actions(p)) <= ours, (shown(p), set(actions(p)) - ours))


CHECKS: list[Callable[[], None]] = [
    the_workflows_exist,
    a_bad_workflow_is_caught_by_both_checks,
    workflows_follow_the_github_schema,
    zizmor_finds_nothing_of_medium_or_high_severity,
    workflows_run_only_nox_sessions_of_their_repository,
    actions_are_pinned_to_full_commits,
    the_example_pins_the_commits_we_pin,
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
          f"({', '.join(shown(p) for p in WORKFLOWS)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
