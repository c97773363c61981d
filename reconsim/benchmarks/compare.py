"""Two runs of the controller benchmarks compared: quality figures exactly, time as a ratio.

Reads pytest-benchmark JSON files as ``nox -s bench`` saves them (``--benchmark-json`` or
``results/bench/**.json``). A controller benchmark (``bench/bench_controllers.py``, and
``bench/bench_user_controller.py``'s user's controller beside a built-in) keeps its
deterministic figures in ``extra_info["quality"]``; every other benchmark is ignored.

* Quality figures are compared exactly, base → head. Any change fails
  (:attr:`BenchComparison.failed`) unless the head's quality baseline
  (``bench/quality-baseline.json`` of the pull request) records exactly the head's figures:
  the change was made on purpose and committed with it.
* Time per cell is given as ratios head / base: of the fastest rounds (what the benchmarks
  compare), and of the medians with their spread (the head's quartiles over the base's,
  ``q1/q3`` to ``q3/q1``, which holds the median ratio). Time never fails: identical runs
  on shared machines differ by 1.5x or more.
* Quality against cost: each head variant's quality (excess copy-seconds, wasted delete
  commands) beside its cost (missing copy-seconds, ledger reads), and whether another
  variant beats it on all four (the frontier holds those no other variant beats). Exactly,
  unlike the report's frontier (whose differences within
  :data:`~reconsim.model.metrics.TIES` are ties): one fixed workload's figures, recorded to
  the unit in the quality baseline and compared between commits to the unit.

Computing lives here; :mod:`reconsim.benchmarks.compare_page` renders the HTML page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconsim.errors import ReconsimError
from reconsim.model.metrics import COST_FIGURES, QUALITY_FIGURES, Tradeoff, frontier

_VARIANT = re.compile(r"^test_variant\[(?P<name>.+)\]$")


class BenchError(ReconsimError, ValueError):
    """A file that is not a pytest-benchmark run with controller benchmarks."""


@dataclass(frozen=True)
class Timing:
    """Seconds per cell of one variant's rounds: the fastest, the quartiles, how many rounds."""

    min: float
    q1: float
    median: float
    q3: float
    rounds: int


@dataclass(frozen=True)
class Variant:
    """One controller variant in one run: its exact figures and its timing."""

    name: str
    quality: Mapping[str, int]
    timing: Timing | None


@dataclass(frozen=True)
class Run:
    """One saved benchmark run: where it came from and its controller variants, in file order."""

    path: str
    commit: str | None
    machine: str
    variants: Mapping[str, Variant]
    #: As pytest-benchmark saved them: the commit's time (ISO 8601, None outside git),
    #: whether the tree had uncommitted changes, and when the run started.
    commit_time: str | None = None
    dirty: bool = False
    run_time: str | None = None


def variant_name(benchmark: str) -> str:
    """The variant a benchmark measures: ``test_variant[ledger]`` -> ``ledger``.

    >>> variant_name("test_variant[ledger-gain0.5]")
    'ledger-gain0.5'
    """
    m = _VARIANT.match(benchmark)
    return m["name"] if m else benchmark


def _machine(info: Mapping[str, Any]) -> str:
    cpu = info.get("cpu") or {}
    return (f"{info.get('node', '?')}: {cpu.get('brand_raw', info.get('processor') or '?')}, "
            f"{cpu.get('count', '?')} cores, Python {info.get('python_version', '?')}")


def _read_json(path: Path) -> Any:
    """A JSON file's document; raise :class:`BenchError` naming the file otherwise."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: not a JSON file ({exc})") from None


def load_run(path: str | Path) -> Run:
    """Read a pytest-benchmark JSON file with controller benchmarks; raise
    :class:`BenchError` naming the file otherwise."""
    run = read_run(path)
    if not run.variants:
        raise BenchError(f"{path}: no controller benchmarks (none has extra_info.quality)")
    return run


def read_run(path: str | Path) -> Run:
    """Read a pytest-benchmark JSON file, with or without controller benchmarks (a run of
    other benchmarks has no variants); raise :class:`BenchError` naming the file when it
    is not a pytest-benchmark run."""
    path = Path(path)
    doc = _read_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise BenchError(f"{path}: not a pytest-benchmark run (no 'benchmarks' list)")
    variants: dict[str, Variant] = {}
    for b in doc["benchmarks"]:
        quality = (b.get("extra_info") or {}).get("quality") if isinstance(b, dict) else None
        if not isinstance(quality, dict):
            continue
        if not all(isinstance(v, int) for v in quality.values()):
            raise BenchError(f"{path}: {b.get('name')}: quality figures must be integers")
        name = variant_name(str(b.get("name")))
        variants[name] = Variant(name, dict(quality), _timing(b.get("stats"), quality))
    info = doc.get("commit_info") or {}
    return Run(str(path), info.get("id"), _machine(doc.get("machine_info") or {}), variants,
               commit_time=info.get("time"), dirty=bool(info.get("dirty")),
               run_time=doc.get("datetime"))


def _timing(stats: Any, quality: Mapping[str, int]) -> Timing | None:
    """Seconds per cell from a benchmark's per-round stats (a round runs ``cells`` cells)."""
    cells = quality.get("cells") or 1
    try:
        return Timing(min=stats["min"] / cells, q1=stats["q1"] / cells,
                      median=stats["median"] / cells, q3=stats["q3"] / cells,
                      rounds=int(stats["rounds"]))
    except (TypeError, KeyError):
        return None


def load_baseline(path: str | Path) -> dict[str, Mapping[str, int]]:
    """Variant -> quality figures from a ``bench/quality-baseline.json``."""
    path = Path(path)
    doc = _read_json(path)
    if not isinstance(doc, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("quality"), dict) for v in doc.values()):
        raise BenchError(f"{path}: not a quality baseline ({{name: {{'quality': {{...}}}}}})")
    return {variant_name(k): v["quality"] for k, v in doc.items()}


@dataclass(frozen=True)
class FigureChange:
    """One quality figure of one variant, base -> head (None: absent on that side)."""

    figure: str
    base: int | None
    head: int | None

    @property
    def changed(self) -> bool:
        return self.base != self.head


@dataclass(frozen=True)
class VariantComparison:
    """One variant, base against head."""

    name: str
    figures: tuple[FigureChange, ...]
    #: "same", "changed", "added" (head only) or "removed" (base only)
    status: str
    #: For a change: whether the head's quality baseline records exactly the head's figures.
    in_baseline: bool
    #: head / base of the fastest rounds
    ratio: float | None = None
    #: head / base of the medians, and its spread (head q1 / base q3, head q3 / base q1)
    median_ratio: float | None = None
    spread: tuple[float, float] | None = None
    base_timing: Timing | None = None
    head_timing: Timing | None = None

    @property
    def failing(self) -> bool:
        return self.status != "same" and not self.in_baseline


@dataclass(frozen=True)
class BenchComparison:
    """Everything ``reconsim bench-compare`` reports."""

    base: Run
    head: Run
    variants: tuple[VariantComparison, ...]
    tradeoffs: tuple[Tradeoff, ...]
    baseline: str | None = None
    figures: tuple[str, ...] = field(default=())

    @property
    def failing(self) -> list[VariantComparison]:
        return [v for v in self.variants if v.failing]

    @property
    def failed(self) -> bool:
        """True when a quality figure changed and the head's baseline does not record it."""
        return bool(self.failing)

    def to_json(self) -> dict[str, Any]:
        """The comparison as plain data."""
        return {
            "base": {"path": self.base.path, "commit": self.base.commit,
                     "machine": self.base.machine},
            "head": {"path": self.head.path, "commit": self.head.commit,
                     "machine": self.head.machine},
            "baseline": self.baseline,
            "failed": self.failed,
            "variants": [{
                "name": v.name, "status": v.status, "in_baseline": v.in_baseline,
                "failing": v.failing,
                "figures": {f.figure: {"base": f.base, "head": f.head} for f in v.figures},
                "time_ratio_fastest": v.ratio, "time_ratio_median": v.median_ratio,
                "time_ratio_median_spread": v.spread,
                "base_seconds_per_cell": v.base_timing.min if v.base_timing else None,
                "head_seconds_per_cell": v.head_timing.min if v.head_timing else None,
            } for v in self.variants],
            "tradeoffs": [{"name": t.name, **t.figures, "on_frontier": t.on_frontier,
                           "beaten_by": list(t.beaten_by)} for t in self.tradeoffs],
        }


def compare_runs(base: Run, head: Run,
                 baseline: Mapping[str, Mapping[str, int]] | None = None,
                 baseline_path: str | None = None) -> BenchComparison:
    """Compare two runs variant by variant (head's order, then variants only in base)."""
    names = [*head.variants, *(n for n in base.variants if n not in head.variants)]
    figures = list(dict.fromkeys(
        f for run in (head, base) for v in run.variants.values() for f in v.quality))
    out = []
    for name in names:
        b, h = base.variants.get(name), head.variants.get(name)
        changes = tuple(FigureChange(f, b.quality.get(f) if b else None,
                                     h.quality.get(f) if h else None) for f in figures)
        status = ("added" if b is None else "removed" if h is None
                  else "changed" if any(c.changed for c in changes) else "same")
        recorded = None if baseline is None else baseline.get(name)
        in_baseline = (baseline is not None and
                       (recorded is None if h is None else dict(recorded or {}) == h.quality))
        ratio = median_ratio = spread = None
        if b and h and b.timing and h.timing and b.timing.min > 0 and b.timing.q1 > 0:
            ratio = h.timing.min / b.timing.min
            median_ratio = h.timing.median / b.timing.median
            spread = (h.timing.q1 / b.timing.q3, h.timing.q3 / b.timing.q1)
        out.append(VariantComparison(name, changes, status, in_baseline, ratio, median_ratio,
                                     spread,
                                     b.timing if b else None, h.timing if h else None))
    return BenchComparison(base, head, tuple(out), tradeoffs(head), baseline_path, tuple(figures))


def tradeoffs(run: Run) -> tuple[Tradeoff, ...]:
    """Each variant's quality and cost figures, with the variants that beat it (exactly:
    no difference is a tie)."""
    return frontier({n: v.quality for n, v in run.variants.items()}, ties=0.0)


def _num(value: int | float | None) -> str:
    return "—" if value is None else f"{value:,}"


def _figure_cell(c: FigureChange, markdown: bool) -> str:
    if not c.changed:
        return _num(c.base)
    text = f"{_num(c.base)} → {_num(c.head)}"
    return f"**{text}**" if markdown else text


def _status_text(v: VariantComparison, has_baseline: bool) -> str:
    if v.status == "same":
        return "same"
    if not has_baseline:
        return f"{v.status}: FAILS (no quality baseline given)"
    return (f"{v.status}, recorded in the baseline" if v.in_baseline
            else f"{v.status}: FAILS, not in the baseline")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        return [f"| {' | '.join(head)} |", "|" + "---|" * len(head),
                *(f"| {' | '.join(r)} |" for r in rows)]
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    return ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
            for r in (head, *rows)]


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "?"


def render(c: BenchComparison, markdown: bool = False) -> str:
    """The comparison as text: a markdown document (for a job summary) or aligned columns."""
    h2 = "## " if markdown else ""
    h3 = "### " if markdown else ""
    lines = [f"{h2}Controller benchmarks: base {_short(c.base.commit)} → head "
             f"{_short(c.head.commit)}", ""]
    changed = [v for v in c.variants if v.status != "same"]
    if not changed:
        lines.append(f"Quality figures: identical on all {len(c.variants)} variants.")
    else:
        lines.append(f"Quality figures: {len(changed)} of {len(c.variants)} variants changed; "
                     + (f"{len(c.failing)} not recorded in the quality baseline: this fails."
                        if c.failed else "each recorded in the quality baseline."))
    if c.base.machine != c.head.machine:
        lines.append(f"Runs from different machines: base {c.base.machine}; head "
                     f"{c.head.machine}. Times do not compare.")
    lines += ["", f"{h3}Quality figures (exact; a change shows base → head)", ""]
    rows = [[v.name, *(_figure_cell(f, markdown) for f in v.figures),
             _status_text(v, c.baseline is not None)] for v in c.variants]
    lines += _table(["variant", *c.figures, "status"], rows, markdown)
    lines += ["", f"{h3}Time per cell (advisory, never fails)", ""]
    rows = [[v.name,
             f"{v.base_timing.min * 1e6:.3f}" if v.base_timing else "—",
             f"{v.head_timing.min * 1e6:.3f}" if v.head_timing else "—",
             f"{v.ratio:.2f}x" if v.ratio is not None else "—",
             f"{v.median_ratio:.2f}x ({v.spread[0]:.2f}x to {v.spread[1]:.2f}x)"
             if v.median_ratio is not None and v.spread else "—"]
            for v in c.variants]
    lines += _table(["variant", "base µs/cell", "head µs/cell", "head / base, fastest",
                     "head / base, median (spread)"], rows, markdown)
    lines += ["", "µs/cell: the fastest round. Spread: the head's quartiles over the base's "
              "(q1/q3 to q3/q1). Identical runs on shared machines differ by 1.5x and more: "
              "a ratio whose spread includes 1 is noise. Time never fails the comparison."]
    lines += ["", f"{h3}Quality against cost (head)", ""]
    figs = (*QUALITY_FIGURES, *COST_FIGURES)
    rows = [[t.name, *(_num(t.figures[f]) for f in figs),
             "yes" if t.on_frontier else f"no: {', '.join(t.beaten_by)}"] for t in c.tradeoffs]
    lines += _table(["variant", "excess copy-s", "wasted deletes", "missing copy-s", "reads",
                     "on the frontier"], rows, markdown)
    lines += ["", "Quality: excess copy-seconds and wasted delete commands; cost: missing "
              "copy-seconds and ledger reads; lower is better on all four. A variant is off "
              "the frontier when another is no worse on all four and better on one."]
    return "\n".join(lines) + "\n"
