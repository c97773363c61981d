"""``reconsim.scan(DIR)``: a path that holds no sweep's table is one line naming it (a
:class:`~reconsim.errors.ReconsimError`), not a polars error when the frame is collected."""

from __future__ import annotations

from pathlib import Path

import pytest

import reconsim
from reconsim.errors import ReconsimError
from reconsim.sweep.store import StoreError


@pytest.mark.parametrize(("case", "message"), [
    ("missing", "no such directory"),
    ("file", "not a directory"),
    ("empty", "not a sweep's output (no data/part-*.parquet)"),
    ("no chunks", "not a sweep's output (no data/part-*.parquet)"),
    ("corrupt", "unreadable table ("),
])
def test_a_dir_without_a_table_is_one_line_naming_it(tmp_path: Path, case: str,
                                                     message: str) -> None:
    path = tmp_path / "sweep"
    if case == "file":
        path.write_text("not a sweep")
    elif case != "missing":
        path.mkdir()
    if case in ("no chunks", "corrupt"):
        (path / "data").mkdir()
        (path / "sweep.json").write_text("{}")
    if case == "corrupt":
        (path / "data" / "part-00000.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(ReconsimError) as raised:
        reconsim.scan(path)
    assert isinstance(raised.value, StoreError)
    text = str(raised.value)
    assert text.startswith(f"{path}: ")
    assert message in text
    assert "\n" not in text


def test_a_dir_that_cannot_be_listed_is_one_line(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()

    def denied(self: Path) -> object:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "iterdir", denied)
    with pytest.raises(StoreError, match=r": unreadable \(Permission denied\)$"):
        reconsim.scan(tmp_path)
