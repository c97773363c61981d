"""The one base of reconsim's errors about bad input: the CLI prints them in one line, exit 2."""

from __future__ import annotations


class ReconsimError(Exception):
    """Bad input — a flag, a spec, a directory, a table — that reconsim can name in one line.

    Subclasses: :class:`reconsim.spec.SpecError`, :class:`reconsim.store.StoreError`,
    :class:`reconsim.sweep.SweepError`, :class:`reconsim.cli.UsageError` and the report's
    ``ReportError``. ``reconsim`` catches this class alone and prints ``error: MESSAGE``
    on stderr with exit status 2.
    """
