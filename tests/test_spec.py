"""Sweep specs: the format, its defaults, and a one-line error for every kind of mistake."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from reconsim import CONTROLLERS
from reconsim.model import delays
from reconsim.model.controllers import registry
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import AXES, DEFAULT_SCHEDULE, SpecError, load_spec, parse_spec

SPECS = Path(__file__).resolve().parent.parent / "sweeps"
#: The built-in controllers that decide once a round: seed 001's sweeps take them all (the
#: one that syncs on events, replicaset, is swept in the Kubernetes world).
IN_ROUNDS = {name for name in CONTROLLERS if not registry.get(name).syncs_on_events
             and registry.get(name).world is None}


def test_axes_are_the_model_parameters_with_schedule_for_deaths() -> None:
    assert AXES[:13] == ("controller", "desired", "U", "G", "B", "duration", "schedule",
                         "ledger_base", "observe", "max_per_round", "gain", "ttl", "restart_at")
    assert AXES[13:] == ("B_spread", "G_spread", "B_delays", "G_delays", "U_jitter", "seed",
                         "delete_order", "grace",
                         "lag", "create_faults", "fail_rate", "lost_rate", "trigger",
                         "slow_start", "log_scale_down", "initial", "scale", "max_surge",
                         "max_unavailable", "min_ready", "rollout")


def test_values_lists_and_inclusive_ranges() -> None:
    spec = parse_spec("""
        name = "t"
        [grid]
        controller = ["ledger", "intent"]
        G = { from = 0, to = 20, step = 10 }
        U = { from = 3, to = 5 }
        B = 7
    """)
    assert spec.axes["G"] == (0, 10, 20)
    assert spec.axes["U"] == (3, 4, 5)
    assert spec.axes["B"] == (7,)
    assert spec.axes["desired"] == (6,)  # unnamed axes take the model's defaults
    assert spec.axes["schedule"] == (DEFAULT_SCHEDULE,)
    assert spec.schedules[DEFAULT_SCHEDULE].events(900) == ((300, 2),)
    assert spec.n_cells == 2 * 3 * 3


def test_schedules_explicit_periodic_and_random() -> None:
    spec = parse_spec("""
        name = "t"
        [grid]
        schedule = ["a", "p", "r"]
        duration = [100, 400]
        [schedule.a]
        events = [[500, 1], [10, 2]]
        [schedule.p]
        every = 100
        count = 2
        start = 50
        until = 300
        [schedule.r]
        rate = 0.05
        count = 1
        seed = 9
    """)
    s = spec.schedules
    assert s["a"].events(100) == ((500, 1), (10, 2))  # kept as listed, even after the end
    assert s["p"].events(400) == ((50, 2), (150, 2), (250, 2))
    assert s["p"].events(100) == ((50, 2),)
    short, long = s["r"].events(100), s["r"].events(400)
    assert long[: len(short)] == short  # a shorter run sees a prefix of the same process
    assert all(at <= 400 for at, _ in long)
    assert 8 <= len(long) <= 35  # about rate x duration = 20 events
    assert s["r"].events(400) == long  # deterministic for its seed


def test_same_content_same_hash_whatever_the_formatting() -> None:
    a = parse_spec('name = "t"\n[grid]\nG = [1, 2]\n')
    b = parse_spec('# comment\nname="t"\n\n[grid]\nG=[1,2]\n')
    c = parse_spec('name = "t"\n[grid]\nG = [1, 3]\n')
    assert a.hash == b.hash != c.hash


@pytest.mark.parametrize("name", ["seed", "default", "million", "measured", "kubernetes",
                                  "disturbance"])
def test_shipped_specs_load(name: str) -> None:
    spec = load_spec(SPECS / f"{name}.toml")
    assert spec.name == name


def test_default_spec_spans_the_three_regions() -> None:
    spec = load_spec(SPECS / "default.toml")
    assert spec.n_cells >= 100_000
    assert len(spec.axes["schedule"]) >= 4
    assert set(spec.axes["controller"]) == IN_ROUNDS
    a = spec.axes
    regions = {("U<B" if U < B else "B<=U<G+B" if U < G + B else "U>=G+B")
               for U in a["U"] for G in a["G"] for B in a["B"]}
    assert regions == {"U<B", "B<=U<G+B", "U>=G+B"}


def test_measured_spec_is_seed_001s_measured_chain() -> None:
    spec = load_spec(SPECS / "measured.toml")
    a = spec.axes
    assert (a["G"], a["G_spread"], a["B"], a["desired"]) == ((0,), (0,), (5,), (6,))
    chain = spec.delays["chain"]
    assert a["G_delays"] == (chain,)
    assert spec.names["G_delays"] == ("chain",)
    assert (delays.mean(chain), delays.worst(chain)) == (Fraction(1353, 100), 27)
    assert a["U"] == tuple(range(1, 61))
    assert a["seed"] == tuple(range(100))
    assert set(a["controller"]) == IN_ROUNDS


def test_kubernetes_spec_is_a_replicaset_world() -> None:
    a = load_spec(SPECS / "kubernetes.toml").axes
    assert (a["ttl"], a["observe"], a["delete_order"], a["grace"], a["max_per_round"],
            a["slow_start"], a["trigger"]) == ((300,), ("created",), ("newest",), (30,),
                                               (500,), (True,), ("watch",))
    assert a["U"] == (30, 60, 300, 900)
    for axis in ("B_spread", "G_spread", "lag", "fail_rate", "lost_rate", "seed"):
        assert len(a[axis]) > 1, axis
    assert () in a["lag"]


def test_named_lag_and_fault_schedules() -> None:
    spec = parse_spec('''
name = "t"
[lag.stale]
windows = [[100, 200, 30], [400, 500, 10]]
[faults.burst]
events = [[0, 3, "lost"], [60, 1, "fail"]]
[grid]
lag = ["none", "stale"]
create_faults = "burst"
seed = { from = 0, to = 99 }
''')
    assert spec.axes["lag"] == ((), ((100, 200, 30), (400, 500, 10)))
    assert spec.axes["create_faults"] == (((0, 3, "lost"), (60, 1, "fail")),)
    assert spec.axes["seed"] == tuple(range(100))
    assert spec.n_cells == 2 * 100  # the default controller, ledger
    rows = expand(spec, 0, 2)  # axes in declaration order: lag varies faster than seed
    assert rows["lag"].to_list() == [[], [{"from": 100, "to": 200, "extra": 30},
                                          {"from": 400, "to": 500, "extra": 10}]]
    assert rows["seed"].to_list() == [0, 0]
    assert rows["create_faults"].to_list()[0] == [{"at": 0, "count": 3, "kind": "lost"},
                                                  {"at": 60, "count": 1, "kind": "fail"}]
    # Unnamed, the axes are the built-in empty schedules.
    plain = parse_spec('name = "t"\n')
    assert (plain.axes["lag"], plain.axes["create_faults"]) == (((),), ((),))


def test_named_delay_distributions(tmp_path: Path) -> None:
    (tmp_path / "chain.csv").write_text("seconds\n5\n12\n12\n40\n", encoding="utf-8")
    (tmp_path / "spec.toml").write_text('''
name = "t"
[delays.measured]
csv = "chain.csv"
[delays.q]
quantiles = { p50 = 12, p99 = 40, max = 60 }
[delays.boot]
histogram = [[0, 3], [9, 1]]
[grid]
G_delays = ["none", "measured", "q"]
B_delays = "boot"
''', encoding="utf-8")
    spec = load_spec(tmp_path / "spec.toml")
    assert spec.axes["G_delays"] == ((), ((5, 1), (12, 2), (40, 1)),
                                     delays.from_quantiles({"p50": 12, "p99": 40, "max": 60}))
    assert spec.axes["B_delays"] == (((0, 3), (9, 1)),)
    rows = expand(spec)
    assert rows["G_delays_name"].to_list() == ["none", "measured", "q"]
    assert rows["B_delays_name"].to_list() == ["boot"] * 3
    assert rows["G_delays"].to_list()[1] == [{"value": 5, "weight": 1},
                                             {"value": 12, "weight": 2},
                                             {"value": 40, "weight": 1}]
    # The hash covers what a csv file holds, not only its name.
    before = spec.hash
    (tmp_path / "chain.csv").write_text("seconds\n5\n12\n40\n", encoding="utf-8")
    assert load_spec(tmp_path / "spec.toml").hash != before
    # A spec without distributions keeps the hash it had.
    plain = 'name = "t"\n[grid]\nG = 3\n'
    assert parse_spec(plain).hash == hashlib.sha256(json.dumps(
        tomllib.loads(plain), sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def test_million_spec_has_a_million_cells() -> None:
    assert load_spec(SPECS / "million.toml").n_cells >= 1_000_000


@pytest.mark.parametrize(("text", "message"), [
    ('name = "t"\n[grid]\nGg = [1]\n', "grid.Gg: unknown key"),
    ('name = "t"\nnmae = 3\n', "nmae: unknown key"),
    ('name = "t"\n[grid]\nG = []\n', "grid.G: empty axis"),
    ('name = "t"\n[grid]\nG = "ten"\n', "grid.G: G must be an integer in [0, 1000000], got 'ten'"),
    ('name = "t"\n[grid]\nG = [1.5]\n', "grid.G: G must be an integer in [0, 1000000], got 1.5"),
    ('name = "t"\n[grid]\nU = [0, 5]\n', "grid.U: U must be an integer in [1, 1000000], got 0"),
    ('name = "t"\n[grid]\nG = -1\n', "grid.G: G must be an integer in [0, 1000000], got -1"),
    ('name = "t"\n[grid]\nB = [-5]\n', "grid.B: B must be an integer in [0, 1000000], got -5"),
    ('name = "t"\n[grid]\ndesired = -1\n',
     "grid.desired: desired must be an integer in [0, 1000000]"),
    ('name = "t"\n[grid]\nduration = -9\n',
     "grid.duration: duration must be an integer in [0, 1000000]"),
    ('name = "t"\n[grid]\nU = { from = 1, to = 9, step = 0 }\n',
     "grid.U.step must be a positive integer, got 0"),
    ('name = "t"\n[grid]\nU = { from = 9, to = 1 }\n', "grid.U: empty axis"),
    ('name = "t"\n[grid]\nU = { from = 1, to = 9, stpe = 2 }\n', "grid.U.stpe: unknown key"),
    ('name = "t"\n[grid]\ncontroller = "pid"\n',
     "grid.controller: controller 'pid': not a built-in (ledger, intent, expectations, "
     "replicaset, deployment)"),
    ('name = "t"\n[grid]\nschedule = "nope"\n', "grid.schedule: unknown schedule 'nope'"),
    ('name = "t"\n[grid]\nG = [1, 1]\n', "grid.G: repeated values"),
    ('name = "../etc"\n', "name must be a plain slug"),
    ('name = "a b"\n', "name must be a plain slug"),
    ("[grid]\n", "name must be a plain slug (letters, digits, '-', '_'), got None"),
    ('name = "t"\n[schedule.x]\nevents = [[-1, 2]]\n',
     "schedule.x.events event at must be an integer in [0, 1000000], got -1"),
    ('name = "t"\n[schedule.x]\nevents = [[1, -2]]\n',
     "schedule.x.events event count must be an integer in [0, 1000000], got -2"),
    ('name = "t"\n[schedule.x]\nevery = 0\ncount = 1\n',
     "schedule.x.every must be an integer in [1, 1000000], got 0"),
    ('name = "t"\n[schedule.x]\nevery = 10\n', "schedule.x.count: missing"),
    ('name = "t"\n[schedule.x]\nevery = 10\ncount = 1\nuntill = 5\n',
     "schedule.x.untill: unknown key"),
    ('name = "t"\n[schedule.x]\nrate = 2.0\ncount = 1\nseed = 1\n',
     "schedule.x.rate must be deaths per second in (0, 1], got 2.0"),
    ('name = "t"\n[schedule.x]\ncount = 1\n', "schedule.x needs at least one of"),
    ('name = "t"\nchunk_size = 0\n', "chunk_size must be an integer in [1, 1000000], got 0"),
    ('name = "t"\n[grid]\nobserve = "listed"\n', "observe must be one of ready, created"),
    ('name = "t"\n[grid]\nmax_per_round = [0]\n',
     "grid.max_per_round: max_per_round must be an integer in [1, 1000000] or 'unlimited', got 0"),
    ('name = "t"\n[grid]\nttl = -1\n', "grid.ttl: ttl must be an integer in [0, 1000000], got -1"),
    ('name = "t"\n[grid]\ngain = [0.5, 1.5]\n',
     "grid.gain: gain must be a multiple of 0.001 in (0, 1], got 1.5"),
    ('name = "t"\n[grid]\ngain = 0.0005\n',
     "grid.gain: gain must be a multiple of 0.001 in (0, 1], got 0.0005"),
    ('name = "t"\n[grid]\nrestart_at = [310]\n',
     "grid.restart_at: restart_at must be a list of seconds, got 310 (the axis is a list"),
    ('name = "t"\n[grid]\nrestart_at = [[-1]]\n',
     "grid.restart_at: restart_at must hold integers in [0, 1000000], got -1"),
    ('name = "t"\n[grid\n', "TOML syntax error"),
    ('name = "t"\n[grid]\nB_spread = -1\n',
     "grid.B_spread: B_spread must be an integer in [0, 1000000]"),
    ('name = "t"\n[grid]\nseed = { from = 2147483647, to = 2147483648 }\n',
     "grid.seed: seed must be an integer in [0, 2147483647], got 2147483648"),
    ('name = "t"\n[grid]\nfail_rate = [0.0005]\n',
     "grid.fail_rate: fail_rate must be a multiple of 0.001 in [0, 1], got 0.0005"),
    ('name = "t"\n[grid]\nlost_rate = 1.5\n',
     "grid.lost_rate: lost_rate must be a multiple of 0.001 in [0, 1], got 1.5"),
    ('name = "t"\n[grid]\ntrigger = "event"\n', "trigger must be one of periodic, watch"),
    ('name = "t"\n[grid]\nslow_start = 1\n', "slow_start must be true or false, got 1"),
    ('name = "t"\n[grid]\nlag = "stale"\n', "grid.lag: unknown lag schedule 'stale' (known: none)"),
    ('name = "t"\n[grid]\ncreate_faults = [[[0, 1, "fail"]]]\n',
     "grid.create_faults: unknown faults schedule [[0, 1, 'fail']]"),
    ('name = "t"\n[lag.s]\nwindows = [[5, 5, 1]]\n',
     "lag.s.windows: window must have from < to, got (5, 5)"),
    ('name = "t"\n[lag.s]\nwindows = [[1, 5, 0]]\n',
     "lag.s.windows: window extra must be an integer in [1, 1000000], got 0"),
    ('name = "t"\n[lag.s]\nwindows = [[1, 5]]\n',
     "lag.s.windows: window must be (from, to, extra), got [1, 5]"),
    ('name = "t"\n[lag.s]\nwindow = [[1, 5, 2]]\n', "lag.s.window: unknown key"),
    ('name = "t"\n[lag.none]\nwindows = []\n', "lag.none: 'none' is built in"),
    ('name = "t"\n[faults.f]\nevents = [[0, 1, "crash"]]\n',
     "faults.f.events: event kind must be one of fail, lost; got 'crash'"),
    ('name = "t"\n[faults.f]\nevents = [[0, -1, "fail"]]\n',
     "faults.f.events: event count must be an integer in [0, 1000000], got -1"),
    ('name = "t"\n[faults.f]\n', "faults.f.events: missing"),
    ('name = "t"\nfaults = 3\n', "faults must be a table of named schedules, got 3"),
    ('name = "t"\n[lag.a]\nwindows = [[1, 2, 3]]\n[lag.b]\nwindows = [[1, 2, 3]]\n'
     '[grid]\nlag = ["a", "b"]\n', "grid.lag: two names for the same schedule"),
    ('name = "t"\n[grid]\nG = [1,, 2]\nU = 3\n', "line 3"),
    ('name = "t"\n[delays.d]\nsamples = [5, 7.5]\n',
     "delays.d.samples: sample 7.5 is not a whole number of seconds (integers only)"),
    ('name = "t"\n[delays.d]\nsamples = [5, -2]\n',
     "delays.d.samples: sample -2 is not in [0, 1000000] seconds"),
    ('name = "t"\n[delays.d]\nsamples = []\n', "delays.d.samples: empty list"),
    ('name = "t"\n[delays.d]\nquantiles = { p50 = 30, p90 = 20, max = 60 }\n',
     "delays.d.quantiles: quantiles must not decrease, got p50 = 30 above p90 = 20"),
    ('name = "t"\n[delays.d]\nhistogram = [[5, 0]]\n',
     "delays.d.histogram: weight 0 of second 5 is not a positive integer"),
    ('name = "t"\n[delays.d]\nhistogram = [[5, 2.5]]\n',
     "delays.d.histogram: weight 2.5 of second 5 is not a positive integer"),
    ('name = "t"\n[delays.d]\ncsv = "nowhere.csv"\n', "delays.d.csv: no such file"),
    ('name = "t"\n[delays.d]\nsamples = [1]\nhistogram = [[1, 1]]\n',
     "delays.d needs exactly one of samples, csv, quantiles, histogram"),
    ('name = "t"\n[delays.none]\nsamples = [1]\n', "delays.none: 'none' is built in"),
    ('name = "t"\n[grid]\nG_delays = "chain"\n',
     "grid.G_delays: unknown distribution 'chain' (known: none)"),
    ('name = "t"\n[delays.d]\nsamples = [1]\n[grid]\nG_delays = "d"\nG_spread = [0, 4]\n',
     "grid.G_delays: distribution 'd' and G_spread 4 would meet in a cell; give one"),
    ('name = "t"\n[grid]\ninitial = -1\n',
     "grid.initial: initial must be an integer in [0, 1000000] or 'desired', got -1"),
    ('name = "t"\n[grid]\ninitial = [0, 1000001]\n',
     "grid.initial: initial must be an integer in [0, 1000000] or 'desired', got 1000001"),
    ('name = "t"\n[grid]\ninitial = "settled"\n',
     "grid.initial: initial must be an integer in [0, 1000000] or 'desired', got 'settled'"),
])
def test_bad_specs_are_named_in_one_line(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "nope.toml")


def test_errors_from_a_file_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('name = "t"\n[grid]\nU = 0\n')
    with pytest.raises(SpecError, match=re.escape(
            "bad.toml: grid.U: U must be an integer in [1, 1000000], got 0")):
        load_spec(path)
