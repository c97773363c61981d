"""Run a spec's grid in chunks, in parallel, into a resumable Parquet table.

Workers receive the spec and a chunk index, build their slice of the grid, simulate
it and return the rows; the parent writes each chunk file atomically as it arrives.
A killed sweep leaves only complete chunk files (and perhaps temporaries, removed on
the next start), so running the same command again computes exactly the missing
chunks. The table is the same, byte for byte, whatever the backend or job count.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Final

import joblib
import polars as pl
from tqdm import tqdm

from reconsim.model import kernel
from reconsim.model.laws import law_columns
from reconsim.model.simulate import simulate
from reconsim.sweep import store
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import Spec

BACKENDS: Final = ("loky", "dask", "sequential")


class SweepError(Exception):
    """A sweep that cannot start: bad options or a directory that cannot take it."""


@dataclass(frozen=True)
class SweepResult:
    """What one invocation did."""

    out: Path
    cells: int  # cells in the whole table
    computed: int  # cells simulated by this invocation (0 when it was already complete)
    chunks_computed: int
    seconds: float

    @property
    def cells_per_second(self) -> float:
        """Cells simulated per wall-clock second by this invocation, writing included."""
        return self.computed / self.seconds if self.seconds > 0 else 0.0


def run_chunk(spec: Spec, index: int, threads: int | None = None) -> tuple[int, pl.DataFrame]:
    """Simulate chunk ``index`` of the spec's grid: parameters, metrics and law columns."""
    if threads is not None:
        kernel.set_threads(threads)
    start = index * spec.chunk_size
    stop = min(spec.n_cells, start + spec.chunk_size)
    return index, simulate(expand(spec, start, stop)).with_columns(law_columns())


def default_out(spec: Spec) -> Path:
    """``results/<name>``: where a sweep goes unless told otherwise."""
    return Path("results") / spec.name


def run_sweep(  # noqa: PLR0913
    spec: Spec,
    out: str | Path | None = None,
    *,
    jobs: int = -1,
    backend: str = "loky",
    scheduler: str | None = None,
    force: bool = False,
    progress: bool | None = None,
) -> SweepResult:
    """Run (or resume) ``spec`` into ``out`` and return what was done.

    ``progress=None`` shows a bar only on a terminal. Raises :class:`SweepError` before
    writing anything when the options are bad, and :class:`reconsim.sweep.store.StoreError`
    when ``out`` holds another spec's results (unless ``force``) or another sweep is
    running into it.
    """
    if backend not in BACKENDS:
        raise SweepError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if jobs == 0 or jobs < -1:
        raise SweepError(f"--jobs must be a positive integer or -1 (all cores); got {jobs}")
    if scheduler is not None and backend != "dask":
        raise SweepError(f"--scheduler needs --backend dask; got --backend {backend}")
    if backend == "dask":
        _require_dask()
    out = default_out(spec) if out is None else Path(out)
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out}: exists and is not a directory")
    if out.exists():
        _refuse_foreign(out)  # before the lock file is created in it
    # Connect first: an unreachable scheduler must leave no directory behind.
    with _backend(backend, jobs, scheduler) as (n_jobs, threads):
        out.mkdir(parents=True, exist_ok=True)
        with store.locked(out):
            _claim(out, spec, force)
            return _run_locked(spec, out, n_jobs, threads, progress, backend)


def _claim(out: Path, spec: Spec, force: bool) -> None:
    """Make ``out`` this spec's directory, or refuse."""
    _refuse_foreign(out)
    manifest = store.read_manifest(out)
    if manifest is None:
        if (out / store.DATA).exists():
            if not force:
                raise store.StoreError(f"{out}: holds data without a {store.MANIFEST}; "
                                       "use --force to start over")
            store.clear(out)
    elif manifest.get("spec_hash") != spec.hash:
        if not force:
            raise store.StoreError(
                f"{out}: holds results of another spec ({manifest.get('name')!r}, hash "
                f"{manifest.get('spec_hash')}; this one is {spec.hash}); use --force to "
                "start over or --out for another directory")
        store.clear(out)
    elif force:
        store.clear(out)
    store.remove_strays(out)


def _refuse_foreign(out: Path) -> None:
    """Refuse a directory holding files a sweep did not write: never touch them."""
    foreign = store.foreign_entries(out)
    if foreign and store.read_manifest(out) is None:
        raise store.StoreError(f"{out}: not a reconsim sweep directory (holds "
                               f"{', '.join(foreign[:3])}); choose another --out")


def _run_locked(  # noqa: PLR0913, PLR0917 — run_sweep's options, passed on once
    spec: Spec, out: Path, n_jobs: int, threads: int | None, progress: bool | None,
    backend: str,
) -> SweepResult:
    started = time.perf_counter()
    manifest = store.read_manifest(out) or {}
    manifest.update(
        name=spec.name, spec=spec.source, spec_hash=spec.hash, version=version("reconsim"),
        cells=spec.n_cells, chunk_size=spec.chunk_size, chunks=spec.n_chunks,
        started=manifest.get("started") or _now(), status="running",
    )
    store.write_json(out / store.MANIFEST, manifest)
    done = store.done_chunks(out)
    todo = [i for i in range(spec.n_chunks) if i not in done]
    todo_cells = sum(_chunk_cells(spec, i) for i in todo)
    bar = tqdm(total=spec.n_cells, initial=spec.n_cells - todo_cells, unit="cell",
               unit_scale=True, desc=spec.name, dynamic_ncols=True, smoothing=0.1,
               disable=None if progress is None else not progress)
    with bar:
        tasks = (joblib.delayed(run_chunk)(spec, i, threads) for i in todo)
        results = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
        for index, frame in results:
            store.write_chunk(out, index, frame)
            bar.update(frame.height)
    seconds = time.perf_counter() - started
    result = SweepResult(out=out, cells=spec.n_cells, computed=todo_cells,
                         chunks_computed=len(todo), seconds=seconds)
    if todo:
        manifest.update(finished=_now(), status="complete", backend=backend, jobs=n_jobs,
                        cells_computed=todo_cells, seconds=round(seconds, 3),
                        cells_per_second=round(result.cells_per_second))
    else:
        manifest["status"] = "complete"
    store.write_json(out / store.MANIFEST, manifest)
    return result


def _chunk_cells(spec: Spec, index: int) -> int:
    return min(spec.chunk_size, spec.n_cells - index * spec.chunk_size)


@contextlib.contextmanager
def _backend(backend: str, jobs: int, scheduler: str | None) -> Iterator[tuple[int, int | None]]:
    """Configure joblib; yield (n_jobs, numba threads per task or None for all cores)."""
    if backend == "sequential":
        with joblib.parallel_config(backend="sequential"):
            yield 1, None
        return
    if backend == "loky":
        n_jobs = joblib.cpu_count() if jobs == -1 else jobs
        with joblib.parallel_config(backend="loky"):
            # Several processes share the cores: one kernel thread each.
            yield n_jobs, (1 if n_jobs > 1 else None)
        return
    from dask.distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if scheduler is None:
            n = joblib.cpu_count() if jobs == -1 else jobs
            cluster = stack.enter_context(LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None))
            client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
        else:
            try:
                client = stack.enter_context(
                    Client(scheduler, timeout="10s"))  # type: ignore[no-untyped-call]
            except OSError as exc:
                raise SweepError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        n_jobs = sum(client.nthreads().values()) if jobs == -1 else jobs
        stack.enter_context(joblib.parallel_config(backend="dask"))
        yield max(1, n_jobs), 1


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SweepError("--backend dask needs Dask: pip install 'reconsim[dask]'") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def describe(result: SweepResult) -> str:
    """One line saying what a sweep invocation did."""
    if result.computed == 0:
        return f"{result.out}: already complete, {result.cells:,} cells; nothing to do"
    return (f"{result.out}: {result.computed:,} cells in {result.chunks_computed} chunks, "
            f"{result.seconds:.1f} s, {result.cells_per_second:,.0f} cells/s "
            f"(table: {result.cells:,} cells)")

