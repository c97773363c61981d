"""Files written atomically: a reader, or a run that was stopped, never sees half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


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


def atomic_write(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write`` on a temporary file beside ``target``, then rename it over ``target``:
    a reader sees the old file or the new one, and a failure (or Ctrl-C) leaves neither a
    temporary file nor a half-written ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{target.name}.", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); the finished file gets the mode any new
        # file would, so a report served from results/ can be read by the web server.
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
