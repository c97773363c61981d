"""Faults and real control planes: each fault family and semantic switch of the richer world,
every controller's overshoot, unneeded copies, wasted deletes and missing copy-seconds
against its twin cells; under ``trigger = "watch"``, overshoot against the resync period.

A cell's **twin** for a switch is the cell equal in every other parameter (the seed
included, so both draw the same random numbers) with that switch at its default:
``create_faults`` none, ``fail_rate`` 0, ``lost_rate`` 0, ``lag`` none, ``delete_order``
oldest, ``grace`` 0, ``trigger`` periodic, ``slow_start`` false. One switch is compared at a
time; other switches stay as the cell has them. The twins are joined lazily (null matches
null: parameters that do not apply); cells whose twin the sweep does not hold are counted
per switch and value and said, never dropped silently, and a twin key matched more than
once is counted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.kinds import Records
from reconsim.model.metrics import derived, percentile_expr
from reconsim.model.params import BY_NAME, DEFAULTS, applies
from reconsim.report.blocks import macro
from reconsim.report.charts import Figure, finish, inline
from reconsim.report.load import Sweep
from reconsim.report.query import collect, first_rows, flat_value, in_order, lazy
from reconsim.report.section import Context, Section
from reconsim.sweep.table import unflat
from reconsim.web.html import plain

#: The fault families and semantic switches, each with what it models.
SWITCHES: Final[Mapping[str, str]] = {
    "create_faults": "scripted create faults (failed commands, lost replies)",
    "fail_rate": "create commands that fail at random",
    "lost_rate": "create replies lost at random",
    "lag": "stale reads: windows where the ledger read is older",
    "delete_order": "which ledger entries delete commands go to",
    "grace": "seconds a deleted copy keeps running",
    "trigger": "rounds on every change of the watched ledger, plus the periodic resync",
    "slow_start": "creates in batches 1, 2, 4, …, stopping after an error",
}
#: The figures compared with the twin: name -> expression.
FIGURES: Final[Mapping[str, pl.Expr]] = {
    "overshoot": pl.col("overshoot"),
    "unneeded": pl.col("unneeded"),
    "wasted_deletes": derived("wasted_deletes"),
    "missing_copy_seconds": pl.col("missing_copy_seconds"),
}
#: Most non-default values of one switch compared (the rest are counted).
MAX_VALUES: Final = 20
#: Cells listed per switch value: those whose overshoot rose most over their twin's.
WORST: Final = 5
#: Level of the resync table's tail figure's percentile (nearest rank).
TAIL: Final = 0.95


def default_value(switch: str) -> Any:
    """A switch's default as the report's table holds it (schedules flattened: ``none``)."""
    return flat_value(DEFAULTS[switch])


@dataclass(frozen=True, slots=True)
class Change:
    """One figure over a controller's twinned cells: the cells' mean, the twins' mean, the
    mean change, how many cells are worse (higher), better or the same, the extremes."""

    figure: str
    mean: float | None
    twin_mean: float | None
    change_mean: float | None
    worse: int
    better: int
    same: int
    change_min: int | None
    change_max: int | None


@dataclass(frozen=True, slots=True)
class ControllerChange:
    """One controller under one switch value: its cells, how many have a twin, the figures."""

    controller: str
    cells: int
    twinned: int
    untwinned: int
    changes: tuple[Change, ...]


@dataclass(frozen=True, slots=True)
class SwitchValue:
    """One non-default value of a switch: every controller against its twins, and the cells
    whose overshoot rose most (bounded)."""

    switch: str
    value: str
    cells: int
    twinned: int
    untwinned: int
    matched_twice: int
    controllers: tuple[ControllerChange, ...]
    worst: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class ResyncRow:
    """Under the watch trigger, one controller at one resync period U: its cells'
    overshoot (mean, median, p95 by nearest rank, max) and median rounds."""

    controller: str
    U: int
    cells: int
    overshooting: int
    mean: float
    median: float
    p95: float
    max: int
    rounds_median: float


@dataclass(frozen=True, slots=True)
class Gate:
    """The real controller (``replicaset``) against the idealised gate (``expectations``) on
    the cells with create faults that both ran alike (every other parameter equal, the seed
    included): what its immediate retry and its write-off of lost replies cost and save.
    Each change is the real controller's figure minus the gate's, summed over the pairs.
    The two controllers differ elsewhere too (a stale read makes the real one duplicate):
    ``fault_*`` is the part the faults make, summed over the ``twinned`` pairs whose
    fault-free twins (the same cells with every create-fault switch at its default) both
    ran — the pair's change less its twins' change."""

    pairs: int
    faulty: int  # replicaset cells with create faults (paired or not)
    duplicates: int  # change of unneeded copies (created beyond need)
    wasted_deletes: int  # change of delete commands that removed nothing
    missing_copy_seconds: int  # change of missing copy-seconds (negative: saved)
    more_duplicates: int  # pairs where the real controller made more unneeded copies
    less_missing: int  # pairs where it missed fewer copy-seconds
    twinned: int = 0  # pairs whose fault-free twins both ran
    fault_duplicates: int = 0
    fault_wasted_deletes: int = 0
    fault_missing_copy_seconds: int = 0


@dataclass(frozen=True, slots=True)
class Faults:
    """The section's summary (``summary.json``'s ``faults``)."""

    cells: int
    of: int
    switches_present: tuple[str, ...]
    values: tuple[SwitchValue, ...]
    values_not_compared: int
    watch_cells: int
    resync: tuple[ResyncRow, ...]
    #: The real ReplicaSet controller against the gate, where the sweep ran both.
    gate: Gate | None = None


def _present(sweep: Sweep) -> dict[str, list[Any]]:
    """Each switch's non-default values in the sweep (those it varies or holds constant)."""
    out = {}
    for s in SWITCHES:
        if s in sweep.axis_facts:
            values = [v for v in sweep.axis_facts[s].values if v != default_value(s)]
            if values:
                out[s] = values
    return out


def _label(switch: str, value: Any) -> str:
    """A switch's value as ``reconsim run``'s flag spells it: ``true``, ``0.05``, a list of
    windows or fault events as ``300:420:30`` (the table holds them as JSON)."""
    if isinstance(value, bool):
        return plain(value).lower()
    kind = BY_NAME[switch].kind
    if isinstance(kind, Records) and isinstance(value, str):
        return ",".join(":".join(map(str, r)) for r in unflat(kind, value)) or "none"
    return plain(value)


def _compare(sweep: Sweep, switch: str, value: Any) -> SwitchValue:
    """The cells with ``switch == value`` joined with their twins (same parameters but the
    switch at its default), per controller."""
    key = [a for a in sweep.axes if a != switch]
    names = list(FIGURES)
    cells = lazy(sweep.table).filter(pl.col(switch).eq_missing(value)).with_columns(
        **FIGURES).select(*key, *names)
    twins = lazy(sweep.table).filter(pl.col(switch).eq_missing(default_value(switch))
                                     ).with_columns(**FIGURES).select(
        *key, *(pl.col(n).alias(f"twin_{n}") for n in names), pl.lit(True).alias("__twin"))
    joined = cells.join(twins, on=key, how="left", nulls_equal=True).with_columns(
        (pl.col(n) - pl.col(f"twin_{n}")).alias(f"change_{n}") for n in names)
    has = pl.col("__twin").is_not_null()
    aggs: list[pl.Expr] = [pl.len().alias("rows"), has.sum().alias("twinned")]
    for n in names:
        change = pl.col(f"change_{n}")
        aggs += [pl.when(has).then(pl.col(n)).mean().alias(f"{n}__mean"),
                 pl.col(f"twin_{n}").mean().alias(f"{n}__twin_mean"),
                 change.mean().alias(f"{n}__change_mean"),
                 (change > 0).sum().alias(f"{n}__worse"), (change < 0).sum().alias(f"{n}__better"),
                 (change == 0).sum().alias(f"{n}__same"),
                 change.min().alias(f"{n}__change_min"), change.max().alias(f"{n}__change_max")]
    by = collect(joined.group_by("controller").agg(aggs))
    counts = collect(cells.group_by("controller").agg(pl.len().alias("cells")))
    n_cells = {r["controller"]: r["cells"] for r in counts.iter_rows(named=True)}
    rows = {r["controller"]: r for r in by.iter_rows(named=True)}
    per = []
    for c in in_order(rows):
        r = rows[c]
        # A cell whose twin key matches k twins gives k joined rows; one without a twin, one.
        untwinned = r["rows"] - r["twinned"]
        changes = tuple(Change(figure=n, **{f: _round(r[f"{n}__{f}"]) for f in (
            "mean", "twin_mean", "change_mean", "worse", "better", "same", "change_min",
            "change_max")}) for n in names)
        per.append(ControllerChange(controller=c, cells=n_cells[c],
                                    twinned=n_cells[c] - untwinned, untwinned=untwinned,
                                    changes=changes))
    total = sum(n_cells.values())
    twinned = sum(p.twinned for p in per)
    joined_rows = int(by["rows"].sum()) if by.height else 0
    worst: tuple[dict[str, Any], ...] = ()
    if twinned:
        shown = [a for a in key if sweep.sizes.get(a, 2) > 1]  # not the one-valued axes
        top = first_rows(joined.filter(has).select(
            *shown, "overshoot", "twin_overshoot", "change_overshoot", "change_unneeded",
            "change_missing_copy_seconds"),
            ["change_overshoot", *shown], [True, *[False] * len(shown)], WORST)
        worst = tuple(top.to_dicts())
    return SwitchValue(switch=switch, value=_label(switch, value), cells=total, twinned=twinned,
                       untwinned=total - twinned, matched_twice=joined_rows - total,
                       controllers=tuple(per), worst=worst)


def _round(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def _resync(sweep: Sweep) -> tuple[int, tuple[ResyncRow, ...]]:
    """Every watch-triggered cell, per controller and resync period U."""
    watch = lazy(sweep.table).filter(pl.col("trigger") == "watch")
    o = pl.col("overshoot")
    rows = collect(watch.group_by("controller", "U").agg(
        pl.len().alias("cells"), (o > 0).sum().alias("overshooting"), o.mean().alias("mean"),
        o.median().alias("median"), percentile_expr(o, TAIL).cast(pl.Float64).alias("p95"),
        o.max().alias("max"), pl.col("rounds").median().alias("rounds_median")))
    order = {c: i for i, c in enumerate(in_order(rows["controller"].unique()))}
    rows = rows.with_columns(pl.col("controller").replace_strict(
        order, return_dtype=pl.Int64).alias("__rank")).sort("__rank", "U").drop("__rank")
    out = tuple(ResyncRow(**{k: _round(v) for k, v in r.items()}) for r in rows.iter_rows(
        named=True))
    return int(rows["cells"].sum()) if rows.height else 0, out


#: The real controller and the gate it is compared with, and the switches that make a
#: create fail or lose its reply.
REAL, GATE = "replicaset", "expectations"
CREATE_FAULTS: Final = ("create_faults", "fail_rate", "lost_rate")


def _gate(sweep: Sweep) -> Gate | None:
    """``replicaset`` against ``expectations`` on the cells with create faults, paired on
    every axis both controllers take (parameters of one of them only are left out)."""
    if not {REAL, GATE} <= set(sweep.controllers):
        return None
    faulty = [s for s in CREATE_FAULTS if s in sweep.axis_facts]
    if not faulty:
        return None
    key = [a for a in sweep.axes if a != "controller"
           and (a not in BY_NAME or (applies(a, REAL) and applies(a, GATE)))]
    has_fault = pl.any_horizontal(pl.col(s).ne_missing(default_value(s)) for s in faulty)
    figures = {"unneeded": pl.col("unneeded"),
               "wasted_deletes": derived("wasted_deletes"),
               "missing": pl.col("missing_copy_seconds")}
    table = lazy(sweep.table).filter(has_fault).with_columns(**figures)
    real = table.filter(pl.col("controller") == REAL).select(*key, *figures)
    gate = table.filter(pl.col("controller") == GATE).select(
        *key, *(pl.col(n).alias(f"gate_{n}") for n in figures))
    change = {n: pl.col(n) - pl.col(f"gate_{n}") for n in figures}
    # The fault-free twins: the same cells, every create-fault switch at its default.
    calm = [a for a in key if a not in faulty]
    clean = lazy(sweep.table).filter(~has_fault).with_columns(**figures)
    twins = clean.filter(pl.col("controller") == REAL).select(
        *calm, *(pl.col(n).alias(f"calm_{n}") for n in figures)).join(
        clean.filter(pl.col("controller") == GATE).select(
            *calm, *(pl.col(n).alias(f"calm_gate_{n}") for n in figures)),
        on=calm, how="inner", nulls_equal=True)
    fault = {n: change[n] - (pl.col(f"calm_{n}") - pl.col(f"calm_gate_{n}")) for n in figures}
    pairs = real.join(gate, on=key, how="inner", nulls_equal=True)
    row = collect(pairs.join(twins, on=calm, how="left", nulls_equal=True).select(
        pl.len().alias("pairs"),
        *(change[n].sum().alias(n) for n in figures),
        (change["unneeded"] > 0).sum().alias("more_duplicates"),
        (change["missing"] < 0).sum().alias("less_missing"),
        pl.col("calm_unneeded").is_not_null().sum().alias("twinned"),
        *(fault[n].sum().alias(f"fault_{n}") for n in figures),
    )).row(0, named=True)
    faulty_real = int(collect(real.select(pl.len())).item())
    return Gate(pairs=row["pairs"], faulty=faulty_real, duplicates=int(row["unneeded"] or 0),
                wasted_deletes=int(row["wasted_deletes"] or 0),
                missing_copy_seconds=int(row["missing"] or 0),
                more_duplicates=int(row["more_duplicates"] or 0),
                less_missing=int(row["less_missing"] or 0),
                twinned=int(row["twinned"] or 0),
                fault_duplicates=int(row["fault_unneeded"] or 0),
                fault_wasted_deletes=int(row["fault_wasted_deletes"] or 0),
                fault_missing_copy_seconds=int(row["fault_missing"] or 0))


def faults_summary(sweep: Sweep) -> Faults:
    """The section's figures."""
    present = _present(sweep)
    values, skipped = [], 0
    for s, vs in present.items():
        for v in vs[:MAX_VALUES]:
            values.append(_compare(sweep, s, v))
        skipped += max(0, len(vs) - MAX_VALUES)
    off = pl.any_horizontal(pl.col(s).ne_missing(default_value(s)) for s in SWITCHES)
    cells = int(collect(lazy(sweep.table).select(off.sum())).item() or 0) if present else 0
    watch, resync = _resync(sweep) if "trigger" in present else (0, ())
    return Faults(cells=cells, of=sweep.cells, switches_present=tuple(present),
                  values=tuple(values), values_not_compared=skipped, watch_cells=watch,
                  resync=resync, gate=_gate(sweep) if present else None)


def summarize(sweep: Sweep) -> Faults:
    """``summary.json``'s ``faults`` (the chart draws the summary's own numbers)."""
    return faults_summary(sweep)


# ---------------------------------------------------------------- words


def resync_by_controller(f: Faults) -> dict[str, list[ResyncRow]]:
    """The resync rows per controller, each in the order of U."""
    by: dict[str, list[ResyncRow]] = {}
    for r in f.resync:
        by.setdefault(r.controller, []).append(r)
    return by


def render(f: Faults, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """Each switch value against its twins, the chart, and the resync table
    (``templates/faults.html``)."""
    defaults = {v.switch: default_value(v.switch) for v in f.values}
    return macro("faults.html", "body")(
        f, resync_by_controller(f), defaults, REAL, GATE, MAX_VALUES, figures.get("faults"),
        context.constant)


# ---------------------------------------------------------------- chart


def faults_figure(f: Faults) -> Figure | None:
    """Mean change against the twin, per switch value (rows), figure (columns) and controller
    (colour); the summary's own numbers."""
    rows = [{"switch": f"{v.switch} = {v.value}", "controller": c.controller,
             "figure": x.figure, "change": x.change_mean, "worse": x.worse,
             "better": x.better, "cells": c.twinned}
            for v in f.values for c in v.controllers for x in c.changes if c.twinned]
    if not rows:
        return None
    frame = pl.DataFrame(rows)
    controllers = in_order(frame["controller"].unique())
    chart = alt.Chart(inline(frame)).mark_bar().encode(
        y=alt.Y("controller:N", title=None, sort=controllers),
        x=alt.X("change:Q", title="mean change over the twin"),
        color=alt.Color("controller:N", sort=controllers, legend=None),
        row=alt.Row("switch:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        column=alt.Column("figure:N", title=None, sort=list(FIGURES)),
        tooltip=["switch:N", "controller:N", "figure:N", "change:Q", "cells:Q", "worse:Q",
                 "better:Q"],
    ).properties(width=200, height=16 * len(controllers)).resolve_scale(x="independent")
    title = "Faults and switches: each controller against its twin cells"
    sub = ("Per switch value (rows) and figure (columns): the mean change of the cells over "
           "their twins (same cell, same seed, that switch at its default). Right of zero: "
           "worse (more overshoot, unneeded copies, wasted deletes or missing copy-seconds).")
    return Figure("faults", title, finish(chart, title, sub), {"marks": frame.height})


def charts(f: Faults, context: Context) -> list[Figure]:
    """The chart, when some switch value has twins."""
    fig = faults_figure(f)
    return [fig] if fig is not None else []


@dataclass(frozen=True, slots=True)
class Rise:
    """The largest mean rise of overshoot over the twins: by how much, where."""

    change_mean: float
    switch: str
    value: str
    controller: str


def largest_rise(f: Faults) -> Rise | None:
    """The controller and switch value whose overshoot rose most over the twins, on average
    (None where no value is compared)."""
    rises = [Rise(x.change_mean, v.switch, v.value, c.controller)
             for v in f.values if v.twinned for c in v.controllers
             for x in c.changes if x.figure == "overshoot" and x.change_mean is not None]
    return max(rises, key=lambda r: (r.change_mean, r.switch, r.value, r.controller),
               default=None)


def glance(f: Faults) -> Markup | None:
    """The section's one sentence (None when no switch is off its default)."""
    if not f.switches_present:
        return None
    return macro("faults.html", "glance")(f, largest_rise(f))


SECTION = Section("faults", summarize, render, charts, glance,
                  title="Faults and real control planes")

