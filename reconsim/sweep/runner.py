"""Run a spec's grid in chunks, in parallel, into a resumable Parquet table.

Workers receive the spec and a chunk index and build their slice of the grid and
simulate it. Where they share the output's disk (``write_from="workers"``, the default
for the local backends) each writes its own chunk file atomically and returns only its
row count; otherwise (``"parent"``, the default for Dask) they return the rows and the
parent writes each file as it arrives. The parent alone keeps the manifest, the lock
and the progress bar. A killed sweep leaves only complete chunk files (and perhaps
temporaries, removed on the next start), so running the same command again computes
exactly the missing chunks. The table is the same, byte for byte, whatever the
backend, job count or writer.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import logging.handlers
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import joblib
import numpy as np
import polars as pl
from tqdm import tqdm

from reconsim.errors import ReconsimError, WriteError
from reconsim.model.controllers import ControllerError, registry
from reconsim.model.differential import check_cells
from reconsim.model.laws import law_columns
from reconsim.model.metrics import METRICS, RESPONSES, RESPONSES_DTYPE
from reconsim.model.params import NAME_COLUMNS, SCHEDULE_COLUMN, Cell, parameter, shown
from reconsim.model.simulate import frame_cells, simulate
from reconsim.model.version import MODEL_VERSION
from reconsim.process import POLARS_THREADS_VARIABLE, start_worker
from reconsim.sweep import store
from reconsim.sweep.facts import FACTS_KEY, chunk_facts
from reconsim.sweep.grid import PARAM_COLUMNS, expand, param_columns
from reconsim.sweep.spec import Spec, on_path
from reconsim.words import counted, plural

#: Notices (a sweep that resumes): the ``reconsim`` command prints them on stderr.
logger = logging.getLogger(__name__)

BACKENDS: Final = ("loky", "dask", "sequential")
#: Who writes the chunk files: each worker its own (on the output's disk), or the parent.
WRITERS: Final = ("workers", "parent")
#: The most cells a sweep runs unless ``max_cells`` (``--max-cells``) says more: at the
#: kernel's ~1.4 million cells per core-second about two core-hours, a job a Dask cluster
#: finishes in minutes, and ~40 bytes of Parquet a cell (the default sweep's): ~400 GB.
DEFAULT_MAX_CELLS: Final = 10**10
#: No ``max_cells`` goes beyond this: cell numbers stay exact in int64 with room to spare.
CELLS_CEILING: Final = 10**15
#: A grid of more cells than this gets an estimate of its time and disk first, and
#: ``reconsim sweep`` asks before it starts (``--confirm-above N``; ``--yes`` does not ask):
#: 10^8 cells are some minutes on a laptop's cores and about half a gigabyte.
CONFIRM_CELLS: Final = 10**8
#: Cells an estimate times (:func:`estimate`), in slices spread over the grid, and half of
#: them again: the difference is the cost of a cell, the rest the cost of a chunk.
CALIBRATION_CELLS: Final = 16_000
CALIBRATION_SLICES: Final = 16
#: Cells of each user's controller a sweep runs on the reference model and on the kernels
#: before it starts (:func:`check_controllers`; ``--no-check`` skips it).
CHECK_CELLS: Final = 8


class SweepError(ReconsimError):
    """A sweep that cannot start: bad options or a directory that cannot take it."""


@dataclass(frozen=True)
class SweepResult:
    """What one invocation did."""

    out: Path
    cells: int  # cells in the whole table
    computed: int  # cells simulated by this invocation (0 when it was already complete)
    chunks_computed: int
    seconds: float  # wall-clock, compilation included
    #: How the previous invocation into ``out`` ended when it did not complete
    #: ("failed (RuntimeError: ...)", "was interrupted", ...); None otherwise.
    previous: str | None = None
    #: Seconds the workers' kernel calls that compiled a kernel took (numba's compilation,
    #: and that call's cells), summed over the workers: each compiles its own.
    compile_seconds: float = 0.0
    #: Workers that ran chunks side by side: the jobs, or fewer when fewer chunks ran.
    workers: int = 1

    @property
    def compiling(self) -> float:
        """The wall-clock seconds counted as compilation: the workers' ``compile_seconds``
        shared among them (they compile side by side)."""
        return self.compile_seconds / max(1, self.workers)

    @property
    def cells_per_second(self) -> float:
        """Cells simulated per wall-clock second by this invocation, writing included and
        compilation excluded (over ``seconds`` less :attr:`compiling`): a first run on a
        machine may spend most of a small sweep compiling, and the next run would not."""
        running = self.seconds - self.compiling
        return self.computed / running if running > 0 else 0.0

    @property
    def cells_per_second_with_compile(self) -> float:
        """Cells simulated per wall-clock second by this invocation, compilation included."""
        return self.computed / self.seconds if self.seconds > 0 else 0.0


def check_size(spec: Spec, max_cells: int = DEFAULT_MAX_CELLS) -> None:
    """Refuse a grid larger than ``max_cells``, with its cell count; :class:`SweepError`."""
    if isinstance(max_cells, bool) or not isinstance(max_cells, int) or not (
            1 <= max_cells <= CELLS_CEILING):
        raise SweepError(f"--max-cells must be an integer in [1, {CELLS_CEILING}], "
                         f"got {shown(max_cells)}")
    if spec.n_cells > max_cells:
        raise SweepError(f"{spec.name}: the grid has {count(spec.n_cells)} cells, more than "
                         f"the limit of {max_cells:,}; --max-cells N raises it")


@dataclass(frozen=True)
class Estimate:
    """What a spec's sweep will take on this machine, from a short calibration run of its
    own cells (:func:`estimate`)."""

    cells: int
    chunks: int
    seconds: float  # wall-clock, on ``cores`` cores
    bytes: int  # the table's Parquet files
    calibrated: int  # cells the calibration ran
    cores: int

    @property
    def bytes_per_row(self) -> float:
        """Disk per cell, the chunks' fixed cost spread over their rows."""
        return self.bytes / self.cells if self.cells else 0.0

    def line(self, name: str) -> str:
        """One line: the grid, its time and its disk."""
        return (f"{name}: {count(self.cells)} {plural(self.cells, 'cell')}: about "
                f"{duration(self.seconds)} on this machine ({counted(self.cores, 'core')}) "
                f"and {size(self.bytes)} on disk ({self.bytes_per_row:.1f} bytes a cell), "
                f"timed on {counted(self.calibrated, 'cell')} of the grid")


def estimate(spec: Spec, jobs: int = -1, cells: int = CALIBRATION_CELLS) -> Estimate:
    """The time and disk ``spec``'s sweep will take here, from a calibration run: slices
    of its own cells spread over the grid (up to ``cells`` of them) simulated in this
    process after a few cells have compiled or loaded the kernels, and their Parquet
    encoded in memory, as a chunk's is; then half of each slice again. The difference
    between the two runs is the cost of a cell (time and bytes), the rest a chunk's
    fixed cost (its footer, a call's start-up). Nothing is written; the result is not
    kept. ``jobs`` below this machine's cores scales the time up."""
    n = spec.n_cells
    per = max(1, -(-min(cells, n) // CALIBRATION_SLICES))
    starts = sorted({min(i * n // CALIBRATION_SLICES, n - per)
                     for i in range(CALIBRATION_SLICES)})
    spans = [(lo, min(n, lo + per)) for lo in starts if lo >= 0]
    halves = [(lo, lo + max(1, (hi - lo) // 2)) for lo, hi in spans]
    _calibrate(spec, [(lo, lo + 1) for lo, _ in spans])  # the kernels, compiled or loaded
    full = min((_calibrate(spec, spans) for _ in range(2)), key=lambda r: r[0])
    half = min((_calibrate(spec, halves) for _ in range(2)), key=lambda r: r[0])
    rows = sum(hi - lo for lo, hi in spans)
    half_rows = sum(hi - lo for lo, hi in halves)
    per_cell, per_chunk = _linear(full[0], half[0], rows, half_rows)
    bytes_cell, bytes_chunk = _linear(full[1], half[1], rows, half_rows)
    cores = int(joblib.cpu_count())
    usable = cores if jobs == -1 else max(1, min(jobs, cores))
    # Simulated here on every core (numba's threads); the sweep's workers share them.
    seconds = (n * per_cell + spec.n_chunks * per_chunk) * cores / usable
    return Estimate(cells=n, chunks=spec.n_chunks, seconds=seconds,
                    bytes=round(n * bytes_cell + spec.n_chunks * bytes_chunk),
                    calibrated=rows, cores=usable)


def _calibrate(spec: Spec, spans: list[tuple[int, int]]) -> tuple[float, int]:
    """Seconds to build, simulate and encode the cells of ``spans`` as one chunk, and the
    bytes of its Parquet (in memory)."""
    import io

    started = time.perf_counter()
    frame = simulate(pl.concat([expand(spec, lo, hi) for lo, hi in spans]),
                     checked=True).with_columns(law_columns())
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd")
    return time.perf_counter() - started, buffer.tell()


def _linear(full: float, half: float, rows: int, half_rows: int) -> tuple[float, float]:
    """(per row, fixed) of a cost ``full`` at ``rows`` and ``half`` at ``half_rows``; the
    plain ratio when the two do not give a positive slope (too few rows, noise)."""
    if rows > half_rows and full > half:
        slope = (full - half) / (rows - half_rows)
        return slope, max(0.0, full - slope * rows)
    return full / rows, 0.0


def duration(seconds: float) -> str:
    """A duration as a person reads it.

    >>> duration(0.2), duration(42.4), duration(185), duration(7_380), duration(3 * 86_400)
    ('under a second', '42 s', '3 min 5 s', '2 h 3 min', '3 days')
    """
    s = round(seconds)
    if seconds < 1:
        return "under a second"
    if s < 60:
        return f"{s} s"
    if s < 3_600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    if s < 2 * 86_400:
        h, m = divmod(s // 60, 60)
        return f"{h} h {m} min" if m else f"{h} h"
    return f"{s / 86_400:.0f} days"


def size(n: float) -> str:
    """Bytes in decimal units.

    >>> size(950), size(1_234_567), size(4.2e11)
    ('950 B', '1.2 MB', '420 GB')
    """
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"
    return f"{n:.0f} B"


def count(n: int) -> str:
    """A count as a sentence shows it: with thousands separators, or in powers of ten when
    it has more than 18 digits.

    >>> count(1117200), count(10**40)
    ('1,117,200', 'about 1.0e+40')
    """
    return f"{n:,}" if n < 10**18 else f"about {float(n):.1e}"


def plan(spec: Spec) -> str:
    """One line: the spec's cells and chunks, known before anything is written."""
    return (f"{spec.name}: {count(spec.n_cells)} {plural(spec.n_cells, 'cell')} in "
            f"{counted(spec.n_chunks, 'chunk')} of up to {spec.chunk_size:,}")


def table_schema(spec: Spec | None = None) -> pl.Schema:
    """The columns of a sweep's table, in order, derived from the declarations: the
    parameters (a schedule's name beside its events, a delay table's beside its entries;
    the users' controllers' of ``spec``
    last), the metrics, the responses to each cell's events, the law columns."""
    columns = PARAM_COLUMNS if spec is None else param_columns(spec)
    params: dict[str, pl.DataType] = {
        name: pl.String() if name == SCHEDULE_COLUMN or name in NAME_COLUMNS
        else parameter(name).kind.dtype
        for name in columns}
    metrics: dict[str, pl.DataType] = {m.name: pl.Float64() if m.float else pl.Int64()
                                       for m in METRICS}
    metrics[RESPONSES] = RESPONSES_DTYPE
    return pl.LazyFrame(schema=params | metrics).with_columns(law_columns()).collect_schema()


def model(spec: Spec | None = None) -> store.Model:
    """This reconsim's model: :data:`~reconsim.model.version.MODEL_VERSION`, its table's
    columns, and the identities of ``spec``'s users' controllers. A sweep directory holds
    one model's chunks."""
    if spec is None or not spec.controllers:
        return _builtin_model()
    identities = spec.controller_identities()  # resolved first: their parameters are columns
    return store.Model.of(MODEL_VERSION, table_schema(spec), identities)


@functools.cache
def _builtin_model() -> store.Model:
    return store.Model.of(MODEL_VERSION, table_schema())


def check_controllers(spec: Spec, cells: int = CHECK_CELLS) -> int:
    """Run ``cells`` cells of the grid of each user's controller the spec names (compiled:
    one declared ``compiled=False`` has no kernel) on the reference model and on the
    kernels, and raise :class:`~reconsim.model.differential.ControllerMismatchError` at the
    first difference, with the ``reconsim run`` command that reproduces it (a controller's
    misbehaviour, a :class:`~reconsim.controllers.DecisionError`, as it is). The cells are
    spread over the controller's block at random, the same for the same spec. Returns the
    number of cells compared."""
    users = {c.name for c in spec.resolve_controllers() if c.compiled}
    rng = np.random.default_rng(int(spec.hash, 16))
    checked, offset = 0, 0
    for controller, block in spec.blocks():
        if controller in users and block:
            for i in np.sort(rng.choice(block, size=min(cells, block), replace=False)):
                row = offset + int(i)
                checked += check_cells(frame_cells(expand(spec, row, row + 1)))
        offset += block
    return checked


def run_chunk(spec: Spec, index: int, threads: int | None = None,
              expected: store.Model | None = None) -> tuple[int, pl.DataFrame]:
    """Simulate chunk ``index`` of the spec's grid: parameters, metrics and law columns.
    A worker whose model is not ``expected`` (the sweep's) refuses; it imports the spec's
    users' controllers first."""
    ours = model(spec)
    if expected is not None and expected != ours:
        raise store.StoreError(f"a worker runs another model ({ours}; the sweep's is "
                               f"{expected}): every worker needs the same reconsim and the "
                               "same users' controllers")
    if threads is not None:
        from reconsim.model.kernels import count as kernel

        kernel.set_threads(threads)
    start = index * spec.chunk_size
    stop = min(spec.n_cells, start + spec.chunk_size)
    # The spec's values were checked when it was loaded: no need to check them again.
    return index, simulate(expand(spec, start, stop), checked=True).with_columns(law_columns())


def run_and_write_chunk(spec: Spec, out: Path, index: int, threads: int | None = None,
                        expected: store.Model | None = None) -> tuple[int, int]:
    """Simulate chunk ``index`` and write its file atomically here, in the worker;
    return (index, rows): only two integers travel back to the parent."""
    index, frame = run_chunk(spec, index, threads, expected)
    _write(spec, out, index, frame)
    return index, frame.height


#: How long a sweep tries to reach a ``--scheduler`` before it gives up, in one line.
SCHEDULER_TIMEOUT: Final = "10s"

#: Where a kernel's compilation is logged (:data:`reconsim.model.kernels.specialise.compile_log`,
#: named here so that the runner does not import numba).
COMPILE_LOG: Final = "reconsim.compile"


def noting_compiles(task: Callable[..., Any], *args: Any) -> tuple[Any, list[logging.LogRecord]]:
    """``task(*args)`` (a chunk's), and the kernel compilations it logged, held back: a
    worker's log reaches no terminal, so its parent reports them (:class:`_Reported`)."""
    log = logging.getLogger(COMPILE_LOG)
    handler = logging.handlers.BufferingHandler(capacity=2**31)  # it never flushes
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        return task(*args), handler.buffer
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


class _Reported:
    """The parent's report of its workers' compilations: each kernel and controller once
    (two workers compile the same kernel at the same time), on the compile log; and the
    seconds they took, every worker's (:attr:`SweepResult.compile_seconds`)."""

    def __init__(self) -> None:
        self.seen: set[tuple[Any, ...]] = set()
        self.seconds = 0.0

    def __call__(self, held: list[logging.LogRecord]) -> None:
        log = logging.getLogger(COMPILE_LOG)
        for record in held:  # compiled the %s for controller %r in %.1f s
            args = tuple(record.args or ())
            if len(args) > 2 and isinstance(args[2], (int, float)):
                self.seconds += args[2]
            if args[:2] not in self.seen:
                self.seen.add(args[:2])
                log.handle(record)


def _write(spec: Spec, out: Path, index: int, frame: pl.DataFrame) -> None:
    """Write chunk ``index``'s file, with its footer's facts (about the users' controllers'
    parameters too)."""
    facts = tuple(c for c in param_columns(spec) if c != "deaths")
    store.write_chunk(out, index, frame, model(spec), {FACTS_KEY: chunk_facts(frame, facts)})


#: The manifest's key saying how to import its users' controllers: their import paths or
#: entry points by name (``controllers``) and the folders of the spec's ``import_path``,
#: resolved (``path``).
IMPORTS: Final = "imports"


def sweep_cell(out: str | Path, cell: int) -> Cell:
    """Cell ``cell`` (its id: its number in the grid) of the sweep in ``out``, rebuilt from
    its row of the table: the cell whose metrics the row holds. A user's controller is
    imported as the sweep imported it (the import path or entry point its spec named, the
    folders of its ``import_path`` first on ``sys.path``).

    Raises :class:`~reconsim.sweep.store.StoreError` in one line when ``out`` is no sweep,
    ``cell`` is not in its grid or its chunk is not written, or the controller cannot be
    imported here."""
    out = Path(out)
    row = store.read_cell(out, cell)
    name = row["controller"].item()
    if name not in registry.names():
        imports = (store.read_manifest(out) or {}).get(IMPORTS) or {}
        ref = imports.get("controllers", {}).get(name)
        if ref is None:
            raise store.StoreError(f"cell {cell}: {out / store.MANIFEST} does not say how to "
                                   f"import its controller {name!r}")
        on_path(tuple(imports.get("path", [])))
        try:
            registry.resolve(ref)
        except ControllerError as exc:
            raise store.StoreError(f"cell {cell}: {exc}") from None
    try:
        return frame_cells(row)[0]
    except ValueError as exc:  # a table of another version, or written by hand
        raise store.StoreError(f"cell {cell}: its parameters make no cell ({exc})") from None


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
    write_from: str | None = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    check: bool = True,
) -> SweepResult:
    """Run (or resume) ``spec`` into ``out`` and return what was done.

    ``write_from`` says who writes the chunk files: ``"workers"`` (each its own; they must
    see ``out``, as local processes do) or ``"parent"`` (workers send the rows back);
    default: ``"parent"`` for ``dask``, ``"workers"`` otherwise.
    ``progress=None`` shows a bar only on a terminal. Raises :class:`SweepError` before
    writing anything when the options are bad, and :class:`reconsim.sweep.store.StoreError`
    when ``out`` holds another spec's or another model's results (unless ``force``) or
    another sweep is running into it. A grid of more than ``max_cells`` cells is refused
    (:func:`check_size`). With ``check`` (the default), each user's controller the spec
    names is first run on :data:`CHECK_CELLS` cells of its grid by the reference model
    and the kernels (:func:`check_controllers`): a difference, or a controller that
    misbehaves there, is refused before anything is written.
    """
    check_size(spec, max_cells)
    if backend not in BACKENDS:
        raise SweepError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if jobs == 0 or jobs < -1:
        raise SweepError(f"--jobs must be a positive integer or -1 (all cores); got {jobs}")
    if scheduler is not None and backend != "dask":
        raise SweepError(f"--scheduler needs --backend dask; got --backend {backend}")
    if write_from is None:
        write_from = "parent" if backend == "dask" else "workers"
    if write_from not in WRITERS:
        raise SweepError(f"--write-from must be one of {', '.join(WRITERS)}; "
                         f"got {write_from!r}")
    if backend == "dask":
        _require_dask()
    out = default_out(spec) if out is None else Path(out)
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out}: exists and is not a directory")
    if out.exists():
        _refuse_foreign(out)  # before the lock file is created in it
    if check:
        check_controllers(spec)
    # Connect first: an unreachable scheduler must leave no directory behind.
    with _backend(backend, jobs, scheduler) as (n_jobs, threads):
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WriteError.of(exc, exc.filename or out) from exc
        with store.locked(out):
            _claim(out, spec, force)
            return _run_locked(spec, out, n_jobs, threads, progress, backend, write_from)


def _claim(out: Path, spec: Spec, force: bool) -> None:
    """Make ``out`` this spec's directory, or refuse."""
    _refuse_foreign(out)
    if force:  # whatever it holds, even an unreadable manifest
        store.clear(out)
    manifest = store.read_manifest(out)
    if manifest is None:
        if (out / store.DATA).exists():
            raise store.StoreError(f"{out}: holds data without a {store.MANIFEST}; "
                                   "use --force to start over")
    elif manifest.get("spec_hash") != spec.hash:
        raise store.StoreError(
            f"{out}: holds results of another spec ({manifest.get('name')!r}, hash "
            f"{manifest.get('spec_hash')}; this one is {spec.hash}); use --force to "
            "start over or --out for another directory")
    if manifest is not None:
        store.check_model(out, manifest, model(spec))
        if manifest.get("chunk_size", spec.chunk_size) != spec.chunk_size:
            # Same spec, another default chunk size (another reconsim): chunk i would
            # name other cells.
            raise store.StoreError(
                f"{out}: holds chunks of {manifest['chunk_size']} "
                f"{plural(manifest['chunk_size'], 'cell')}; this reconsim makes chunks of "
                f"{spec.chunk_size}; use --force to start over or --out "
                "for another directory")
    store.remove_strays(out)


def _refuse_foreign(out: Path) -> None:
    """Refuse a directory holding files a sweep did not write: never touch them."""
    foreign = store.foreign_entries(out)
    if foreign and store.read_manifest(out) is None:
        raise store.StoreError(f"{out}: not a reconsim sweep directory (holds "
                               f"{', '.join(foreign[:3])}); choose another --out")


def _run_locked(  # noqa: PLR0913, PLR0917 — run_sweep's options, passed on once
    spec: Spec, out: Path, n_jobs: int, threads: int | None, progress: bool | None,
    backend: str, write_from: str,
) -> SweepResult:
    started = time.perf_counter()
    manifest = store.read_manifest(out) or {}
    previous = _previous_run(manifest)
    if previous is not None:
        logger.warning("%s: the last run %s; resuming", out, previous)
    for key in ("error", "failed"):
        manifest.pop(key, None)
    manifest.update(
        name=spec.name, spec=spec.source, spec_hash=spec.hash, model=model(spec).to_manifest(),
        # what each user's controller does, for a report that never imports its module
        controllers={c.name: c.help for c in spec.resolve_controllers()},
        # how to import each, for `reconsim run --from DIR --cell ID` (which may)
        **({IMPORTS: {"controllers": dict(spec.controllers),
                      "path": list(spec.import_path)}} if spec.controllers else {}),
        version=version("reconsim"),
        cells=spec.n_cells, chunk_size=spec.chunk_size, chunks=spec.n_chunks,
        started=manifest.get("started") or _now(), status="running",
    )
    store.write_json(out / store.MANIFEST, manifest)
    sweep_model = model(spec)
    # Per-chunk bookkeeping only over the chunk files present: the chunks still to run are
    # a generator, so a grid of 10**10 cells in 10**10 chunks starts at once.
    done = {i for i in store.done_chunks(out) if i < spec.n_chunks}
    todo = (i for i in range(spec.n_chunks) if i not in done)
    n_todo = spec.n_chunks - len(done)
    todo_cells = spec.n_cells - sum(_chunk_cells(spec, i) for i in done)
    bar = tqdm(total=spec.n_cells, initial=spec.n_cells - todo_cells, unit="cell",
               unit_scale=True, desc=spec.name, dynamic_ncols=True, smoothing=0.1,
               disable=None if progress is None else not progress)
    report = _Reported()
    try:
        with bar:
            parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            if write_from == "workers":
                # Workers on another machine need the path as this machine spells it.
                where = out.resolve()
                tasks = (joblib.delayed(noting_compiles)(run_and_write_chunk, spec, where, i,
                                                         threads, sweep_model) for i in todo)
                for (_, rows), held in parallel(tasks):
                    with bar.external_write_mode():
                        report(held)
                    bar.update(rows)
            else:
                for (index, frame), held in parallel(
                        joblib.delayed(noting_compiles)(run_chunk, spec, i, threads, sweep_model)
                        for i in todo):
                    with bar.external_write_mode():
                        report(held)
                    _write(spec, out, index, frame)
                    bar.update(frame.height)
    except BaseException as exc:
        # Record how it ended, so the next run can say; a SIGKILL leaves "running". Where
        # the directory cannot take even that (the disk that stopped the sweep is full),
        # the error that stopped it is the one to report; the next run then says the last
        # one stopped before it finished.
        interrupted = isinstance(exc, KeyboardInterrupt)
        manifest.update(status="interrupted" if interrupted else "failed", failed=_now())
        if not interrupted:
            manifest["error"] = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(OSError):
            # Local workers stopped mid-chunk leave their temporary files; joblib has
            # killed them by now (and waited for them). A Dask task still running writes
            # its chunk whole, or removes its own temporary file. First: it frees space.
            store.remove_strays(out)
        with contextlib.suppress(OSError):
            store.write_json(out / store.MANIFEST, manifest)
        raise
    seconds = time.perf_counter() - started
    result = SweepResult(out=out, cells=spec.n_cells, computed=todo_cells,
                         chunks_computed=n_todo, seconds=seconds, previous=previous,
                         compile_seconds=report.seconds, workers=max(1, min(n_jobs, n_todo)))
    if n_todo:
        manifest.update(finished=_now(), status="complete", backend=backend, jobs=n_jobs,
                        write_from=write_from, cells_computed=todo_cells,
                        seconds=round(seconds, 3),
                        compile_seconds=round(result.compile_seconds, 3),
                        cells_per_second=round(result.cells_per_second),
                        cells_per_second_with_compile=round(
                            result.cells_per_second_with_compile))
    else:
        manifest["status"] = "complete"
    store.write_json(out / store.MANIFEST, manifest)
    return result


def _previous_run(manifest: dict[str, Any]) -> str | None:
    """How the last run into a directory ended, when it did not complete; None otherwise."""
    status = manifest.get("status")
    if status == "failed":
        return f"failed ({manifest.get('error', 'no error recorded')})"
    if status == "interrupted":
        return "was interrupted"
    if status == "running":  # its lock is free: it was killed
        return "stopped before it finished (killed?)"
    return None


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
        # Each worker sets its own polars pool as it starts (reconsim.process.start_worker);
        # this process's environment stays as it is. No memory-mapping of arguments (a
        # task's are a spec and a chunk number): joblib then makes no temporary folder for
        # loky's resource tracker to clean, which, racing the pool's own clean-up when a
        # sweep stops on an error, printed a second line after the sweep's one.
        with joblib.parallel_config(backend="loky", initializer=start_worker,
                                    initargs=(worker_polars_threads(n_jobs),),
                                    max_nbytes=None):
            # Several processes share the cores: one kernel thread each.
            yield n_jobs, (1 if n_jobs > 1 else None)
        return
    from dask.distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if scheduler is None:
            n = joblib.cpu_count() if jobs == -1 else jobs
            # No dashboard; the scheduler's own HTTP server (health, metrics) on a free
            # local port, not its default 8787: two sweeps at once would share it.
            cluster = stack.enter_context(LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}))
            client = stack.enter_context(Client(cluster))  # type: ignore[no-untyped-call]
        else:
            try:
                client = stack.enter_context(
                    Client(scheduler, timeout=SCHEDULER_TIMEOUT))  # type: ignore[no-untyped-call]
            except OSError as exc:
                raise SweepError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        n_jobs = sum(client.nthreads().values()) if jobs == -1 else jobs
        stack.enter_context(joblib.parallel_config(backend="dask"))
        yield max(1, n_jobs), 1


def worker_polars_threads(n_jobs: int) -> int | None:
    """The size of each of ``n_jobs`` local workers' polars pools: cores // n_jobs, as
    joblib gives their numba and OpenMP pools, unless ``POLARS_MAX_THREADS`` is set (None:
    the workers inherit it). n_jobs processes already share the cores, and each worker's
    polars writes a chunk alongside the others' kernels."""
    if POLARS_THREADS_VARIABLE in os.environ:
        return None
    return max(1, int(joblib.cpu_count()) // n_jobs)


def _require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SweepError("--backend dask needs Dask: pip install 'reconsim[dask]'") from None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def describe(result: SweepResult) -> str:
    """One line saying what a sweep invocation did: its time, the part of it spent
    compiling kernels if any, and its cells per second without that part."""
    if result.computed == 0:
        return f"{result.out}: already complete, {counted(result.cells, 'cell')}; nothing to do"
    compiling = (f" ({result.compiling:.1f} s of it compiling kernels)"
                 if result.compile_seconds else "")
    return (f"{result.out}: {counted(result.computed, 'cell')} in "
            f"{counted(result.chunks_computed, 'chunk')}, {result.seconds:.1f} s{compiling}, "
            f"{result.cells_per_second:,.0f} cells/s{' without compiling' if compiling else ''} "
            f"(table: {counted(result.cells, 'cell')})")

