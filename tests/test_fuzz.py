"""A fuzzer: generated sweep specs and ``reconsim run`` argument lists, valid and hostile.

The property, for every input: exit 0 with metrics equal to the reference model's (checked
where the reference is cheap), or exit 2 with exactly one line on stderr and no DIR. Never a
traceback, never exit 1, never a refusal after any cell was simulated: a refusal costs what
reading the input costs, not what the numbers in it imply (no grid expanded, no kernel
run; ``bench/bench_refusal.py`` times the refusals of the hostile inputs against their
budget). The CLI runs in this process (``reconsim.cli.main``). ``RECONSIM_FUZZ_EXAMPLES``
sets the examples per test (default: a quick run for CI); a long campaign is that variable
set high.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from reconsim import METRIC_NAMES, METRICS, Cell, run_reference, scan
from reconsim.cli import build_parser, main
from reconsim.model.controllers import registry
from reconsim.model.kernels import count as count_kernel
from reconsim.model.kernels import world as world_kernel
from reconsim.model.kinds import Flag
from reconsim.model.metrics import RESPONSES
from reconsim.model.params import (
    DELETE_ORDERS,
    FAULT_KINDS,
    MAX_COPIES,
    MAX_EVENTS,
    MAX_SECONDS,
    OBSERVE,
    PARAMS,
    TRIGGERS,
    UNLIMITED,
)
from reconsim.sweep import runner
from reconsim.sweep.spec import AXES
from tests.helpers.hostile import hostile_text, toml_document

#: Examples of the spec fuzzer; the run fuzzer, ten times quicker an example, gets twice as many.
EXAMPLES = int(os.environ.get("RECONSIM_FUZZ_EXAMPLES", "80"))
#: What simulating takes: the kernels' compiled loops (each controller's, fetched by
#: ``_kernels`` just before they run), and a sweep's grid expanded into cells. A refusal
#: calls none of them.
SIMULATING = ((count_kernel, "_kernels"), (world_kernel, "_kernels"), (runner, "expand"))
#: Cells a generated sweep may run: enough to exercise the sweep, few enough to stay quick.
MAX_CELLS = 40
_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
           HealthCheck.data_too_large]

# --- values: mostly small and valid, then edges, bounds, huge, negative, wrong types ------

BIG = (MAX_SECONDS, MAX_SECONDS + 1, MAX_COPIES + 1, MAX_EVENTS + 1, 2**31, 2**62, 2**63 - 1,
       2**63, 2**64, 10**23, -(2**63), -(2**64))
small_ints = st.integers(0, 60)
hostile_ints = st.sampled_from(BIG) | st.integers(-(10**30), 10**30) | st.integers(-5, -1)
odd_text = st.text(max_size=12) | st.sampled_from(
    ["", " ", "é", "\u2028", "\x00", "a\nb", "Ⅻ", "١٢", "²", "unlimited", "none", "-0", "0x10"])
wrong_types = (st.floats(allow_nan=True, allow_infinity=True) | st.booleans() | odd_text
               | st.just([]) | st.just({}) | st.just([[1, 2]]))
values = st.one_of(small_ints, small_ints, small_ints, hostile_ints, wrong_types)


# --- specs ---------------------------------------------------------------------------------

names = st.sampled_from(["fuzz", "a-b_1", "x" * 64]) | odd_text


VALID_AXES: dict[str, st.SearchStrategy[Any]] = {
    "controller": st.sampled_from(["ledger", "intent", "expectations"]),
    "desired": st.integers(0, 12), "U": st.integers(1, 40), "G": st.integers(0, 60),
    "B": st.integers(0, 20), "duration": st.integers(0, 240),
    "schedule": st.sampled_from(["s0", "s1", "default"]), "ledger_base": st.integers(0, 30),
    "observe": st.sampled_from(OBSERVE),
    "max_per_round": st.sampled_from([UNLIMITED, 1, 2, 5]),
    "gain": st.sampled_from([1.0, 0.5, 0.001, 0.333, 1]),
    "ttl": st.integers(0, 120), "restart_at": st.lists(st.integers(0, 300), max_size=3),
    # the richer world; lag and create_faults name the [lag.w0] and [faults.f0] tables
    "B_spread": st.integers(0, 15), "G_spread": st.integers(0, 30),
    "U_jitter": st.integers(0, 20), "seed": st.integers(0, 2**31 - 1),
    "delete_order": st.sampled_from(DELETE_ORDERS), "grace": st.integers(0, 40),
    "lag": st.sampled_from(["none", "w0"]), "create_faults": st.sampled_from(["none", "f0"]),
    "B_delays": st.sampled_from(["none", "d0"]), "G_delays": st.sampled_from(["none", "d1"]),
    "fail_rate": st.sampled_from([0.0, 0.05, 0.5, 1.0]),
    "lost_rate": st.sampled_from([0.0, 0.02, 0.5, 1.0]),
    "trigger": st.sampled_from(TRIGGERS), "slow_start": st.booleans(),
    # replicaset's own (the axis applies to no controller drawn above: refused in one line)
    "log_scale_down": st.booleans(),
    # a running service: copies at t = 0, or as many as desired
    "initial": st.integers(0, 12) | st.just("desired"),
    # desired that moves: the [scale.c0] table's changes
    "scale": st.sampled_from(["none", "c0"]),
    # a rolling update's (the axes apply to no controller drawn above: refused in one line)
    "max_surge": st.sampled_from([0, 1, "25%", "50%"]),
    "max_unavailable": st.sampled_from([0, 1, "25%"]),
    "min_ready": st.integers(0, 30),
    "rollout": st.lists(st.integers(0, 300), min_size=1, max_size=3, unique=True).map(sorted),
}
#: Axes whose values are names or choices (no ranges).
_NO_RANGES = ("controller", "observe", "schedule", "max_per_round", "gain", "restart_at",
              "delete_order", "lag", "create_faults", "B_delays", "G_delays", "fail_rate",
              "lost_rate", "trigger",
              "slow_start", "log_scale_down", "initial", "scale", "max_surge",
              "max_unavailable", "rollout")


def axis_value(axis: str, valid: bool) -> st.SearchStrategy[Any]:
    """An axis: one value, a list or a range; valid values, or any mixture of hostile ones."""
    one = VALID_AXES[axis]
    if not valid:
        one = one | values | (st.sampled_from([MAX_SECONDS, MAX_SECONDS + 1])
                              if axis == "duration" else odd_text)
    if valid and axis in ("restart_at", "rollout"):  # an axis of lists: a list of lists
        return st.lists(one, min_size=1, max_size=2, unique_by=tuple)
    singles = one | st.lists(one, min_size=0 if not valid else 1, max_size=3,
                             unique=valid)
    if axis in _NO_RANGES:
        return singles
    low, high = (1, 40) if axis == "U" else (0, 30)
    bound = st.integers(low, high) if valid else st.integers(low, high) | hostile_ints
    ranges = st.fixed_dictionaries(
        {"from": bound, "to": bound},
        optional={"step": st.integers(1, 20) if valid else st.integers(1, 20) | values})
    if not valid:
        ranges = ranges | st.fixed_dictionaries({"from": bound, "by": values})
    return singles | ranges


def schedule_tables(valid: bool) -> st.SearchStrategy[dict[str, Any]]:
    time = st.integers(0, 300) if valid else st.integers(0, 300) | values
    count = st.integers(0, 6) if valid else st.integers(0, 6) | values
    rate = (st.sampled_from([0.01, 0.05, 0.2, 1e-300, 5e-324]) if valid else
            st.sampled_from([0.01, 1.0, 1e-300, 5e-324]) | st.floats() | values)
    tables = st.one_of(
        st.fixed_dictionaries({"events": st.lists(st.tuples(time, count).map(list),
                                                  max_size=4)}),
        st.fixed_dictionaries({"every": st.integers(1, 200) if valid else time,
                               "count": count},
                              optional={"start": time, "until": time}),
        st.fixed_dictionaries({"rate": rate, "count": count,
                               "seed": st.integers(0, 2**63 - 1) if valid
                               else st.integers(0, 2**64) | values},
                              optional={"start": time, "until": time}),
    )
    return tables if valid else tables | st.dictionaries(odd_text, values, max_size=2)


@st.composite
def spec_documents(draw: st.DrawFn) -> dict[str, Any]:
    valid = draw(st.integers(0, 2)) == 0  # a third of the specs are meant to run
    doc: dict[str, Any] = {"name": draw(st.just("fuzz") if valid else names)}
    if draw(st.booleans()):
        doc["chunk_size"] = draw(st.integers(1, 50) if valid else st.integers(1, 50) | values)
    axes = draw(st.lists(st.sampled_from(AXES), unique=True, max_size=6))
    grid = {axis: draw(axis_value(axis, valid)) for axis in axes}
    if not valid and draw(st.integers(0, 9)) == 0:
        grid[draw(odd_text)] = draw(values)  # an unknown (perhaps unprintable) key
    doc["grid"] = grid
    schedule_names = ["s0", "s1"] if valid else draw(
        st.lists(st.sampled_from(["s0", "s1"]) | names, max_size=2, unique=True))
    doc["schedule"] = {n: draw(schedule_tables(valid)) for n in schedule_names}
    time = st.integers(0, 300) if valid else st.integers(0, 300) | values
    window = st.tuples(time, st.integers(1, 100), st.integers(1, 60)).map(
        lambda w: [w[0], w[0] + w[1], w[2]]) if valid else st.lists(values, max_size=4)
    fault = st.tuples(time, st.integers(0, 6), st.sampled_from(FAULT_KINDS)).map(list) \
        if valid else st.lists(values | st.sampled_from(FAULT_KINDS), max_size=4)
    doc["lag"] = {"w0": {"windows": draw(st.lists(window, max_size=3))}}
    doc["faults"] = {"f0": {"events": draw(st.lists(fault, max_size=3))}}
    change = st.tuples(st.integers(1, 300), st.integers(0, 12))
    doc["scale"] = {"c0": {"changes": draw(
        st.lists(change, max_size=3, unique_by=lambda c: c[0]).map(
            lambda cs: [list(c) for c in sorted(cs)]) if valid
        else st.lists(st.lists(values, max_size=3), max_size=3))}}
    second = st.integers(0, 60) if valid else st.integers(0, 60) | values
    forms = st.one_of(
        st.lists(second, min_size=1, max_size=5).map(lambda s: {"samples": s}),
        st.lists(st.tuples(second, st.integers(1, 9) if valid else values).map(list),
                 min_size=1, max_size=4, unique_by=lambda e: repr(e[0])).map(
            lambda h: {"histogram": h}),
        st.tuples(second, second).map(lambda q: {"quantiles": {"p50": min(q), "max": max(q)}}
                                      if valid else {"quantiles": {"p50": q[0], "max": q[1]}}))
    doc["delays"] = {"d0": draw(forms), "d1": draw(forms)}
    return doc


HOW = st.sampled_from(["plain"] * 6 + ["nested", "inline", "huge-list", "huge-events",
                                       "digits", "cut"])
SIZES = st.sampled_from([3, 50, 1200, 5000, MAX_EVENTS + 1, 100_001])


# --- the property ----------------------------------------------------------------------------

@contextmanager
def counting_simulation() -> Iterator[Counter[str]]:
    """Count the calls of each of :data:`SIMULATING` meanwhile (they still run)."""
    calls: Counter[str] = Counter()
    with pytest.MonkeyPatch.context() as patch:
        for module, name in SIMULATING:
            patch.setattr(module, name, _counted(getattr(module, name), name, calls))
        yield calls


def _counted(real: Any, name: str, calls: Counter[str]) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return real(*args, **kwargs)

    return counted


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]
            ) -> tuple[int, str, str, Counter[str]]:
    """``main(argv)``: its status, stdout, stderr, and what it simulated (calls by name)."""
    capsys.readouterr()
    with counting_simulation() as calls:
        status = main(argv)  # a traceback here fails the test: never one
    captured = capsys.readouterr()
    return status, captured.out, captured.err, calls


def assert_refusal(status: int, err: str, simulated: Counter[str]) -> None:
    assert status == 2, (status, err)
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: reconsim"), err
    assert not simulated, f"refused after simulating ({dict(simulated)}): {err}"


def cheap(cell: Cell) -> bool:
    """Whether the reference model (every copy, every second) runs this cell quickly."""
    return cell.duration <= 1000 and cell.desired <= 12 and all(
        n <= 40 for _, n in cell.deaths)


def cell_of(row: dict[str, Any]) -> Cell:
    params = {}
    for p in PARAMS:
        value = row[p.name]
        if value is None and p.name != "max_per_round":
            continue  # does not apply to this controller: the default stands
        if p.name == "deaths":
            value = tuple((e["at"], e["count"]) for e in value)
        elif p.name == "restart_at":
            value = tuple(value)
        else:  # a column's value as a cell takes it ('desired' for initial's -1)
            value = p.kind.from_column(value)
        params[p.name] = value
    return Cell(**params)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=_HEALTH)
@given(doc=spec_documents(), how=HOW, size=SIZES)  # the text is built here: a short repr
def test_fuzzed_specs_run_exactly_or_refuse_in_one_line(
        doc: dict[str, Any], how: str, size: int, capsys: pytest.CaptureFixture[str]) -> None:
    text = hostile_text(doc, how, size)
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "spec.toml", Path(tmp) / "out"
        path.write_text(text, encoding="utf-8")
        status, stdout, err, simulated = run_cli(
            ["sweep", str(path), "--out", str(out), "--backend", "sequential",
             "--no-progress", "--max-cells", str(MAX_CELLS)], capsys)
        event(f"exit {status}")
        if status != 0:
            assert_refusal(status, err, simulated)
            assert not out.exists()
            reason = err.split("spec.toml: ", 1)[-1].removeprefix("error: reconsim sweep: ")
            event(f"refused: {re.split(r'[:= ]', reason, maxsplit=1)[0][:20]}")
            return
        table = scan(out).collect()
        assert re.fullmatch(r"\S+: [\d,]+ cells? in [\d,]+ chunks? of up to [\d,]+",
                            stdout.splitlines()[0]), stdout
        assert 0 < table.height <= MAX_CELLS
        checked = 0
        for row in table.iter_rows(named=True):
            cell = cell_of(row)
            if cheap(cell) and checked < 3:
                assert {m: row[m] for m in (*METRIC_NAMES, RESPONSES)} == run_reference(
                    cell), cell
                checked += 1
        event(f"cells checked against the reference: {checked}")


def flag_value(name: str) -> st.SearchStrategy[str]:
    if name == "deaths":
        event = st.tuples(st.integers(0, 300) | hostile_ints, st.integers(0, 8) | hostile_ints)
        return (st.lists(event, max_size=3).map(lambda es: ",".join(f"{a}:{c}" for a, c in es))
                | odd_text | st.just("none"))
    if name == "restart_at":
        return (st.lists(st.integers(0, 300) | hostile_ints, max_size=3).map(
            lambda ts: ",".join(map(str, ts))) | odd_text)
    if name in ("controller", "observe"):
        return st.sampled_from(["ledger", "intent", "expectations", *OBSERVE]) | odd_text
    if name == "gain":
        return st.sampled_from(["1", "0.5", "0.001", "nan", "inf", "-0", "1e999", "0.0005"]) \
            | odd_text
    if name == "duration":
        return st.integers(0, 400).map(str) | st.sampled_from(["1000000", "1000001"]) \
            | hostile_ints.map(str) | odd_text
    return (st.integers(0, 60).map(str) | hostile_ints.map(str) | odd_text
            | st.sampled_from([UNLIMITED, "1" * 5000, "1_000", "+5", " 7"]))


VALID_FLAGS: dict[str, st.SearchStrategy[str]] = {
    **{name: strategy.map(str) for name, strategy in VALID_AXES.items()
       if name not in ("schedule", "restart_at", "gain", "duration", "scale")},
    "gain": st.sampled_from(["1", "0.5", "0.001", "0.333"]),
    "duration": st.integers(0, 400).map(str),
    "deaths": st.lists(st.tuples(st.integers(0, 300), st.integers(0, 8)), max_size=3).map(
        lambda es: ",".join(f"{a}:{c}" for a, c in es) or "none"),
    "restart_at": st.lists(st.integers(0, 300), max_size=3).map(
        lambda ts: ",".join(map(str, ts)) or "none"),
    "scale": st.dictionaries(st.integers(1, 300), st.integers(0, 12), max_size=3).map(
        lambda cs: ",".join(f"{a}:{d}" for a, d in sorted(cs.items())) or "none"),
    "lag": st.lists(st.tuples(st.integers(0, 300), st.integers(1, 100), st.integers(1, 60)),
                    max_size=2).map(
        lambda ws: ",".join(f"{a}:{a + d}:{x}" for a, d, x in ws) or "none"),
    "create_faults": st.lists(st.tuples(st.integers(0, 300), st.integers(0, 6),
                                        st.sampled_from(FAULT_KINDS)), max_size=2).map(
        lambda es: ",".join(f"{a}:{c}:{k}" for a, c, k in es) or "none"),
    **{name: st.dictionaries(st.integers(0, 60), st.integers(1, 9), max_size=3).map(
        lambda t: ",".join(f"{v}:{w}" for v, w in sorted(t.items())) or "none")
       for name in ("B_delays", "G_delays")},
}


@st.composite
def run_argvs(draw: st.DrawFn) -> list[str]:
    valid = draw(st.integers(0, 2)) == 0  # a third of the argument lists are meant to run
    argv = ["run"]
    for p in draw(st.lists(st.sampled_from(PARAMS), max_size=6, unique=valid)):
        form = draw(st.sampled_from(["sep", "eq"] if valid else ["sep", "eq", "bare"]))
        if isinstance(p.kind, Flag) and (valid or draw(st.booleans())):
            argv.append(draw(st.sampled_from([f"--{p.name}", f"--no-{p.name}"])))
            continue
        value = draw(VALID_FLAGS[p.name] if valid else flag_value(p.name))
        argv += ([f"--{p.name}", value] if form == "sep" else
                 [f"--{p.name}={value}"] if form == "eq" else [f"--{p.name}"])
    if valid or draw(st.booleans()):
        argv.append("--json")
    if not valid and draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(1, len(argv))), draw(odd_text | st.just("--Gg")))
    return argv


@settings(max_examples=2 * EXAMPLES, deadline=None, suppress_health_check=_HEALTH)
@given(argv=run_argvs())
def test_fuzzed_run_flags_run_exactly_or_refuse_in_one_line(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err, simulated = run_cli(argv, capsys)
    event(f"exit {status}")
    if status != 0:
        assert_refusal(status, err, simulated)
        return
    args = build_parser().parse_args(argv)
    cell = Cell(**{p.name: p.kind.from_flag(getattr(args, p.name), p.default) for p in PARAMS})
    if "--json" in argv:
        metrics = json.loads(out)
        assert list(metrics) == [*METRIC_NAMES, RESPONSES]
        if cheap(cell):
            assert metrics == run_reference(cell), cell
            event("checked against the reference")
    else:
        # the metrics (a world's own for its cells only), then a table of the responses: a
        # blank line, a title, a header and a line per event
        events = len(cell.event_seconds())
        world = registry.get(cell.controller).world
        shown = [m for m in METRICS if m.world is None or m.world == world]
        assert len(out.splitlines()) == len(shown) + (3 + events if events else 0)


def test_the_fuzzers_toml_is_toml() -> None:
    # The generator writes what it means: a valid document reads back as the same data.
    doc = {"name": "t", "chunk_size": 3, "grid": {"G": [0, 5], "U": {"from": 1, "to": 3},
                                                   "gain": 0.5, "o k": "é\n"},
           "schedule": {"s0": {"events": [[1, 2]]}}}
    import tomllib

    assert tomllib.loads(toml_document(doc)) == doc
