"""Files written atomically: a reader, or a run that was stopped, never sees half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from reconsim.errors import WriteError


def _file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 less the process's umask (read without
    changing it, where Linux tells; else set and restored)."""
    try:
        with Path("/proc/self/status").open() as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def cannot_write(path: Path) -> Iterator[None]:
    """Raise an :class:`OSError` of the block (no space, no permission, a read-only file
    system) as :class:`~reconsim.errors.WriteError` naming ``path``: one line, exit
    status 2 from the ``reconsim`` command."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError.of(exc, path) from exc


def atomic_write(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write`` on a temporary file beside ``target``, then rename it over ``target``:
    a reader sees the old file or the new one, and a failure (or Ctrl-C) leaves neither a
    temporary file nor a half-written ``target``. An :class:`OSError` — of the folder, the
    file, or of ``write`` (which raises it for the operating system's errors) — comes out
    as :class:`~reconsim.errors.WriteError` naming ``target`` (or the folder that could
    not be made)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteError.of(exc, exc.filename or target.parent) from exc
    with cannot_write(target):
        fd, tmp = tempfile.mkstemp(prefix=f".tmp-{target.name}.", dir=target.parent)
        try:
            # mkstemp makes the file private (0600); the finished file gets the mode any
            # new file would, so a report served from results/ can be read by the web
            # server.
            os.fchmod(fd, _file_mode())
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
    atomic_write(path, lambda f: f.write(data))
