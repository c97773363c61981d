"""Counts in sentences: "1 cell in 1 chunk", "2 cells in 3 chunks"."""

from __future__ import annotations

from collections.abc import Sequence


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``singular`` when ``n`` is one, else ``many`` (``singular + "s"`` unless given).

    >>> plural(1, "cell"), plural(0, "cell"), plural(2, "metric differs", "metrics differ")
    ('cell', 'cells', 'metrics differ')
    """
    return singular if n == 1 else many or f"{singular}s"


def counted(n: int, singular: str, many: str | None = None) -> str:
    """``n`` with thousands separators and its noun: ``1 cell``, ``1,200 cells``.

    >>> counted(1, "chunk"), counted(1200, "cell")
    ('1 chunk', '1,200 cells')
    """
    return f"{n:,} {plural(n, singular, many)}"


def listed(items: Sequence[str]) -> str:
    """``items`` as a sentence lists them: ``a``, ``a and b``, ``a, b and c``.

    >>> listed(["ledger"]), listed(["expectations", "replicaset", "mine"])
    ('ledger', 'expectations, replicaset and mine')
    """
    *head, last = items
    return f"{', '.join(head)} and {last}" if head else last
