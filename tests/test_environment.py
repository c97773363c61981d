"""A failing environment is one line: a full disk, a folder the user cannot write, a
read-only file system each stop a command with ``error: reconsim COMMAND: PATH: cannot
write (REASON)``, exit status 2, no temporary file left; a resume, once the cause is gone,
gives the table a clean run gives.

The disk-full case runs twice: without any mount, by a writer that fails as a full disk
does, through the real code path (in-process, both as polars reports it and as a file
does); and on a real tmpfs too small for the table, with local workers (root only).
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl
import pytest

from reconsim.cli import main
from reconsim.errors import WriteError
from reconsim.io import write_atomic
from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import parse_spec
from tests.test_sweep import SMALL, parts, write_spec

ENOSPC = os.strerror(errno.ENOSPC)


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reconsim", *map(str, args)],
                          capture_output=True, text=True, check=False)


def strays(out: Path) -> list[Path]:
    return sorted(out.rglob(".tmp-*")) if out.exists() else []


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """SMALL's chunk files from a clean run."""
    out = tmp_path_factory.mktemp("clean") / "out"
    run_sweep(parse_spec(SMALL), out, backend="sequential", progress=False)
    return parts(out)


def polars_disk_full(f: BinaryIO) -> None:
    """What polars raises when the file it writes Parquet into hits a full disk."""
    raise pl.exceptions.ComputeError("parquet: File out of specification: underlying IO "
                                     f"error: {ENOSPC} (os error 28)")


def file_disk_full(f: BinaryIO) -> None:
    """What a file raises when it hits a full disk."""
    raise OSError(errno.ENOSPC, ENOSPC)


class FullDisk:
    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, ENOSPC)


def polars_loses_the_os_error(f: Any) -> None:
    """The file polars writes into fails, and polars' message does not say why (as when
    the footer is cut short): the error the file raised is the one reported."""
    f._file = FullDisk()  # the sink the store gives polars: its file now hits a full disk
    with contextlib.suppress(OSError):
        f.write(b"footer")
    raise pl.exceptions.ComputeError("parquet: File out of specification: Invalid thrift: "
                                     "transport error")


@pytest.mark.parametrize("fail", [polars_disk_full, file_disk_full, polars_loses_the_os_error])
def test_a_full_disk_is_one_line_exit_2_no_temporary_and_resumes_to_the_same_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        clean: dict[str, bytes], fail: Any) -> None:
    spec = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    real = pl.DataFrame.write_parquet
    written: list[int] = []

    def write_parquet(frame: pl.DataFrame, file: BinaryIO, **options: Any) -> None:
        written.append(frame.height)
        if len(written) == 3:  # the third chunk finds the disk full, half-way
            file.write(b"PAR1" + bytes(4096))
            fail(file)
        real(frame, file, **options)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", write_parquet)
    assert main(["sweep", str(spec), "--out", str(out), "--backend", "sequential"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: reconsim sweep: {out}/data/part-00002.parquet: cannot write "
                   f"({ENOSPC})\n")
    assert strays(out) == []
    assert sorted(parts(out)) == ["part-00000.parquet", "part-00001.parquet"]

    monkeypatch.undo()  # space freed
    assert main(["sweep", str(spec), "--out", str(out), "--backend", "sequential"]) == 0
    assert "the last run failed (WriteError: " in capsys.readouterr().err
    assert parts(out) == clean


def test_a_write_error_crosses_from_a_worker_whole() -> None:
    """A worker's error reaches the parent pickled: the same one line, still an OSError."""
    error = WriteError(errno.ENOSPC, ENOSPC, "/d/data/part-00001.parquet")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is WriteError
    assert str(again) == f"/d/data/part-00001.parquet: cannot write ({ENOSPC})"
    assert (again.errno, again.filename) == (errno.ENOSPC, "/d/data/part-00001.parquet")


def test_a_polars_error_without_an_os_error_is_not_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the operating system's errors become one line: a bug stays a traceback."""
    def broken(frame: pl.DataFrame, file: BinaryIO, **options: Any) -> None:
        raise pl.exceptions.ComputeError("something else went wrong")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", broken)
    with pytest.raises(pl.exceptions.ComputeError, match="something else"):
        run_sweep(parse_spec(SMALL), tmp_path / "out", backend="sequential", progress=False)
    assert strays(tmp_path / "out") == []


def test_a_page_the_command_writes_is_atomic_and_its_failure_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``compare --html`` writes its page atomically: a folder in the way is one line."""
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    from reconsim.cli import _write_text

    _write_text(str(tmp_path / "page.html"), "<p>é</p>")
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == "<p>é</p>"
    with pytest.raises(WriteError, match=re.escape(f"{tmp_path}/file: cannot write (")):
        _write_text(str(tmp_path / "file" / "page.html"), "<p></p>")
    with pytest.raises(WriteError):
        write_atomic(tmp_path / "file" / "x", b"")
    assert strays(tmp_path) == []


# --- real file systems -----------------------------------------------------------------


def _mount(where: Path, options: str) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8) (CI runs as root)")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs (64 KiB: a manifest and about two of SMALL's chunks), unmounted after."""
    where = tmp_path / "fs"
    _mount(where, "size=64k")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_real_full_disk_with_local_workers(tmpfs: Path, tmp_path: Path,
                                             clean: dict[str, bytes]) -> None:
    spec = write_spec(tmp_path, SMALL)
    out = tmpfs / "out"
    full = cli("sweep", spec, "--out", out, "--jobs", "2")
    assert full.returncode == 2, full.stderr
    assert re.fullmatch(rf"error: reconsim sweep: {re.escape(str(out))}/data/"
                        rf"part-0000\d\.parquet: cannot write \({ENOSPC}\)\n", full.stderr)
    assert strays(out) == []

    subprocess.run(["mount", "-o", "remount,size=16m", str(tmpfs)], check=True)
    resumed = cli("sweep", spec, "--out", out, "--jobs", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert parts(out) == clean


def test_a_folder_the_user_cannot_write(tmp_path: Path) -> None:
    """As a user without the right to write DIR (root gives up its override for it)."""
    where = tmp_path / "theirs"
    where.mkdir()
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("as root, a folder root cannot write needs setpriv(1)")
        os.chown(where, 65534, 65534)  # nobody's, 0755: others may read, not write
        as_user = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    else:
        where.chmod(0o555)
        as_user = []
    spec = write_spec(tmp_path, SMALL)
    try:
        for out, named in [(where, where / ".lock"), (where / "new", where / "new")]:
            done = subprocess.run([*as_user, sys.executable, "-m", "reconsim", "sweep",
                                   str(spec), "--out", str(out)],
                                  capture_output=True, text=True, check=False)
            assert done.returncode == 2, done.stderr
            assert done.stderr == (f"error: reconsim sweep: {named}: cannot write "
                                   f"({os.strerror(errno.EACCES)})\n")
            assert list(where.iterdir()) == []
    finally:
        where.chmod(0o755)


def test_a_read_only_file_system(tmp_path: Path) -> None:
    where = tmp_path / "ro"
    _mount(where, "size=1m")
    try:
        (where / "empty").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        spec = write_spec(tmp_path, SMALL)
        for out, named in [(where / "empty", where / "empty" / ".lock"),
                           (where / "new", where / "new")]:
            done = cli("sweep", spec, "--out", out)
            assert done.returncode == 2, done.stderr
            assert done.stderr == (f"error: reconsim sweep: {named}: cannot write "
                                   f"({os.strerror(errno.EROFS)})\n")
        assert [p.name for p in where.rglob("*")] == ["empty"]
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
