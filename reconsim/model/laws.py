"""The laws seed 001 states, as functions of a cell's parameters.

* overshoot law: the ``ledger`` controller overshoots by desired x (ceil((G + B) / U) - 1);
* boundary: that is zero exactly when U >= G + B.

Both speak of seed 001's world: fixed delays, a periodic trigger, no faults, no stale
reads, oldest-first deletes, no grace (the richer world's parameters at their defaults; the seed
does not matter). Where delays vary or the period wobbles (spreads, jitter) the worst
case gives ``law_overshoot_worst`` = desired x (ceil((G + G_spread + B + B_spread) /
max(1, U - U_jitter)) - 1) and ``above_boundary_worst`` (max(1, U - U_jitter) >= G +
G_spread + B + B_spread): the law and the boundary read with the longest delays and the
shortest interval. ``law_overshoot_worst`` covers the same rows as the law plus those
with spreads or jitter (where both are 0 it equals the law).

A delay table (``G_delays``, ``B_delays``: :mod:`reconsim.model.delays`) stands in for its
spread: the longest delay is then G plus the table's last value (B likewise), so the worst
case reads "G + G_spread" as G plus the longest extra delay, from the spread or the table.
Rows with a table are off the fixed-delay law as rows with a spread are.

With observe="created" a copy reaches the ledger G seconds after creation instead of
G + B, and the law's analogue reads ceil(G / U). The law speaks of the ``ledger``
controller without a cap or damping (``max_per_round`` null, ``gain`` 1) only; on other
rows its columns are null.

Where the delays vary, :func:`law_readings` reads the worst-case law's rows four ways:
at the lowest delays and the longest interval (``law_lowest``), at the mean delays and
the mean interval, exactly (``law_mean``), at each delay's 99th percentile and the
shortest interval (``law_p99``), and at the worst (``law_worst``).

A row's side of the boundary is that of its own delays (:func:`above_its_boundary`): the
fixed boundary where they are fixed, the worst case where they vary (:func:`delays_vary`);
:func:`side_counts` counts a group's rows on each side and those that overshoot.

These are *claims to check*, never inputs to the model: the report compares them
with the simulated overshoot cell by cell.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import Final

import polars as pl

from reconsim.model.controllers.expectations import EXPECTATIONS_TIMEOUT
from reconsim.model.delays import PPM
from reconsim.model.deployment import PROGRESS_DEADLINE
from reconsim.model.kinds import NAMED, IntOrPercent
from reconsim.model.params import DEFAULTS

#: The overshoot law as text, for each value of ``observe``: what every page and table shows.
LAW_FORMULA: Final = {"ready": "desired \u00d7 (\u2308(G + B) / U\u2309 \u2212 1)",
                      "created": "desired \u00d7 (\u2308G / U\u2309 \u2212 1)"}
#: The rows the law speaks of (where :func:`law_columns` is not null), in words.
LAW_SCOPE: Final = ("the ledger controller without a cap on corrections per round "
                    "(max_per_round), without damping (gain 1), in seed 001's world with "
                    "fixed delays")
#: Why the law leaves a ledger row unchecked (:func:`law_exclusion`), the first that holds
#: first, each in words.
EXCLUSIONS: Final = {
    "capped": "a cap on corrections per round (max_per_round)",
    "damped": "damping (gain below 1)",
    "world": ("a switch off seed 001's world (watch-triggered rounds, create faults, stale "
              "reads, a grace period or newest-first deletes)"),
    "varying": "delays that vary from copy to copy (spreads or delay tables) or jittered rounds",
}
#: The boundary as text.
BOUNDARY: Final = "U \u2265 G + B"
#: What the worst case's symbols stand for: each delay's longest extra over G or B.
EXTRA_WORDS: Final = ("G\u2191 and B\u2191: the longest extra ledger delay and startup "
                      "(G_spread and B_spread, or a delay table's last value)")
#: The worst-case law and boundary as text (delays at their longest, intervals shortest).
LAW_WORST_FORMULA: Final = ("desired \u00d7 (\u2308(G + G\u2191 + B + B\u2191) / "
                            "max(1, U \u2212 U_jitter)\u2309 \u2212 1)")
BOUNDARY_WORST: Final = "max(1, U \u2212 U_jitter) \u2265 G + G\u2191 + B + B\u2191"
#: The percentile ``law_p99`` reads each delay at, in parts per million.
LAW_LEVEL_PPM: Final = 990_000


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


def _param(name: str, columns: Collection[str] | None) -> pl.Expr:
    """Parameter ``name``'s column, or its default where the frame lacks it."""
    return pl.col(name) if columns is None or name in columns else pl.lit(DEFAULTS[name])


def _table(delay: str, columns: Collection[str] | None) -> pl.Expr | None:
    """The delay table column of ``delay`` ("G" or "B"), or None where the frame lacks it."""
    name = f"{delay}_delays"
    return pl.col(name) if columns is None or name in columns else None


def _has_table(delay: str, columns: Collection[str] | None) -> pl.Expr:
    table = _table(delay, columns)
    return pl.lit(value=False) if table is None else (table.list.len() > 0).fill_null(
        value=False)


def _from_table(delay: str, columns: Collection[str] | None, read: pl.Expr,
                otherwise: pl.Expr) -> pl.Expr:
    """``read`` of the delay table where a row has one, else ``otherwise`` (its spread's)."""
    if _table(delay, columns) is None:
        return otherwise
    return pl.when(_has_table(delay, columns)).then(read).otherwise(otherwise)


def worst_extra(delay: str, columns: Collection[str] | None = None) -> pl.Expr:
    """The longest extra ``delay`` (``"G"`` or ``"B"``): the table's last value, else the
    spread."""
    table = _table(delay, columns)
    spread = _param(f"{delay}_spread", columns).cast(pl.Int64)
    return spread if table is None else _from_table(
        delay, columns, table.list.last().struct.field("value").cast(pl.Int64), spread)


def lowest_extra(delay: str, columns: Collection[str] | None = None) -> pl.Expr:
    """The shortest extra ``delay``: the table's first value, else 0."""
    table = _table(delay, columns)
    zero = pl.lit(0, dtype=pl.Int64)
    return zero if table is None else _from_table(
        delay, columns, table.list.first().struct.field("value").cast(pl.Int64), zero)


def quantile_extra(delay: str, level_ppm: int, columns: Collection[str] | None = None
                   ) -> pl.Expr:
    """The extra ``delay`` at ``level_ppm`` parts per million, exactly as
    :func:`reconsim.model.delays.quantile` reads it: the smallest value whose cumulative
    weight x 10⁶ reaches level x total; for a spread s (weights 1 over 0 … s), the smallest
    v with (v + 1) x 10⁶ >= level x (s + 1)."""
    spread = _param(f"{delay}_spread", columns).cast(pl.Int64)
    of_spread = (level_ppm * (spread + 1) + PPM - 1) // PPM - 1
    table = _table(delay, columns)
    if table is None:
        return of_spread
    value, weight = (pl.element().struct.field(f).cast(pl.Int64) for f in ("value", "weight"))
    read = table.list.eval(value.filter(weight.cum_sum() * PPM >= level_ppm * weight.sum())
                           .first()).list.first()
    return _from_table(delay, columns, read, of_spread)


def mean_extra(delay: str, columns: Collection[str] | None = None) -> tuple[pl.Expr, pl.Expr]:
    """The mean extra ``delay`` as an exact fraction (numerator, denominator), in 128-bit
    integers: the table's ``sum(v w) / sum(w)``, else the spread's ``s / 2``."""
    spread = _param(f"{delay}_spread", columns).cast(pl.Int128)
    table = _table(delay, columns)
    if table is None:
        return spread, pl.lit(2, dtype=pl.Int128)
    value, weight = (pl.element().struct.field(f).cast(pl.Int128) for f in ("value", "weight"))
    total = table.list.eval(weight.sum()).list.first()
    moment = table.list.eval((value * weight).sum()).list.first()
    return (_from_table(delay, columns, moment, spread),
            _from_table(delay, columns, total, pl.lit(2, dtype=pl.Int128)))


def worst_listing_delay(columns: Collection[str] | None = None) -> pl.Expr:
    """The longest delay from a copy's creation to its listing: G + G_spread + B + B_spread,
    or G + G_spread where the ledger lists copies at creation (a delay table's last value
    in place of its spread)."""
    g = pl.col("G") + worst_extra("G", columns)
    return pl.when(pl.col("observe") == "created").then(g).otherwise(
        g + pl.col("B") + worst_extra("B", columns))


def _seed_world_but_delays(columns: Collection[str] | None) -> pl.Expr:
    """Rows in seed 001's world apart from spreads and jitter: periodic rounds, no faults,
    no stale reads, oldest-first deletes, no grace (schedules as lists)."""
    def empty(name: str) -> pl.Expr:
        return (pl.col(name).list.len() == 0) if columns is None or name in columns \
            else pl.lit(len(DEFAULTS[name]) == 0)

    return ((_param("trigger", columns) == "periodic")
            & (_param("delete_order", columns) == "oldest") & (_param("grace", columns) == 0)
            & (_param("fail_rate", columns) == 0) & (_param("lost_rate", columns) == 0)
            & empty("lag") & empty("create_faults"))


def _fixed_delays(columns: Collection[str] | None) -> pl.Expr:
    """Rows whose delays and interval are the same for every copy and round."""
    return ((_param("B_spread", columns) == 0) & (_param("G_spread", columns) == 0)
            & (_param("U_jitter", columns) == 0)
            & ~_has_table("G", columns) & ~_has_table("B", columns))


def law_exclusion(columns: Collection[str] | None = None) -> pl.Expr:
    """Why the law leaves a ledger row unchecked: the first key of :data:`EXCLUSIONS` that
    holds; null where the law checks the row, and on other controllers' rows (list
    parameters as lists, as :func:`law_columns` reads them)."""
    ledger = pl.col("controller") == "ledger"
    return (pl.when(ledger & pl.col("max_per_round").is_not_null()).then(pl.lit("capped"))
            .when(ledger & (pl.col("gain") != 1)).then(pl.lit("damped"))
            .when(ledger & ~_seed_world_but_delays(columns)).then(pl.lit("world"))
            .when(ledger & ~_fixed_delays(columns)).then(pl.lit("varying"))
            .otherwise(pl.lit(None, dtype=pl.String)))


def law_columns(columns: Collection[str] | None = None) -> list[pl.Expr]:
    """Columns ``law_overshoot`` and ``law_holds`` (null unless the controller is an
    uncapped, undamped ``ledger`` in seed 001's world; with observe="created" the
    ceil(G / U) analogue), ``above_boundary`` (U >= G + B), ``law_overshoot_worst`` (the
    worst-case law, null unless an uncapped, undamped ``ledger`` in seed 001's world but
    for spreads and jitter) and ``above_boundary_worst``, computed from a frame of
    simulated cells (list parameters as lists). Given its ``columns``, the world parameters
    the frame lacks take their defaults."""
    ledger = ((pl.col("controller") == "ledger") & pl.col("max_per_round").is_null()
              & (pl.col("gain") == 1) & _seed_world_but_delays(columns))
    fixed = _fixed_delays(columns)
    blind_rounds = (listing_delay() + pl.col("U") - 1) // pl.col("U")
    law = pl.when(ledger & fixed).then(pl.col("desired") * (blind_rounds - 1))
    shortest = boundary_interval(columns)
    worst_rounds = (worst_listing_delay(columns) + shortest - 1) // shortest
    return [
        law.alias("law_overshoot"),
        pl.when(ledger & fixed).then(pl.col("overshoot") == law).alias("law_holds"),
        (pl.col("U") >= pl.col("G") + pl.col("B")).alias("above_boundary"),
        pl.when(ledger).then(pl.col("desired") * (worst_rounds - 1))
        .alias("law_overshoot_worst"),
        (shortest >= pl.col("G") + worst_extra("G", columns) + pl.col("B")
         + worst_extra("B", columns)).alias("above_boundary_worst"),
    ]


def _int(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Int64)


def _ceil_div(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """⌈a / b⌉ in integers, for a ≥ 0 and b ≥ 1."""
    return (a + b - 1) // b


def _created() -> pl.Expr:
    return pl.col("observe").eq_missing("created")


def in_readings() -> pl.Expr:
    """Rows the law's readings cover: those of ``law_overshoot_worst``."""
    return pl.col("law_overshoot_worst").is_not_null()


#: The hidden columns :func:`delay_reads` adds: each delay's reads, for tables whose list
#: columns are later turned into text (the report's).
READ_PREFIX: Final = "__read_"


def delay_reads() -> list[pl.Expr]:
    """Each delay's (G's, B's) exact reads as columns ``__read_G_lowest`` … (lowest, p99,
    worst, mean numerator and denominator), from the parameters as stored (lists as lists):
    :func:`law_readings` with ``stored=True`` reads them instead of the lists."""
    out = []
    for d in ("G", "B"):
        moment, total = mean_extra(d)
        out += [lowest_extra(d).alias(f"{READ_PREFIX}{d}_lowest"),
                quantile_extra(d, LAW_LEVEL_PPM).alias(f"{READ_PREFIX}{d}_p99"),
                worst_extra(d).alias(f"{READ_PREFIX}{d}_worst"),
                moment.alias(f"{READ_PREFIX}{d}_moment"), total.alias(f"{READ_PREFIX}{d}_total")]
    return out


def delay_tables() -> list[pl.Expr]:
    """Whether each delay (G's, B's) is drawn from a table, as columns ``__read_G_table`` and
    ``__read_B_table``, from the parameters as stored (lists as lists): for tables whose
    list columns are later turned into text (the report's), where telling a table from none
    would otherwise mean writing the whole table out on every row."""
    return [_has_table(d, None).alias(f"{READ_PREFIX}{d}_table") for d in ("G", "B")]


def _read(delay: str, what: str, stored: bool) -> pl.Expr:
    """``delay``'s lowest or p99 extra: its column of :func:`delay_reads`, or read anew."""
    if stored:
        return pl.col(f"{READ_PREFIX}{delay}_{what}")
    return lowest_extra(delay) if what == "lowest" else quantile_extra(delay, LAW_LEVEL_PPM)


def _read_mean(delay: str, stored: bool) -> tuple[pl.Expr, pl.Expr]:
    if stored:
        return (pl.col(f"{READ_PREFIX}{delay}_moment"), pl.col(f"{READ_PREFIX}{delay}_total"))
    return mean_extra(delay)


def law_lowest(stored: bool = False) -> pl.Expr:
    """The law at the lowest delays (a delay table's first value) and the longest interval
    (null outside the readings)."""
    g, b, u, j, d = _int("G"), _int("B"), _int("U"), _int("U_jitter"), _int("desired")
    g, b = g + _read("G", "lowest", stored), b + _read("B", "lowest", stored)
    delay = pl.when(_created()).then(g).otherwise(g + b)
    return pl.when(in_readings()).then(d * (_ceil_div(delay, u + j) - 1)).alias("law_lowest")


def law_mean(stored: bool = False) -> pl.Expr:
    """The law at the mean delays and the mean interval, exactly (null outside the
    readings).

    The mean delay is ``N / D``: G plus the mean extra ledger delay ``n_G / d_G`` (a
    spread's ``G_spread / 2``, a table's ``sum(v w) / sum(w)``), plus B and its mean extra
    ``n_B / d_B`` unless observe = created; so ``N = (G d_G + n_G) d_B + (B d_B + n_B) d_G``
    and ``D = d_G d_B``. The interval after a periodic round is ``max(1, U - J + Z)``, Z
    uniform in 0 … 2J, whose sum over the 2J + 1 values of Z is ``(2J + 1)·U + c(c + 1)/2``
    with ``c = max(0, J + 1 - U)``. So the ratio is ``N · 2(2J + 1) / (D · 2 · that sum)``,
    whose ceiling is taken in 128-bit integers (a table's total weight is at most 10⁹).
    """
    g, b, u, j = (_int(n).cast(pl.Int128) for n in ("G", "B", "U", "U_jitter"))
    (n_g, d_g), (n_b, d_b) = _read_mean("G", stored), _read_mean("B", stored)
    listed = (g * d_g + n_g) * d_b
    numerator = pl.when(_created()).then(listed).otherwise(listed + (b * d_b + n_b) * d_g)
    c = pl.max_horizontal(pl.lit(0, dtype=pl.Int128), j + 1 - u)
    twice_sum = 2 * (2 * j + 1) * u + c * (c + 1)
    rounds = _ceil_div(numerator * 2 * (2 * j + 1), d_g * d_b * twice_sum).cast(pl.Int64)
    return pl.when(in_readings()).then(_int("desired") * (rounds - 1)).alias("law_mean")


def law_p99(stored: bool = False) -> pl.Expr:
    """The law at each delay's 99th percentile (:data:`LAW_LEVEL_PPM`; a spread's or a
    delay table's, :func:`quantile_extra`) and the shortest interval, as ``law_worst``
    reads the longest (null outside the readings)."""
    g, b, d = _int("G"), _int("B"), _int("desired")
    g = g + _read("G", "p99", stored)
    delay = pl.when(_created()).then(g).otherwise(g + b + _read("B", "p99", stored))
    shortest = boundary_interval()
    return pl.when(in_readings()).then(d * (_ceil_div(delay, shortest) - 1)).alias("law_p99")


def law_worst() -> pl.Expr:
    """The law at the worst delays: ``law_overshoot_worst``."""
    return pl.col("law_overshoot_worst").cast(pl.Int64).alias("law_worst")


def law_readings(stored: bool = False) -> list[pl.Expr]:
    """``law_lowest``, ``law_mean``, ``law_p99`` and ``law_worst``, from a table with the law
    columns (``stored``: and the columns of :func:`delay_reads`, in place of the lists)."""
    return [law_lowest(stored), law_mean(stored), law_p99(stored), law_worst()]


def boundary_interval(columns: Collection[str] | None = None) -> pl.Expr:
    """The left side of :data:`BOUNDARY_WORST`: the shortest interval between periodic rounds,
    ``max(1, U - U_jitter)`` (U itself where rounds do not jitter). Given the frame's
    ``columns``, a missing ``U_jitter`` is its default."""
    return pl.max_horizontal(pl.lit(1, dtype=pl.Int64),
                             _int("U") - _param("U_jitter", columns).cast(pl.Int64))


def boundary_delay(stored: bool = False) -> pl.Expr:
    """The right side of :data:`BOUNDARY_WORST`: the longest delay from a copy's creation to
    its listing, ``G + G↑ + B + B↑`` (G + B where the delays are fixed), from the parameters
    as stored or (``stored``) the columns of :func:`delay_reads`."""
    g, b = (pl.col(f"{READ_PREFIX}{d}_worst") if stored else worst_extra(d) for d in ("G", "B"))
    return _int("G") + g + _int("B") + b


def drawn_from_table(delay: str, stored: bool = False) -> pl.Expr:
    """Rows that draw ``delay`` (``"G"`` or ``"B"``) from a delay table, from the parameters
    as stored or (``stored``) the column of :func:`delay_tables`."""
    return pl.col(f"{READ_PREFIX}{delay}_table") if stored else _has_table(delay, None)


def delays_vary(stored: bool = False) -> pl.Expr:
    """Rows whose delays or period vary from copy to copy or round to round: a spread or a
    jitter above 0, or a delay table (:func:`drawn_from_table`, ``stored`` alike)."""
    return ((pl.col("G_spread").cast(pl.Int64) > 0) | (pl.col("B_spread").cast(pl.Int64) > 0)
            | (pl.col("U_jitter").cast(pl.Int64) > 0) | drawn_from_table("G", stored)
            | drawn_from_table("B", stored))


def above_its_boundary(stored: bool = False) -> pl.Expr:
    """A row's side of the boundary of its own delays, true on or above it: the column
    ``above_boundary`` (:data:`BOUNDARY`) where they are fixed, ``above_boundary_worst``
    (:data:`BOUNDARY_WORST`: the longest delays, the shortest interval) where they vary
    (:func:`delays_vary`, ``stored`` alike), from a frame with :func:`law_columns`."""
    return (pl.when(delays_vary(stored)).then(pl.col("above_boundary_worst"))
            .otherwise(pl.col("above_boundary")))


def side_counts(above: pl.Expr, overshooting: pl.Expr | None = None) -> list[pl.Expr]:
    """A group of rows counted on each side of the boundary, as aggregates: ``above_cells``
    and ``below_cells``, the rows on or above it and below it (``above``: a row's side,
    :func:`above_its_boundary` or a column), and ``above_positive`` and ``below_positive``,
    those of them that overshoot (``overshooting``; by default ``overshoot > 0``).

    >>> frame = pl.DataFrame({"above": [True, True, False], "overshoot": [0, 2, 3]})
    >>> frame.select(side_counts(pl.col("above"))).row(0, named=True)
    {'above_cells': 2, 'above_positive': 1, 'below_cells': 1, 'below_positive': 1}
    """
    positive = pl.col("overshoot") > 0 if overshooting is None else overshooting
    return [above.sum().alias("above_cells"), (above & positive).sum().alias("above_positive"),
            (~above).sum().alias("below_cells"), (~above & positive).sum().alias("below_positive")]


def law_digest() -> str:
    """A digest of :func:`law_columns` as polars states them (every parameter column
    present): law columns stored beside a digest equal to today's were computed by today's
    laws from the same row, so they need no checking row by row."""
    text = ";".join(str(e) for e in law_columns())
    return hashlib.sha256(f"{pl.__version__};{text}".encode()).hexdigest()[:16]


# --- The law per step of desired: a cell's first change of desired (``scale``), from a
# settled start. A change of Δ at second a is seed 001's experiment again, with Δ in
# place of desired: the first round at or after a comes φ = (-a) mod U seconds later
# (the step's phase), sees the settled count and corrects by Δ; a ``ledger`` round keeps
# seeing that count until the new copies are listed, L = G + B seconds (G with observe =
# "created") after they were created, and so creates Δ again at each of the next
# ⌈L / U⌉ - 1 rounds. Derived, and checked on every cell below, for the three built-in
# controllers that decide in rounds:
#
# * a step up (Δ > 0): ``ledger`` overshoots by Δ x (⌈L / U⌉ - 1), ``intent`` and
#   ``expectations`` (which remember what they asked for) by 0; and every one of the three
#   misses Δ x (φ + B) copy-seconds: the new copies are missing from a until they are
#   ready, B seconds after the first round. The overshoot law needs the last extra copies
#   to start before the first surplus delete lands: true when ⌈L / U⌉ ≤ 1 or B < 2U (the
#   first delete comes 2U after the last extra creation's round; with B ≥ 2U the peak is
#   lower);
# * a step down (Δ < 0): the first round deletes |Δ| copies, which stay on the ledger G
#   seconds; ``ledger`` and ``intent`` delete |Δ| again at each round before that,
#   ⌈G / U⌉ - 1 of them, all to the same removed copies (the oldest entries): |Δ| x (⌈G / U⌉
#   - 1) wasted deletes and no undershoot; ``expectations`` waits for its deletions to be
#   observed: none wasted. (``expectations`` holds to both while its ``ttl`` is at least
#   the delay it waits for: L up, G down.)
#
# The conditions, each a reason a cell is left unchecked (:data:`STEP_EXCLUSIONS`): the
# law's world (seed 001's with fixed delays, no cap, no damping), a settled start (initial
# = desired: every copy listed, nothing pending), the step is the cell's first event (no
# death at or before it), its window (up to the next event, or the end) holds the whole
# response, and the two conditions above.

#: The laws per step, as text.
STEP_LAWS: Final = {
    "overshoot": "\u0394 \u00d7 (\u2308L / U\u2309 \u2212 1)",
    "missing": "\u0394 \u00d7 (\u03c6 + B)",
    "wasted": "|\u0394| \u00d7 (\u2308G / U\u2309 \u2212 1)",
}
#: The controllers the step laws speak of.
STEP_CONTROLLERS: Final = ("ledger", "intent", "expectations")
#: Why a step is left unchecked, the first that holds first, in words.
STEP_EXCLUSIONS: Final = {
    **EXCLUSIONS,
    "unsettled": "a start that is not settled (initial is not desired)",
    "after_death": "a death event at or before the step",
    "cut_short": "a window too short for the response (the next event or the end comes "
                 "first)",
    "slow_start": "a startup of two periods or more (B \u2265 2U) with more than one "
                  "blind round: the first surplus delete lands before the last extra copy "
                  "starts",
    "ttl": "an expectations ttl shorter than the step's listing delay (L up, G down): its "
           "wait expires before what it asked for is observed",
}
#: The hidden columns of :func:`step_columns`.
STEP_PREFIX: Final = "__step_"


def step_columns(columns: Collection[str] | None = None) -> list[pl.Expr]:
    """The law per step of each cell's first change of desired, as columns
    ``__step_<name>`` (:data:`STEP_PREFIX`), from a table of simulated cells (list
    parameters as lists, the ``responses`` column as the model writes it): ``at``, ``delta``
    (Δ, the new desired minus ``desired``), ``phase`` (φ), ``law`` and ``measured`` (a step
    up: the overshoot; a step down: the wasted deletes), ``missing_law`` and ``missing`` (a
    step up only), ``undershoot`` (a step down only; the law says 0), ``excluded`` (why the
    step is unchecked, a key of :data:`STEP_EXCLUSIONS`) and ``holds`` (null where there is
    no step of a controller of :data:`STEP_CONTROLLERS`, or it is excluded). Given its
    ``columns``, the world parameters the frame lacks take their defaults."""
    change = pl.col("scale").list.first()
    at, to = change.struct.field("at"), change.struct.field("desired")
    u, g, b = _int("U"), _int("G"), _int("B")
    delta = to - _int("desired")
    phase = (u - at % u) % u
    first_round = at + phase
    listing = pl.when(_param("observe", columns) == "created").then(g).otherwise(g + b)
    blind = pl.max_horizontal(pl.lit(0), _ceil_div(listing, u) - 1)
    stale = pl.max_horizontal(pl.lit(0), _ceil_div(g, u) - 1)
    response = pl.col("responses").list.first()
    window_end = (pl.col("responses").list.get(1, null_on_oob=True).struct.field("at") - 1
                  ).fill_null(_int("duration"))
    ledger, intent = pl.col("controller") == "ledger", pl.col("controller") == "intent"
    up = delta > 0
    initial = _param("initial", columns).cast(pl.Int64)
    settled = (initial == NAMED) | (initial == _int("desired"))
    first_death = pl.col("deaths").list.eval(pl.element().struct.field("at")).list.min()
    reach = pl.when(up & ledger).then(first_round + blind * u + b).when(up).then(
        first_round + b).otherwise(first_round + stale * u)
    excluded = (
        pl.when(pl.col("max_per_round").is_not_null()).then(pl.lit("capped"))
        .when(_param("gain", columns) != 1).then(pl.lit("damped"))
        .when(~_seed_world_but_delays(columns)).then(pl.lit("world"))
        .when(~_fixed_delays(columns)).then(pl.lit("varying"))
        .when(~settled).then(pl.lit("unsettled"))
        .when(first_death.is_not_null() & (first_death <= at)).then(pl.lit("after_death"))
        .when((reach > window_end) | (~up & (pl.col("responses").list.len() > 1)))
        .then(pl.lit("cut_short"))
        .when(up & ledger & (blind >= 1) & (b >= 2 * u)).then(pl.lit("slow_start"))
        .when((pl.col("controller") == "expectations")
              & (_param("ttl", columns) < pl.when(up).then(listing).otherwise(g)))
        .then(pl.lit("ttl"))
        .otherwise(pl.lit(None, dtype=pl.String)))
    stepped = pl.col("controller").is_in(STEP_CONTROLLERS) & (pl.col("scale").list.len() > 0) \
        & (at <= _int("duration")) & (delta != 0)
    law = pl.when(up & ledger).then(delta * blind).when(up).then(0).when(ledger | intent).then(
        -delta * stale).otherwise(0)
    measured = pl.when(up).then(response.struct.field("overshoot")).otherwise(
        _int("delete_commands") - _int("deleted"))
    missing_law = pl.when(up).then(delta * (phase + b))
    missing = pl.when(up).then(response.struct.field("missing"))
    undershoot = pl.when(~up).then(response.struct.field("undershoot"))
    holds = (measured == law) & (missing.is_null() | (missing == missing_law)) & (
        undershoot.is_null() | (undershoot == 0))
    named = {"at": at, "delta": delta, "phase": phase, "law": law, "measured": measured,
             "missing_law": missing_law, "missing": missing, "undershoot": undershoot,
             "excluded": excluded, "holds": pl.when(excluded.is_null()).then(holds)}
    return [pl.when(stepped).then(expr).alias(f"{STEP_PREFIX}{name}")
            for name, expr in named.items()]


# --- A rollout's duration: the Deployment world (:mod:`reconsim.model.deployment`), one
# template change at second r from a settled start. The derivation and its conditions are
# :func:`rollout_columns`' docstring (and docs/deployment.md's last section).

#: The law of a rollout's duration, as text (``rollout_done_at`` - r).
ROLLOUT_LAW: Final = ("max(T(N) + B + minReady, V(N \u2212 U) + grace): T(X), the second the "
                      "X-th new pod is created, V(X) when the Deployment controller sees it "
                      "available, in waves of S + U pods one wave time apart")
#: The wave time (a new pod's creation to its availability in the ReplicaSet's status, as
#: the Deployment controller reads it), as text.
WAVE_TIME: Final = ("B + G (minReady 0 or G > minReady); B + 2\u00b7minReady (G = 0); "
                    "B + G + minReady (0 < G \u2264 minReady)")
#: The rows the law speaks of (where :func:`rollout_columns` is not null), in words.
ROLLOUT_SCOPE: Final = ("the Deployment world's cells with a template change within the run "
                        "(controller deployment)")
#: Why the law leaves a rollout unchecked, the first that holds first, in words.
ROLLOUT_EXCLUSIONS: Final = {
    "unsettled": "a start that is not settled (initial is not desired): the first pods are "
                 "still being created and readied when the template changes",
    "rollover": "a second template change (a rollover, a second rollout, or one after the "
                "run: rollout_done_at counts from the last)",
    "scaled": "a change of desired at or before the predicted end",
    "death": "a death event at or before the predicted end",
    "staggered": "a first wave in two batches (surge and unavailable both above 0, surge "
                 "below desired, G > 0, r > 0) with G \u2264 minReady < 2G: the status shows "
                 "the two batches available on different requeues and the waves after them "
                 "stagger",
    "slow_cache": "a pod cache delay G of 300 s or more: the ReplicaSet controller's "
                  "expectations expire before its own pods are seen",
    "long_wave": "a wave time longer than progressDeadlineSeconds (600 s): the progress "
                 "deadline passes mid-rollout",
}
#: The hidden columns of :func:`rollout_columns`.
ROLLOUT_PREFIX: Final = "__rollout_"


def resolved_budget(value: pl.Expr, desired: pl.Expr, *, round_up: bool) -> pl.Expr:
    """A ``maxSurge`` or ``maxUnavailable`` column (``"3"`` or ``"25%"``) against
    ``desired``, as ``intstr.GetScaledValueFromIntOrPercent``: a count as it is, a
    percentage of desired rounded up (surge) or down (unavailable), in integers.

    >>> f = pl.DataFrame({"v": ["25%", "25%", "3"], "n": [3, 4, 1]})
    >>> f.select(resolved_budget(pl.col("v"), pl.col("n"), round_up=True))["v"].to_list()
    [1, 1, 3]
    """
    _, number, percent = IntOrPercent.parts(value)
    scaled = number * desired
    share = _ceil_div(scaled, pl.lit(100)) if round_up else scaled // 100
    return pl.when(percent).then(share).otherwise(number)


def rollout_columns(columns: Collection[str] | None = None) -> list[pl.Expr]:
    """The law of a rollout's duration, as hidden columns ``__rollout_<name>``
    (:data:`ROLLOUT_PREFIX`) of a table of the Deployment world's cells (list parameters as
    lists): ``at`` (r, the template change), ``surge`` (S) and ``unavailable`` (U, the
    budgets the controller uses), ``waves`` (⌈N / (S + U)⌉), ``wave`` (A, the wave time),
    ``law`` (the predicted ``rollout_done_at`` - r), ``measured`` (``rollout_done_at`` - r,
    null if never done), ``excluded`` (why the law leaves the cell unchecked, a key of
    :data:`ROLLOUT_EXCLUSIONS`) and ``holds`` (r + law ≤ duration: ``rollout_done_at`` =
    r + law; past the end: ``rollout_done_at`` null). All null on rows of other
    controllers and on rows without a template change within the run. Given its
    ``columns``, a frame without ``initial`` is settled.

    **The derivation.** N = desired; S = maxSurge rounded up, U = maxUnavailable rounded
    down, U = 1 if both are 0 (``ResolveFenceposts``), and U at most N (``MaxUnavailable``).
    At r the Deployment controller creates the new ReplicaSet with S replicas and scales
    the old one down by U; the next sync, at the same instant, raises the new one to
    min(N, S + U). From then on, whenever the new ReplicaSet's status shows a_n more pods
    available, one instant lowers the old one to max(0, N - U - a_n) and raises the new one
    to min(N, S + U + a_n): the rollout runs in *waves* of P = S + U pods, ⌈N / P⌉ of them,
    each created when the one before is seen available.

    *The wave time* A, from a pod's creation to its availability in its ReplicaSet's
    status: it is Ready B s after creation (second R), its Ready update reaches the cache
    at R + G and syncs the ReplicaSet. With minReady 0 that sync shows it: A = B + G. With
    minReady m > 0 it counts only when R + m is strictly before the instant: at R + G if
    G > m (A = B + G); otherwise that sync finds ready = spec ≠ available and requeues in
    m s, at R + G + m (A = B + G + m), and with G = 0 once more, since R + m is not strictly
    past at R + m (A = B + 2m).

    *The split first wave*: with S > 0, U > 0, S < N, G > 0 and r > 0 the ReplicaSet
    controller creates the first wave in two batches, S pods at r and U pods G s later (its
    expectations wait for the first batch's adds). The two batches then run as two chains,
    the batch of each created when the other chain's batch before it is seen available,
    and no sooner than G after the other chain's last creation: the k-th S batch at k·W,
    the k-th U batch at G + k·W, W = max(A, 2G). With 0 < G ≤ m the second batch's Ready
    update does not yet requeue at ready = spec, and the first wave is seen at once, at
    B + G + m + 1 (the 1 s of the Ready update's own requeue, ``AddAfter(m + 1 s)``);
    from then on the waves are single batches again. At r = 0 the ReplicaSet controller's
    queue holds the start's list first, its first sync comes after both scale-ups, and
    the first wave is one batch.

    *The end*: ``rollout_done_at`` needs every new pod truly available (its creation
    + B + m) and no old pod left: the old ReplicaSet reaches 0 when the status shows
    N - U new pods available, its last pods leave ``grace`` s later (none left to wait for
    when U ≥ N: at r + grace). So with T(X) the second (after r) the X-th new pod is
    created and V(X) when it is seen available (T(X) + A; the merged first wave's
    B + G + m + 1):

        law = max(T(N) + B + m, V(N - U) + grace)   (V(N - U) = 0 when U ≥ N; 0 for N = 0)

    with T(X) = (⌈X / P⌉ - 1)·A, one batch a wave; for the split first wave
    min(⌈(X - S)⁺ / P⌉·W, G + (⌈X / P⌉ - 1)·W); for the merged one 0 (X ≤ S), G (X ≤ P)
    or B + G + m + 1 + (⌈X / P⌉ - 2)·A.

    **The conditions** (the exclusions, :data:`ROLLOUT_EXCLUSIONS`, the first that holds
    first): a settled start; one template change; no change of desired
    and no death at or before r + law; not a split first wave with G ≤ m < 2G (then the
    first batch is seen at B + 2G, at the second batch's Ready update, and the second at
    B + G + m + 1: two chains whose later batches wait for each other's expectations);
    G below the expectations' 300 s timeout and a wave time within the progress deadline
    (600 s), the regimes the derivation assumes. Checked against the reference model on
    every cell of grids of 32,640 cells, 27,594 of them checked, none failing
    (docs/deployment.md; tests/test_rollout_law.py runs a smaller one).
    """
    n = _int("desired")
    g, b, m, grace = _int("G"), _int("B"), _int("min_ready"), _int("grace")
    at = pl.col("rollout").list.first().cast(pl.Int64)
    surge = resolved_budget(pl.col("max_surge"), n, round_up=True)
    unavailable = resolved_budget(pl.col("max_unavailable"), n, round_up=False)
    unavailable = pl.min_horizontal(
        pl.when((surge == 0) & (unavailable == 0)).then(pl.lit(1)).otherwise(unavailable), n)
    p = pl.max_horizontal(surge + unavailable, pl.lit(1))
    wave = (pl.when(m == 0).then(b + g).when(g == 0).then(b + 2 * m)
            .when(g <= m).then(b + g + m).otherwise(b + g))
    split = (surge > 0) & (unavailable > 0) & (surge < n) & (g > 0) & (at > 0)
    merged = split & (g <= m)
    period = pl.when(split).then(pl.max_horizontal(wave, 2 * g)).otherwise(wave)
    first_seen = b + g + m + 1

    def created(x: pl.Expr) -> pl.Expr:
        """T(x): the second after r the x-th new pod is created (x ≥ 1)."""
        waves = _ceil_div(x, p)
        return (pl.when(merged).then(
                    pl.when(x <= surge).then(0).when(x <= p).then(g)
                    .otherwise(first_seen + (waves - 2) * wave))
                .when(split).then(pl.min_horizontal(
                    _ceil_div(pl.max_horizontal(x - surge, pl.lit(0)), p) * period,
                    g + (waves - 1) * period))
                .otherwise((waves - 1) * wave))

    def seen(x: pl.Expr) -> pl.Expr:
        """V(x): the second after r the x-th new pod is available in the status."""
        return pl.when(merged & (x <= p)).then(first_seen).otherwise(created(x) + wave)

    old = n - unavailable
    law = pl.when(n == 0).then(pl.lit(0, dtype=pl.Int64)).otherwise(pl.max_horizontal(
        created(n) + b + m, pl.when(old > 0).then(seen(old)).otherwise(0) + grace))
    end = at + law
    duration = _int("duration")
    initial = (_int("initial") if columns is None or "initial" in columns
               else pl.lit(NAMED, dtype=pl.Int64))
    settled = (initial == NAMED) | (initial == n)
    second = pl.col("rollout").list.get(1, null_on_oob=True).cast(pl.Int64)
    scale_at = pl.col("scale").list.eval(pl.element().struct.field("at")).list.min()
    death_at = pl.col("deaths").list.eval(pl.element().filter(
        pl.element().struct.field("count") > 0).struct.field("at")).list.min()
    scaled = (scale_at.cast(pl.Int64) <= end).fill_null(value=False)
    died = (death_at.cast(pl.Int64) <= end).fill_null(value=False)
    excluded = (
        pl.when(~settled).then(pl.lit("unsettled"))
        .when(second.is_not_null()).then(pl.lit("rollover"))
        .when(scaled).then(pl.lit("scaled"))
        .when(died).then(pl.lit("death"))
        .when(merged & (m < 2 * g)).then(pl.lit("staggered"))
        .when(g >= EXPECTATIONS_TIMEOUT).then(pl.lit("slow_cache"))
        .when(wave > PROGRESS_DEADLINE).then(pl.lit("long_wave"))
        .otherwise(pl.lit(None, dtype=pl.String)))
    done = _int("rollout_done_at")
    holds = pl.when(end <= duration).then(done.eq_missing(end)).otherwise(done.is_null())
    rolled = (pl.col("controller") == "deployment") & (pl.col("rollout").list.len() > 0) & (
        at <= duration)
    named = {"at": at, "surge": surge, "unavailable": unavailable, "waves": _ceil_div(n, p),
             "wave": wave, "law": law, "measured": done - at, "excluded": excluded,
             "holds": pl.when(excluded.is_null()).then(holds)}
    return [pl.when(rolled).then(expr).alias(f"{ROLLOUT_PREFIX}{name}")
            for name, expr in named.items()]

