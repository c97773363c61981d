"""The on-disk layout of a sweep: chunk files, the manifest, the lock. Polars and files only.

::

    DIR/sweep.json            the manifest: spec, its hash, version, counts, times
    DIR/data/part-00000.parquet  one file per chunk of cells, written atomically
    DIR/.lock                 held (flock) while a sweep writes into DIR
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from reconsim.errors import ReconsimError

MANIFEST = "sweep.json"
DATA = "data"
LOCK = ".lock"
#: What a sweep owns in its DIR; ``--force`` removes these and nothing else.
OWNED = (MANIFEST, DATA, "report.html", "summary.json", "figures")


class StoreError(ReconsimError):
    """DIR cannot take this sweep (another spec's results, a running sweep, foreign files)."""


def chunk_path(out: Path, index: int) -> Path:
    """The file holding chunk ``index``."""
    return out / DATA / f"part-{index:05d}.parquet"


def scan(out: str | Path) -> pl.LazyFrame:
    """The whole table of a sweep, lazily: one row per cell."""
    return pl.scan_parquet(Path(out) / DATA / "part-*.parquet")


def done_chunks(out: Path) -> set[int]:
    """Indices of the chunk files present (each complete: they are written atomically)."""
    found = set()
    for p in (out / DATA).glob("part-*.parquet"):
        with contextlib.suppress(ValueError):
            found.add(int(p.stem.removeprefix("part-")))
    return found


def write_chunk(out: Path, index: int, frame: pl.DataFrame) -> None:
    """Write one chunk atomically: a temporary file in the same folder, fsync, rename."""
    target = chunk_path(out, index)
    _atomic_write(target, lambda f: frame.write_parquet(f, compression="zstd"))


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write a JSON document atomically."""
    _atomic_write(path, lambda f: f.write(json.dumps(doc, indent=2, default=str).encode()))


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of ``out``, or None if there is none; :class:`StoreError` naming the
    file when it is unreadable or not a JSON object."""
    path = out / MANIFEST
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                         f"{exc.colno}); use --force to start over") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: unreadable ({exc})") from None
    if not isinstance(doc, dict):
        raise StoreError(f"{path}: expected a JSON object, got a {type(doc).__name__}; "
                         "use --force to start over")
    return doc


def remove_strays(out: Path) -> int:
    """Delete temporary files a killed writer left behind; return how many."""
    strays = [p for p in out.rglob(".tmp-*") if p.is_file()]
    for p in strays:
        p.unlink()
    return len(strays)


def clear(out: Path) -> None:
    """Remove what a sweep owns in ``out`` (for ``--force``); other files stay."""
    for name in OWNED:
        p = out / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def foreign_entries(out: Path) -> list[str]:
    """Entries of ``out`` that a sweep would not have written."""
    return sorted(p.name for p in out.iterdir() if p.name not in (*OWNED, LOCK))


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``out``'s lock; raise :class:`StoreError` if another sweep holds it.

    The kernel releases a flock when its holder dies, even by SIGKILL.
    """
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{out}: another sweep is running into this directory") from None
        yield
    finally:
        os.close(fd)


def _atomic_write(target: Path, write: Any) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        Path(tmp).replace(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a reader sees the old file or the new one."""
    _atomic_write(path, lambda f: f.write(data))
