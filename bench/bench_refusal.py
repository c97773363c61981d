"""How long ``reconsim sweep`` and ``reconsim run`` take to refuse hostile input: the
fuzzer's hostile kinds (``tests/test_fuzz.py``: deep nesting, huge lists and event lists,
huge numbers, a cut document) at its largest sizes, and numbers that imply grids and runs
far too large to simulate.

A refusal slower than its budget fails: a few seconds on a busy 2-core machine
(``REFUSAL_SECONDS``), plus ``SECONDS_PER_MB`` of input, since reading TOML is linear in the
text (tomllib, pure Python, reads ~0.7 MB/s here), whereas a refusal must not grow with the
sizes the numbers imply. The fastest round is held to it. (The test suite checks,
deterministically, that no refusal simulates anything first.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.conftest import QUICK
from reconsim.cli import main
from reconsim.model.params import MAX_EVENTS, MAX_SECONDS
from tests.helpers.hostile import hostile_text, toml_document

REFUSAL_SECONDS = 5.0
SECONDS_PER_MB = 5.0
#: As in the fuzzer: the cells a sweep may run.
MAX_CELLS = 40
ROUNDS = 1 if QUICK else 5

#: A small valid spec, made hostile below.
BASE: dict[str, Any] = {"name": "refusal", "grid": {"G": [0, 5], "U": [5, 15]},
                        "schedule": {"s0": {"events": [[100, 2]]}}}

SPECS: dict[str, str] = {
    **{f"{how}-{size}": hostile_text(BASE, how, size)
       for how in ("nested", "inline", "huge-list", "huge-events", "digits")
       for size in (MAX_EVENTS + 1, 100_001)},
    "cut": hostile_text(BASE, "cut", 40),
    "range-1e15": toml_document(BASE | {"grid": {"U": {"from": 1, "to": 10**15}}}),
    # each axis as long as an axis may be: about 10^18 cells, refused by their count
    "cells-1e18": toml_document(BASE | {"grid": {
        "G": {"from": 0, "to": MAX_SECONDS}, "U": {"from": 1, "to": MAX_SECONDS + 1},
        "B": {"from": 0, "to": MAX_SECONDS}}}),
    "G-int64": toml_document(BASE | {"grid": {"G": 2**63 - 1, "U": 1}}),
    "duration-over": toml_document(BASE | {"grid": {"duration": MAX_SECONDS + 1}}),
    "desired-huge": toml_document(BASE | {"grid": {"desired": 2**62}}),
}

RUNS: dict[str, list[str]] = {
    "duration-over": ["run", "--duration", str(MAX_SECONDS + 1)],
    "desired-huge": ["run", "--desired", str(2**62), "--json"],
    "U-5000-digits": ["run", "--U", "1" * 5000],
    "deaths-huge": ["run", "--deaths", f"0:{2**63}"],
}


def refuse(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``argv``; it must be refused in one line (exit 2). Its stderr."""
    capsys.readouterr()
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, (status, err)
    assert len(err.splitlines()) == 1, err
    return err


def check_budget(benchmark: Any, input_bytes: int, err: str) -> None:
    allowed = REFUSAL_SECONDS + SECONDS_PER_MB * input_bytes / 1e6
    seconds = benchmark.stats.stats.min
    benchmark.extra_info.update(input_bytes=input_bytes, allowed_seconds=allowed)
    assert seconds < allowed, f"refused after {seconds:.1f} s (budget {allowed:.1f} s): {err}"


@pytest.mark.benchmark(group="refusals: reconsim sweep SPEC")
@pytest.mark.parametrize("kind", list(SPECS))
def test_sweep_refusal(benchmark, kind: str, tmp_path: Path,  # type: ignore[no-untyped-def]
                       capsys: pytest.CaptureFixture[str]) -> None:
    text = SPECS[kind]
    spec, out = tmp_path / "spec.toml", tmp_path / "out"
    spec.write_text(text, encoding="utf-8")
    argv = ["sweep", str(spec), "--out", str(out), "--backend", "sequential",
            "--no-progress", "--max-cells", str(MAX_CELLS)]
    err = benchmark.pedantic(refuse, args=(argv, capsys), rounds=ROUNDS, warmup_rounds=0)
    assert not out.exists()
    check_budget(benchmark, len(text.encode()), err)


@pytest.mark.benchmark(group="refusals: reconsim run FLAGS")
@pytest.mark.parametrize("kind", list(RUNS))
def test_run_refusal(benchmark, kind: str,  # type: ignore[no-untyped-def]
                     capsys: pytest.CaptureFixture[str]) -> None:
    err = benchmark.pedantic(refuse, args=(RUNS[kind], capsys), rounds=ROUNDS,
                             warmup_rounds=0)
    check_budget(benchmark, 0, err)
