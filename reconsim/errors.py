"""The one base of reconsim's errors about bad input or environment: the CLI prints them in
one line, exit 2."""

from __future__ import annotations

import os


class ReconsimError(Exception):
    """Bad input — a flag, a spec, a directory, a table — or an environment that cannot
    take the work (a full disk, no permission): what reconsim can name in one line.

    Subclasses: :class:`~reconsim.sweep.spec.SpecError`, :class:`~reconsim.sweep.store.StoreError`,
    :class:`reconsim.sweep.runner.SweepError`, :class:`reconsim.cli.UsageError`,
    :class:`WriteError` and the report's ``ReportError``. ``reconsim`` catches this class
    alone and prints ``error: MESSAGE`` on stderr with exit status 2.
    """


class WriteError(ReconsimError, OSError):
    """A file or folder that cannot be written, for the operating system's reason (a full
    disk, no permission, a read-only file system): ``PATH: cannot write (REASON)``.

    Also an :class:`OSError` (its ``errno``, ``strerror`` and ``filename``), so code that
    catches those still does. :mod:`reconsim.io` raises it for every file written
    atomically, :mod:`reconsim.sweep.store` for a sweep directory's other files.
    """

    @classmethod
    def of(cls, exc: OSError, path: str | os.PathLike[str]) -> WriteError:
        """The error ``exc`` (raised writing ``path``) as one that names ``path``."""
        return cls(exc.errno, exc.strerror or str(exc), os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename}: cannot write ({self.strerror})"
