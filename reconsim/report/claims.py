"""A claim checked on every cell it speaks of: what is claimed, the cells checked, those
where it holds, its counterexamples row by row, and the verdict.

The report checks several such claims: the overshoot law where the delay is zero, where
U < B and elsewhere; the boundary U >= G + B in both directions; where delays vary, the
law's three readings and the worst-case boundary; each controller variant on each side of
the boundary. Each is a :class:`Claim`, computed from the table by queries (a section's own
aggregate counts it; :func:`locate` finds where its counterexamples lie and lists the worst
of them), and worded by one template, ``templates/claims.html``: its verdict in a sentence
(:func:`sentence`), in a verdict box (``box``, its kind :attr:`Claim.box`) and on the
page's glance line (``glance``), and its counterexamples in tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import polars as pl
from markupsafe import Markup

from reconsim.report.blocks import macro
from reconsim.report.query import Table, examples, where_each
from reconsim.report.section import UNLESS_DEFAULT

Verdict = Literal["holds", "fails", "untested"]

#: The verdict box's kind (its colour) for each verdict.
BOX: Final[Mapping[str, str]] = {"holds": "holds", "fails": "fails", "untested": "none"}


@dataclass(frozen=True, slots=True)
class Spread:
    """How far the counterexamples miss: the range of ``figure`` over them."""

    figure: str
    min: Any
    max: Any


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim (``claim``: what it says, in words) checked on ``cells`` cells (``scope``:
    which, a plural noun phrase); it holds on ``holds`` of them and ``counterexamples``
    contradict it. ``where`` says which parameter values the counterexamples have (each
    with the count of all checked cells having it: :func:`~.query.where`), ``examples``
    lists the worst of them in full, and ``by`` how far they miss (where the section
    measures it). ``verdict``: ``holds`` on every cell checked, ``fails`` on one at
    least, ``untested`` without a cell. Build one with :meth:`of`."""

    claim: str
    scope: str
    cells: int
    holds: int
    counterexamples: int
    verdict: Verdict
    by: Spread | None = field(default=None, metadata=UNLESS_DEFAULT)
    where: tuple[dict[str, Any], ...] = ()
    examples: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of(cls, claim: str, scope: str, cells: int, counterexamples: int, *,  # noqa: PLR0913
           by: Spread | None = None, where: Sequence[dict[str, Any]] = (),
           examples: Sequence[dict[str, Any]] = ()) -> Claim:
        """The claim checked on ``cells`` cells, ``counterexamples`` of them contradicting
        it (``by``, ``where`` and ``examples`` only where there are some).

        >>> c = Claim.of("U ≥ G + B implies zero overshoot", "ledger cells with U ≥ G + B",
        ...              3, 1)
        >>> c.holds, c.verdict, Claim.of("x", "cells", 0, 0).verdict
        (2, 'fails', 'untested')
        """
        verdict: Verdict = "untested" if cells == 0 else "fails" if counterexamples else "holds"
        failing = counterexamples > 0
        return cls(claim=claim, scope=scope, cells=cells, holds=cells - counterexamples,
                   counterexamples=counterexamples, verdict=verdict,
                   by=by if failing else None, where=tuple(where) if failing else (),
                   examples=tuple(examples) if failing else ())

    @property
    def box(self) -> str:
        """The verdict box's kind: ``holds``, ``fails`` or ``none``."""
        return BOX[self.verdict]


@dataclass(frozen=True, slots=True)
class Check:
    """How to find a claim's counterexamples in a population: ``inside`` selects the cells
    it speaks of (None: every one), ``fails`` those contradicting it among them, and
    ``order`` puts the worst first (the examples are the largest by it)."""

    inside: pl.Expr | None
    fails: pl.Expr
    order: pl.Expr


def locate(population: Table, checks: Mapping[str, Check], axes: Sequence[str],
           figures: Sequence[str], sizes: Mapping[str, int] | None = None
           ) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Where each check's counterexamples lie (:func:`~.query.where_each`: one read of the
    population per group of axes for them all) and the worst of them in full with
    ``figures`` (:func:`~.query.examples`), by name. Pass only the checks that have
    counterexamples."""
    if not checks:
        return {}
    splits = {name: (c.inside, c.fails) for name, c in checks.items()}
    located = where_each(population, splits, axes, sizes=sizes)
    out = {}
    for name, c in checks.items():
        failing = c.fails if c.inside is None else c.inside & c.fails
        out[name] = (located[name],
                     examples(population.lazy().filter(failing), axes, figures, c.order))
    return out


def sentence(claim: Claim) -> Markup:
    """The claim's verdict in one sentence (``templates/claims.html``)."""
    return macro("claims.html", "sentence")(claim)
