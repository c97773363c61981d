"""The history of the controller benchmarks: every saved run, machine by machine in commit
order, and the steps where a quality figure changed.

``nox -s bench`` saves each run as pytest-benchmark JSON under ``results/bench/``
(``results/bench/<machine-id>/NNNN_*.json``). Each file is read by
:func:`reconsim.benchmarks.compare.read_run`, the one reader of benchmark files; a run without
controller benchmarks (``bench/bench_controllers.py``, whose quality figures are in
``extra_info["quality"]``) is left out and counted. A file that is not a pytest-benchmark
run is an error naming it: a corrupt file in the history is not skipped in silence.

Runs are kept apart by machine (pytest-benchmark's ``machine_info``: host, processor,
cores, Python): time per cell only compares on one machine, and a step is a change
between two consecutive runs on one machine. Runs are ordered by their commit's time
(the run's own time when it has no commit time, outside git), then by when they ran.

Computing lives here; :mod:`reconsim.benchmarks.history_page` renders the page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import polars as pl

from reconsim.benchmarks.compare import BenchError, Run, read_run

_TIME: Final = pl.Datetime("us", "UTC")

#: Columns of :attr:`History.runs`, one row per run with controller benchmarks.
RUN_SCHEMA: Final = pl.Schema({
    "machine": pl.String(), "run": pl.Int64(), "path": pl.String(), "commit": pl.String(),
    "dirty": pl.Boolean(), "commit_time": _TIME, "run_time": _TIME, "date": _TIME,
})
#: Columns of :attr:`History.quality`: one row per run, variant and quality figure.
QUALITY_SCHEMA: Final = pl.Schema({
    "machine": pl.String(), "run": pl.Int64(), "commit": pl.String(), "dirty": pl.Boolean(),
    "date": _TIME, "run_time": _TIME, "variant": pl.String(), "figure": pl.String(),
    "value": pl.Int64(),
})
#: Columns of :attr:`History.timing`: one row per run and variant with saved stats;
#: microseconds per cell of the fastest round, the quartiles and the median.
TIMING_SCHEMA: Final = pl.Schema({
    "machine": pl.String(), "run": pl.Int64(), "commit": pl.String(), "dirty": pl.Boolean(),
    "date": _TIME, "run_time": _TIME, "variant": pl.String(), "min_us": pl.Float64(),
    "q1_us": pl.Float64(), "median_us": pl.Float64(), "q3_us": pl.Float64(), "rounds": pl.Int64(),
})
_KEYS: Final = ["machine", "variant", "figure"]


@dataclass(frozen=True)
class History:
    """Every saved run of the controller benchmarks, as tidy frames.

    ``run`` numbers the runs of one machine in order (0, 1, ...); ``date`` is the
    commit's time, or the run's where the run has none. :attr:`steps` holds each change
    of a quality figure from one run of a machine to the next run that measured it: the
    values before and after, and both runs' commits and dates.
    """

    runs: pl.DataFrame
    quality: pl.DataFrame
    timing: pl.DataFrame
    steps: pl.DataFrame
    #: Files that hold benchmark runs without controller benchmarks, left out.
    skipped: tuple[str, ...] = ()

    @property
    def machines(self) -> list[str]:
        """The machines, in the order of their first run's date."""
        first = self.runs.group_by("machine").agg(pl.col("date").min()).sort("date", "machine")
        return first["machine"].to_list()

    @property
    def empty(self) -> bool:
        return self.runs.is_empty()


def saved_runs(bench_dir: str | Path) -> list[Path]:
    """The pytest-benchmark files under ``bench_dir`` (``**/*.json``), sorted; none when
    the folder does not exist."""
    bench_dir = Path(bench_dir)
    if not bench_dir.is_dir():
        return []
    return sorted(p for p in bench_dir.rglob("*.json") if p.is_file())


def load_history(bench_dir: str | Path) -> History:
    """Read every saved run under ``bench_dir``; raise :class:`BenchError` naming the first
    file that is not a pytest-benchmark run, or whose dates do not read."""
    runs: list[Run] = []
    skipped: list[Run] = []
    for path in saved_runs(bench_dir):
        run = read_run(path)
        (runs if run.variants else skipped).append(run)
    return history_of(runs, skipped=tuple(r.path for r in skipped))


def history_of(runs: Iterable[Run], skipped: tuple[str, ...] = ()) -> History:
    """The history of ``runs`` (each with its controller variants)."""
    runs = list(runs)
    run_rows = []
    for i, run in enumerate(runs):
        commit_time = _time(run, "commit_info.time", run.commit_time)
        run_time = _time(run, "datetime", run.run_time)
        if run_time is None:
            raise BenchError(f"{run.path}: datetime: missing (pytest-benchmark writes when "
                             "the run started)")
        run_rows.append({"index": i, "machine": run.machine, "path": run.path,
                         "commit": run.commit if isinstance(run.commit, str) else "unknown",
                         "dirty": run.dirty, "commit_time": commit_time,
                         "run_time": run_time, "date": commit_time or run_time})
    schema = pl.Schema({"index": pl.Int64(),
                        **{k: v for k, v in RUN_SCHEMA.items() if k != "run"}})
    frame = pl.DataFrame(run_rows, schema=schema).sort(
        "machine", "date", "run_time", "path").with_columns(
        run=pl.int_range(pl.len(), dtype=pl.Int64).over("machine"))
    quality_rows, timing_rows = [], []
    for row in frame.iter_rows(named=True):
        common = {k: row[k] for k in ("machine", "run", "commit", "dirty", "date", "run_time")}
        for variant in runs[row["index"]].variants.values():
            quality_rows += [{**common, "variant": variant.name, "figure": figure,
                              "value": value} for figure, value in variant.quality.items()]
            t = variant.timing
            if t is not None:
                timing_rows.append({**common, "variant": variant.name, "min_us": t.min * 1e6,
                                    "q1_us": t.q1 * 1e6, "median_us": t.median * 1e6,
                                    "q3_us": t.q3 * 1e6, "rounds": t.rounds})
    quality = pl.DataFrame(quality_rows, schema=QUALITY_SCHEMA)
    return History(runs=frame.select(list(RUN_SCHEMA)), quality=quality,
                   timing=pl.DataFrame(timing_rows, schema=TIMING_SCHEMA),
                   steps=quality_steps(quality), skipped=skipped)


def quality_steps(quality: pl.DataFrame) -> pl.DataFrame:
    """Each change of a quality figure between consecutive runs of one machine that
    measured it: ``before`` and ``value``, the run's ``commit`` and ``date``, and the
    previous run's (``previous_commit``, ``previous_date``), in machine and run order.

    >>> import datetime as dt
    >>> q = pl.DataFrame({"machine": "m", "run": [0, 1, 2], "commit": ["a", "b", "c"],
    ...     "dirty": False, "date": [dt.datetime(2026, 1, d) for d in (1, 2, 3)],
    ...     "run_time": None, "variant": "ledger", "figure": "reads",
    ...     "value": [10, 10, 12]})
    >>> quality_steps(q).select("commit", "previous_commit", "before", "value").rows()
    [('c', 'b', 10, 12)]
    """
    previous = [pl.col(c).shift().over(_KEYS).alias(f"previous_{c}")
                for c in ("value", "commit", "dirty", "date", "run")]
    return (quality.sort("machine", "run")
            .with_columns(previous)
            .filter(pl.col("previous_value").is_not_null()
                    & (pl.col("value") != pl.col("previous_value")))
            .select("machine", "variant", "figure", "run", "commit", "dirty", "date",
                    "previous_run", "previous_commit", "previous_dirty", "previous_date",
                    pl.col("previous_value").alias("before"), "value",
                    (pl.col("value") - pl.col("previous_value")).alias("change"))
            .sort("machine", "run", "variant", "figure"))


def _time(run: Run, field: str, value: object) -> datetime | None:
    """An ISO 8601 time from a saved run, in UTC (a time without zone is taken as UTC);
    None when the run has none (pytest-benchmark outside git)."""
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise ValueError
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BenchError(f"{run.path}: {field}: not an ISO 8601 time ({value!r})") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
