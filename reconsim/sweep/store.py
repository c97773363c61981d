"""The on-disk layout of a sweep: chunk files, the manifest, the lock. Polars and files only.

::

    DIR/sweep.json            the manifest: spec, its hash, model, version, counts, times
    DIR/data/part-00000.parquet  one file per chunk of cells, written atomically, its
                              footer stating its model version and facts about its rows
                              (reconsim.sweep.facts)
    DIR/.lock                 held (flock) while a sweep writes into DIR

A directory holds one model's results: the manifest records the :class:`Model` (its
version and its table's columns), each chunk file its model version, and
:func:`check_model` refuses a directory or a chunk another model wrote.

A cell's id is its number in the spec's grid (row-major, as
:func:`reconsim.sweep.grid.expand` numbers them); the table holds no column for it: chunk
``i`` (``part-i``) holds cells ``i * chunk_size`` onwards, one a row, in order, so row
``r`` of chunk ``i`` is cell ``i * chunk_size + r`` (:func:`read_cell`; the report numbers
the rows it reads the same way, :func:`cell_ids`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.io import atomic_write, cannot_write

MANIFEST = "sweep.json"
DATA = "data"
LOCK = ".lock"
#: What a sweep owns in its DIR; ``--force`` removes these and nothing else.
OWNED = (MANIFEST, DATA, "report.html", "summary.json", "figures")
#: The key of a chunk file's Parquet metadata that holds the version of the model that
#: wrote it.
MODEL_KEY: Final = "reconsim.model_version"
#: The footer key listing the users' controllers (their identities) a chunk ran, if any.
CONTROLLERS_KEY: Final = "reconsim.controllers"
#: At most this many column names in a refusal, then a count.
_NAMED: Final = 4


class StoreError(ReconsimError):
    """DIR cannot take this sweep (another spec's or model's results, a running sweep,
    foreign files)."""


@dataclass(frozen=True)
class Model:
    """Which model wrote a table: its version and its columns' names and dtypes, in order.
    None where that was not recorded (a manifest or a chunk older than model identities).
    """

    version: int | None
    columns: tuple[tuple[str, str], ...] | None
    #: The identities of the users' controllers it ran (name@version or name@digest).
    controllers: tuple[str, ...] = ()

    @classmethod
    def of(cls, version: int, schema: Mapping[str, pl.DataType],
           controllers: tuple[str, ...] = ()) -> Model:
        """The model of ``version`` whose table has ``schema``, with ``controllers``."""
        return cls(version, _columns(schema), controllers)

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> Model:
        """The model a manifest records (both fields None when it records none)."""
        doc = manifest.get("model")
        if not isinstance(doc, dict):
            return cls(None, None)
        version, columns = doc.get("version"), doc.get("columns")
        controllers = doc.get("controllers", [])
        return cls(version if isinstance(version, int) else None,
                   tuple((str(k), str(v)) for k, v in columns.items())
                   if isinstance(columns, dict) else None,
                   tuple(str(c) for c in controllers) if isinstance(controllers, list) else ())

    def to_manifest(self) -> dict[str, Any]:
        """The manifest's ``model`` field (``controllers`` only where a user's ran)."""
        doc = {"version": self.version, "schema": self.fingerprint,
               "columns": dict(self.columns or ())}
        return doc | ({"controllers": list(self.controllers)} if self.controllers else {})

    @property
    def fingerprint(self) -> str | None:
        """A short digest of the columns' names, dtypes and order."""
        if self.columns is None:
            return None
        return hashlib.sha256(json.dumps(self.columns).encode()).hexdigest()[:8]

    def __str__(self) -> str:
        version = "unrecorded" if self.version is None else self.version
        controllers = f", controllers {', '.join(self.controllers)}" if self.controllers else ""
        return f"model {version}, schema {self.fingerprint or 'unrecorded'}{controllers}"

    def differences(self, ours: Model) -> str:
        """How this model's columns differ from ``ours``, in words ("" when they do not)."""
        if self.columns is None or ours.columns is None or self.columns == ours.columns:
            return ""
        there, here = dict(self.columns), dict(ours.columns)
        sides = [f"{side}: {_names(names)}" for side, names in (
            ("only there", [n for n in there if n not in here]),
            ("only here", [n for n in here if n not in there])) if names]
        dtypes = [f"{n} ({there[n]} there, {here[n]} here)"
                  for n in there if n in here and there[n] != here[n]]
        parts = ["columns " + "; ".join(sides)] if sides else []
        parts += [f"other dtypes: {_names(dtypes)}"] if dtypes else []
        return "; ".join(parts) or "the same columns in another order"


def _names(names: list[str]) -> str:
    more = len(names) - _NAMED
    return ", ".join(names[:_NAMED]) + (f" and {more} more" if more > 0 else "")


def check_model(out: Path, manifest: Mapping[str, Any], ours: Model) -> None:
    """Refuse (:class:`StoreError`, one line naming both models) a directory whose manifest
    or any chunk file another model wrote: a table never mixes two models' chunks."""
    theirs = Model.from_manifest(manifest)
    if theirs.version is None and theirs.columns is None:
        _refuse(out, "holds results of an unrecorded model",
                "its sweep.json predates model identities", ours)
    if theirs != ours:
        _refuse(out, "holds results of another model", str(theirs), ours,
                theirs.differences(ours))
    for index in sorted(done_chunks(out)):
        path = chunk_path(out, index)
        theirs = chunk_model(path)
        if theirs.version is None:
            _refuse(path, "written by an unrecorded model",
                    f"no {MODEL_KEY} in its metadata; schema {theirs.fingerprint}", ours,
                    theirs.differences(ours))
        if theirs != ours:
            _refuse(path, "written by another model", str(theirs), ours,
                    theirs.differences(ours))


def _refuse(where: Path, what: str, theirs: str, ours: Model, columns: str = "") -> None:
    details = "; ".join(d for d in (theirs, columns, f"this reconsim's is {ours}") if d)
    raise StoreError(f"{where}: {what} ({details}); use --force to start over or --out for "
                     "another directory")


def chunk_model(path: Path) -> Model:
    """The model that wrote a chunk file: the version its metadata records and the columns
    it holds."""
    try:
        metadata = pl.read_parquet_metadata(path)
        version, controllers = metadata.get(MODEL_KEY), metadata.get(CONTROLLERS_KEY)
        schema = pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"{path}: unreadable ({first}); use --force to start over") from None
    return Model(int(version) if version is not None and version.isdecimal() else None,
                 _columns(schema), tuple(controllers.split(" ")) if controllers else ())


def _columns(schema: Mapping[str, pl.DataType]) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(dtype)) for name, dtype in schema.items())


def chunk_path(out: Path, index: int) -> Path:
    """The file holding chunk ``index``."""
    return out / DATA / f"part-{index:05d}.parquet"


def scan(out: str | Path) -> pl.LazyFrame:
    """The whole table of a sweep, lazily: one row per cell.

    Checked before it is returned: a path that is no directory, a directory that cannot
    be listed, one without chunk files (``DATA/part-*.parquet``) or whose table cannot be
    read raises :class:`StoreError`, one line naming the path, not a polars error later.
    """
    path = Path(out)
    files = sorted(_chunk_files(path))
    if not files:
        raise StoreError(f"{path}: not a sweep's output (no {DATA}/part-*.parquet)")
    lazy = pl.scan_parquet(path / DATA / "part-*.parquet")
    try:
        lazy.collect_schema()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise StoreError(f"{path}: unreadable table ({_first_line(exc)})") from None
    return lazy


def _chunk_files(path: Path) -> list[Path]:
    """The chunk files of sweep directory ``path``; :class:`StoreError` naming the path
    when it is no directory or cannot be listed."""
    try:
        if not path.is_dir():
            raise StoreError(f"{path}: no such directory" if not path.exists()
                             else f"{path}: not a directory")
        data = path / DATA
        if not data.is_dir():
            return []
        return [p for p in data.iterdir()
                if p.name.startswith("part-") and p.name.endswith(".parquet")]
    except OSError as exc:
        raise StoreError(f"{path}: unreadable ({exc.strerror or exc})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def done_chunks(out: Path) -> set[int]:
    """Indices of the chunk files present (each complete: they are written atomically)."""
    return {i for p in (out / DATA).glob("part-*.parquet")
            if (i := chunk_index(p)) is not None}


def chunk_index(path: Path) -> int | None:
    """The chunk a file ``part-NNNNN.parquet`` holds, or None for another name."""
    digits = path.name.removeprefix("part-").removesuffix(".parquet")
    return int(digits) if digits.isdecimal() and digits.isascii() else None


def cell_ids(row: pl.Expr, chunks: list[int], chunk_size: int) -> pl.Expr:
    """The cell ids of a table's rows from their positions ``row`` (0, 1, ... over the
    chunk files present, in name order, ``chunks`` their indices): every chunk but the
    grid's last holds ``chunk_size`` cells, so the row at position ``p`` lies in the
    ``p // chunk_size``-th file present. With every chunk from 0 on present, the id is the
    position.

    >>> pl.select(cell_ids(pl.lit(pl.Series([0, 1, 2, 3])), [0, 5], 2)).to_series().to_list()
    [0, 1, 10, 11]
    """
    position = row.cast(pl.Int64)
    if chunks == list(range(len(chunks))):
        return position
    present = position // chunk_size
    shift = present.replace_strict(list(range(len(chunks))),
                                   [(c - p) * chunk_size for p, c in enumerate(chunks)],
                                   return_dtype=pl.Int64)
    return position + shift


def read_cell(out: Path, cell: int) -> pl.DataFrame:
    """Cell ``cell``'s row of the sweep in ``out`` (one row, as its chunk file holds it).

    :class:`StoreError`, one line, when ``out`` is no sweep's directory, ``cell`` lies
    outside its grid, or its chunk is not written (a sweep that has not finished)."""
    manifest = read_manifest(out) if out.is_dir() else None
    if manifest is None:
        raise StoreError(f"{out}: not a sweep's directory (no {MANIFEST})" if out.is_dir()
                         else f"{out}: no such directory" if not out.exists()
                         else f"{out}: not a directory")
    cells, size = manifest.get("cells"), manifest.get("chunk_size")
    if not isinstance(cells, int) or not isinstance(size, int) or size < 1:
        raise StoreError(f"{out / MANIFEST}: records no cells and chunk_size")
    if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell < cells:
        raise StoreError(f"cell {cell!r}: not in the grid of {out} (cells 0 to "
                         f"{cells - 1:,})")
    path = chunk_path(out, cell // size)
    if not path.is_file():
        raise StoreError(f"cell {cell}: its chunk {path} is not written (the sweep has not "
                         "finished; run it again to complete it)")
    try:
        row = pl.scan_parquet(path).slice(cell % size, 1).collect()
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise StoreError(f"{path}: unreadable ({_first_line(exc)})") from None
    if row.height != 1:
        raise StoreError(f"{path}: holds no row {cell % size} (cell {cell})")
    return row


def write_chunk(out: Path, index: int, frame: pl.DataFrame, model: Model,
                facts: Mapping[str, str] | None = None) -> None:
    """Write one chunk atomically (a temporary file in the same folder, fsync, rename),
    its metadata naming the version of the ``model`` that computed it, plus ``facts``
    (more metadata: :mod:`reconsim.sweep.facts`)."""
    target = chunk_path(out, index)
    metadata = {MODEL_KEY: str(model.version), **(facts or {})}
    if model.controllers:
        metadata[CONTROLLERS_KEY] = " ".join(model.controllers)

    def write(f: BinaryIO) -> None:
        sink = _Sink(f)
        try:
            frame.write_parquet(sink, compression="zstd", metadata=metadata)  # type: ignore[arg-type]
        except pl.exceptions.PolarsError as exc:
            # polars raises its own exception (a ComputeError) when the file fails: the
            # operating system's error it wraps comes out as such (atomic_write names the
            # file); any other stays what it is.
            raise (sink.error or os_error(exc) or exc) from None

    atomic_write(target, write)


class _Sink:
    """The file a chunk's Parquet is written into, which keeps the :class:`OSError` a write
    raised (a full disk): polars reports it in its own exception, whose message does not
    always carry it (a footer cut short says "Invalid thrift: transport error"). polars
    writes through ``write``, ``flush`` and ``tell``."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.error: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            return self._file.write(data)
        except OSError as exc:
            self.error = exc
            raise

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as exc:
            self.error = exc
            raise

    def tell(self) -> int:
        return self._file.tell()


#: How polars' messages carry the operating system's error where it wrote the file
#: itself: "... underlying IO error: No space left on device (os error 28)".
_OS_ERROR = re.compile(r"\(os error (\d+)\)|\[Errno (\d+)\]")


def os_error(exc: pl.exceptions.PolarsError) -> OSError | None:
    """The :class:`OSError` a polars error's message reports, or None when it reports none.

    >>> os_error(pl.exceptions.ComputeError("parquet: File out of specification: underlying "
    ...                                     "IO error: No space left on device (os error 28)"))
    OSError(28, 'No space left on device')
    """
    found = _OS_ERROR.search(str(exc))
    if found is None:
        return None
    code = int(found.group(1) or found.group(2))
    return OSError(code, os.strerror(code))


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write a JSON document atomically."""
    atomic_write(path, lambda f: f.write(json.dumps(doc, indent=2, default=str).encode()))


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of ``out``, or None if there is none; :class:`StoreError` naming the
    file when it is unreadable or not a JSON object."""
    path = out / MANIFEST
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        raise StoreError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column "
                         f"{exc.colno}); use --force to start over") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: unreadable ({exc})") from None
    if not isinstance(doc, dict):
        raise StoreError(f"{path}: expected a JSON object, got a {type(doc).__name__}; "
                         "use --force to start over")
    return doc


def remove_strays(out: Path) -> int:
    """Delete temporary files a killed writer left behind; return how many."""
    strays = [p for p in out.rglob(".tmp-*") if p.is_file()]
    for p in strays:
        with cannot_write(p):
            p.unlink(missing_ok=True)
    return len(strays)


def clear(out: Path) -> None:
    """Remove what a sweep owns in ``out`` (for ``--force``); other files stay."""
    for name in OWNED:
        p = out / name
        with cannot_write(p):
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()


def foreign_entries(out: Path) -> list[str]:
    """Entries of ``out`` that a sweep would not have written."""
    return sorted(p.name for p in out.iterdir() if p.name not in (*OWNED, LOCK))


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``out``'s lock; raise :class:`StoreError` if another sweep holds it.

    The kernel releases a flock when its holder dies, even by SIGKILL.
    """
    with cannot_write(out / LOCK):
        fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"{out}: another sweep is running into this directory") from None
        yield
    finally:
        os.close(fd)
