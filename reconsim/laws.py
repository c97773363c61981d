"""The laws seed 001 states, as functions of a cell's parameters.

* overshoot law: the ``ledger`` controller overshoots by desired x (ceil((G + B) / U) - 1);
* boundary: that is zero exactly when U >= G + B.

These are *claims to check*, never inputs to the model: the report compares them
with the simulated overshoot cell by cell.
"""

from __future__ import annotations

import polars as pl


def law_overshoot(desired: int, G: int, U: int, B: int) -> int:
    """Seed 001's predicted overshoot: desired x (ceil((G + B) / U) - 1).

    >>> law_overshoot(6, 30, 15, 5)
    12
    >>> law_overshoot(6, 30, 35, 5)
    0
    """
    return desired * (-(-(G + B) // U) - 1)


def law_columns() -> list[pl.Expr]:
    """Columns ``law_overshoot``, ``law_holds`` (null unless controller is ``ledger``) and
    ``above_boundary`` (U >= G + B), computed from a frame of simulated cells."""
    blind_rounds = (pl.col("G") + pl.col("B") + pl.col("U") - 1) // pl.col("U")
    is_ledger = pl.col("controller") == "ledger"
    law = pl.when(is_ledger).then(pl.col("desired") * (blind_rounds - 1))
    return [
        law.alias("law_overshoot"),
        pl.when(is_ledger).then(pl.col("overshoot") == law).alias("law_holds"),
        (pl.col("U") >= pl.col("G") + pl.col("B")).alias("above_boundary"),
    ]
