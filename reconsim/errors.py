"""The one base of reconsim's errors about bad input: the CLI prints them in one line, exit 2."""

from __future__ import annotations


class ReconsimError(Exception):
    """Bad input — a flag, a spec, a directory, a table — that reconsim can name in one line.

    Subclasses: :class:`~reconsim.sweep.spec.SpecError`, :class:`~reconsim.sweep.store.StoreError`,
    :class:`reconsim.sweep.runner.SweepError`, :class:`reconsim.cli.UsageError` and the report's
    ``ReportError``. ``reconsim`` catches this class alone and prints ``error: MESSAGE``
    on stderr with exit status 2.
    """
