"""``reconsim sweep`` as a user sees it: the lines it prints, and the estimate and question
before a big grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconsim.cli import main

ONE_CELL = """
name = "one"
[grid]
G = 10
U = 5
duration = 60
"""


def sweep(tmp_path: Path, text: str, *flags: str) -> tuple[int, Path]:
    spec = tmp_path / "spec.toml"
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    status = main(["sweep", str(spec), "--out", str(out), "--backend", "sequential",
                   "--no-progress", *flags])
    return status, out


def test_one_cell_is_counted_in_the_singular(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    status, out = sweep(tmp_path, ONE_CELL)
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "one: 1 cell in 1 chunk of up to 50,000"
    assert lines[1].startswith(f"{out}: 1 cell in 1 chunk, ")
    assert lines[1].endswith("(table: 1 cell)")
    assert sweep(tmp_path, ONE_CELL)[0] == 0
    assert capsys.readouterr().out.splitlines()[1] == \
        f"{out}: already complete, 1 cell; nothing to do"
