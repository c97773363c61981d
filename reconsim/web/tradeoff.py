"""Quality against cost: each controller variant as a point of quality (excess copy-seconds,
wasted delete commands) against cost (missing copy-seconds, ledger reads), and the
frontier of the variants no other beats. One definition for the benchmark comparison
(``reconsim bench-compare``, the benchmarks' summary) and the report's controller section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import altair as alt
import polars as pl

from reconsim.web.charts import inline

#: Quality and cost figures of the trade-off view: all four are better when lower.
QUALITY_FIGURES: Final = ("excess_copy_seconds", "wasted_delete_commands")
COST_FIGURES: Final = ("missing_copy_seconds", "reads")


#: Two figures within this fraction of the larger one count as a tie: neither is better
#: (means of a few hundred cells differ by far more from seed to seed).
TIES: Final = 0.01


@dataclass(frozen=True)
class Tie:
    """A difference treated as a tie that decides whether ``other`` beats a variant: the
    figure, the variant's value and the other's."""

    other: str
    figure: str
    mine: float
    theirs: float


@dataclass(frozen=True)
class Tradeoff:
    """A variant's quality and cost figures, the variants that beat it on all of them, and
    the ties that decided whether one does (``ties``: none where exact comparison gives the
    same verdict)."""

    name: str
    figures: Mapping[str, float | None]
    beaten_by: tuple[str, ...]
    ties: tuple[Tie, ...] = ()

    @property
    def on_frontier(self) -> bool:
        return not self.beaten_by


def tied(a: float, b: float, ties: float = TIES) -> bool:
    """Whether ``a`` and ``b`` differ by at most ``ties`` of the larger in size.

    >>> tied(115_163, 115_183), tied(100, 105), tied(0, 0.001)
    (True, False, False)
    """
    return abs(a - b) <= ties * max(abs(a), abs(b))


def ties_text(ties: float = TIES) -> str:
    """The tolerance in words: ``differences within 1 % count as ties``."""
    return f"differences within {ties * 100:g} % count as ties"


def frontier(figures: Mapping[str, Mapping[str, float | None]],
             ties: float = TIES) -> tuple[Tradeoff, ...]:
    """Variant -> its figures, as :class:`Tradeoff` rows: each variant's quality and cost
    figures and the variants that beat it, as good on every one and better on one (a
    figure some variant lacks is left out); two values within ``ties`` of the larger
    (:func:`tied`) are as good as each other, neither better. Each row lists the ties
    that changed whether another beats it (against comparing exactly).

    >>> [t.beaten_by for t in frontier({"a": {"reads": 2}, "b": {"reads": 1}})]
    [('b',), ()]
    >>> [t.beaten_by for t in frontier({"a": {"reads": 1000}, "b": {"reads": 999}})]
    [(), ()]
    """
    wanted = (*QUALITY_FIGURES, *COST_FIGURES)
    rows = {n: {f: q.get(f) for f in wanted} for n, q in figures.items()}
    present = [f for f in wanted if all(r[f] is not None for r in rows.values())]
    if not present:
        return tuple(Tradeoff(n, r, ()) for n, r in rows.items())

    known = {n: {f: float(r[f] or 0) for f in present} for n, r in rows.items()}

    def beats(a: Mapping[str, float], b: Mapping[str, float], within: float) -> bool:
        even = {f: tied(a[f], b[f], within) for f in present}
        return (all(even[f] or a[f] < b[f] for f in present)
                and any(not even[f] and a[f] < b[f] for f in present))

    def decided(other: str, n: str) -> tuple[Tie, ...]:
        a, b = known[other], known[n]
        if beats(a, b, ties) == beats(a, b, 0.0):
            return ()
        return tuple(Tie(other, f, b[f], a[f]) for f in present
                     if a[f] != b[f] and tied(a[f], b[f], ties))

    return tuple(Tradeoff(n, r, tuple(m for m in rows
                                      if m != n and beats(known[m], known[n], ties)),
                          tuple(t for m in rows if m != n for t in decided(m, n)))
                 for n, r in rows.items())


#: Figure -> axis title.
TITLES = {"excess_copy_seconds": "excess copy-seconds (quality)",
          "wasted_delete_commands": "wasted delete commands (quality)",
          "missing_copy_seconds": "missing copy-seconds (cost)",
          "reads": "ledger reads (cost)"}


def tradeoff_chart(tradeoffs: Sequence[Tradeoff]) -> dict[str, Any]:
    """Each variant as a point of quality against cost: excess copy-seconds against missing
    copy-seconds, wasted delete commands against reads; frontier variants stand out."""
    frame = pl.DataFrame([{"variant": t.name, **t.figures, "frontier": t.on_frontier,
                           "beaten_by": ", ".join(t.beaten_by) or "none"} for t in tradeoffs])
    panels = []
    for quality, cost in zip(QUALITY_FIGURES, COST_FIGURES, strict=True):
        if frame[quality].null_count() or frame[cost].null_count():
            continue
        top = int(frame.select(pl.col(quality).max()).item() or 0)
        ticks = [0] + [10**k for k in range(1, max(2, len(str(max(top, 1))) + 1))]
        base = alt.Chart(inline(frame)).encode(
            x=alt.X(f"{cost}:Q", title=TITLES[cost], scale=alt.Scale(zero=False)),
            # symlog: the variants without duplicates sit at 0, the ledger's near a million
            y=alt.Y(f"{quality}:Q", title=TITLES[quality], axis=alt.Axis(values=ticks),
                    scale=alt.Scale(type="symlog", domain=[0, ticks[-1]])),
            tooltip=["variant:N", f"{quality}:Q", f"{cost}:Q", "frontier:N",
                     alt.Tooltip("beaten_by:N", title="beaten by")],
        )
        points = base.mark_point(filled=True, size=90).encode(
            color=alt.Color("frontier:N", title="on the frontier",
                            scale=alt.Scale(domain=[True, False],
                                            range=["#d4380d", "#8a96a8"])))
        labels = base.mark_text(align="left", dx=7, fontSize=11).encode(text="variant:N")
        panels.append((points + labels).properties(width=420, height=320))
    chart = alt.hconcat(*panels).properties(title=alt.TitleParams(
        "Quality against cost, per controller variant (lower is better on both axes)",
        subtitle=["Red: on the frontier, no other variant is as good on all four figures "
                  "and better on one."], anchor="start"))
    spec: dict[str, Any] = chart.to_dict()
    return spec
