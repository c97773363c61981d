"""The laws seed 001 states, as functions of a cell's parameters.

* overshoot law: the ``ledger`` controller overshoots by desired x (ceil((G + B) / U) - 1);
* boundary: that is zero exactly when U >= G + B.

With observe="created" a copy reaches the ledger G seconds after creation instead of
G + B, and the law's analogue reads ceil(G / U). The law speaks of the ``ledger``
controller without a cap or damping (``max_per_round`` null, ``gain`` 1) only; on other
rows its columns are null.

These are *claims to check*, never inputs to the model: the report compares them
with the simulated overshoot cell by cell.
"""

from __future__ import annotations

from typing import Final

import polars as pl

#: The overshoot law as text, for each value of ``observe``: what every page and table shows.
LAW_FORMULA: Final = {"ready": "desired \u00d7 (\u2308(G + B) / U\u2309 \u2212 1)",
                      "created": "desired \u00d7 (\u2308G / U\u2309 \u2212 1)"}
#: The rows the law speaks of (where :func:`law_columns` is not null), in words.
LAW_SCOPE: Final = ("the ledger controller without a cap on corrections per round "
                    "(max_per_round) and without damping (gain 1)")
#: The boundary as text.
BOUNDARY: Final = "U \u2265 G + B"


def law_overshoot(desired: int, G: int, U: int, B: int) -> int:
    """Seed 001's predicted overshoot: desired x (ceil((G + B) / U) - 1).

    >>> law_overshoot(6, 30, 15, 5)
    12
    >>> law_overshoot(6, 30, 35, 5)
    0
    """
    return desired * (-(-(G + B) // U) - 1)


def listing_delay() -> pl.Expr:
    """Seconds from a copy's creation to its listing on the ledger: G + B, or G where the
    ledger lists copies at creation (observe = "created")."""
    return (pl.when(pl.col("observe") == "created").then(pl.col("G"))
            .otherwise(pl.col("G") + pl.col("B")))


def law_columns() -> list[pl.Expr]:
    """Columns ``law_overshoot`` and ``law_holds`` (null unless the controller is an
    uncapped, undamped ``ledger``; with observe="created" the ceil(G / U) analogue) and
    ``above_boundary`` (U >= G + B), computed from a frame of simulated cells."""
    in_scope = ((pl.col("controller") == "ledger") & pl.col("max_per_round").is_null()
                & (pl.col("gain") == 1))
    blind_rounds = (listing_delay() + pl.col("U") - 1) // pl.col("U")
    law = pl.when(in_scope).then(pl.col("desired") * (blind_rounds - 1))
    return [
        law.alias("law_overshoot"),
        pl.when(in_scope).then(pl.col("overshoot") == law).alias("law_holds"),
        (pl.col("U") >= pl.col("G") + pl.col("B")).alias("above_boundary"),
    ]
