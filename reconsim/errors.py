"""reconsim's own exceptions: the one base of its errors about bad input or environment (the
CLI prints them in one line, exit 2), and a kernel's refusal of one cell of a batch."""

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


class KernelRefusalError(ValueError):
    """A kernel's refusal of one cell of the batch it was given, before anything runs (its
    scratch could not be allocated, or its counts could pass int64): ``row``, the cell's
    index in that batch, and ``reason``, why. One line: ``kernel: cell ROW REASON``.

    A ``ValueError``, as :func:`reconsim.simulate` documents its refusals; a caller that
    hands a kernel part of its batch names its own row with :meth:`at`.

    >>> str(KernelRefusalError(3, "(desired 9) is too large").at(7))
    'kernel: cell 7 (desired 9) is too large'
    """

    #: The refused cell's index in the batch the kernel was given.
    row: int
    #: Why: the cell's figures and the limit they pass.
    reason: str

    def __init__(self, row: int, reason: str) -> None:
        super().__init__(row, reason)  # the arguments again: a worker's refusal pickles
        self.row = row
        self.reason = reason

    def at(self, row: int) -> KernelRefusalError:
        """The same refusal, of the cell numbered ``row`` (its index in a larger batch)."""
        return KernelRefusalError(row, self.reason)

    def __str__(self) -> str:
        return f"kernel: cell {self.row} {self.reason}"
