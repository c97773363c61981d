"""Saved runs of the controller benchmarks: ``tests/data/bench-base.json`` and
``bench-head.json`` are two real quick runs of ``bench/bench_controllers.py``
(``--benchmark-json``); changed and saved copies are made from them here."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
BASE, HEAD = DATA / "bench-base.json", DATA / "bench-head.json"
MACHINE_ID = "Linux-CPython-3.11-64bit"


def changed_run(tmp_path: Path, variant: str, figure: str, delta: int) -> Path:
    """A copy of the head run with one quality figure of one variant moved by ``delta``."""
    doc = json.loads(HEAD.read_text())
    for b in doc["benchmarks"]:
        if b["name"] == f"test_variant[{variant}]":
            b["extra_info"]["quality"][figure] += delta
    out = tmp_path / "head-changed.json"
    out.write_text(json.dumps(doc))
    return out


def saved_run(results: Path, n: int, commit: str, time: str | None, *, node: str = "vm",
              changes: dict[tuple[str, str], int] | None = None, dirty: bool = False,
              ran: str | None = None) -> Path:
    """Save a copy of the base run as ``nox -s bench`` autosaves it, under
    ``results/bench/<machine-id>/NNNN_<commit>.json``: from host ``node``, at ``commit``
    (committed at ``time``; None outside git), with quality figures moved by ``changes``
    ((variant, figure) -> delta)."""
    doc = json.loads(BASE.read_text())
    doc["machine_info"]["node"] = node
    doc["commit_info"].update(id=commit, time=time, dirty=dirty)
    doc["datetime"] = ran or f"2026-12-{n:02d}T08:00:00+00:00"
    for b in doc["benchmarks"]:
        for (variant, figure), delta in (changes or {}).items():
            if b["name"] == f"test_variant[{variant}]":
                b["extra_info"]["quality"][figure] += delta
    path = results / "bench" / MACHINE_ID / f"{n:04d}_{commit[:8]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path
