"""The ``reconsim`` command line. Flags of ``reconsim run`` derive from :class:`reconsim.Cell`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from reconsim.params import (
    CONTROLLERS,
    DEFAULTS,
    FAULT_KINDS,
    METRICS,
    PARAMS,
    UNLIMITED,
    Deaths,
    Faults,
    Windows,
)


class UsageError(Exception):
    """Bad input from the command line or a file it names: reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def parse_deaths(text: str) -> Deaths:
    """Parse ``AT:COUNT[,AT:COUNT...]``; an empty string or ``none`` is no deaths.

    >>> parse_deaths("300:2,600:1")
    ((300, 2), (600, 1))
    """
    if text.strip().lower() in ("", "none"):
        return ()
    events = []
    for part in text.split(","):
        at, sep, count = part.strip().partition(":")
        if not sep or not at.strip().isdigit() or not count.strip().isdigit():
            raise argparse.ArgumentTypeError(
                f"expected AT:COUNT with non-negative integers, got {part.strip()!r}"
            )
        events.append((int(at), int(count)))
    return tuple(events)


def parse_times(text: str) -> tuple[int, ...]:
    """Parse ``T[,T...]`` seconds; an empty string or ``none`` is no times.

    >>> parse_times("310,620")
    (310, 620)
    """
    if text.strip().lower() in ("", "none"):
        return ()
    parts = [p.strip() for p in text.split(",")]
    bad = [p for p in parts if not p.isdigit()]
    if bad:
        raise argparse.ArgumentTypeError(f"expected non-negative integer seconds, got {bad[0]!r}")
    return tuple(int(p) for p in parts)


def _records(text: str, shape: str, parts: int) -> list[list[str]]:
    """Split ``A:B[:C],...`` records; an empty string or ``none`` is no records."""
    if text.strip().lower() in ("", "none"):
        return []
    out = []
    for part in text.split(","):
        fields = [f.strip() for f in part.strip().split(":")]
        if len(fields) != parts or not all(f.isdigit() for f in fields[:2]) or (
                parts == 3 and shape.endswith("EXTRA") and not fields[2].isdigit()):
            raise argparse.ArgumentTypeError(f"expected {shape}, got {part.strip()!r}")
        out.append(fields)
    return out


def parse_windows(text: str) -> Windows:
    """Parse a lag schedule ``FROM:TO:EXTRA[,...]``; an empty string or ``none`` is none.

    >>> parse_windows("100:200:30,400:500:10")
    ((100, 200, 30), (400, 500, 10))
    """
    return tuple((int(a), int(b), int(c))
                 for a, b, c in _records(text, "FROM:TO:EXTRA with non-negative integers", 3))


def parse_faults(text: str) -> Faults:
    """Parse a create-fault schedule ``AT:COUNT:KIND[,...]`` (KIND fail or lost).

    >>> parse_faults("0:3:lost,60:1:fail")
    ((0, 3, 'lost'), (60, 1, 'fail'))
    """
    events = _records(text, "AT:COUNT:KIND (non-negative integers; fail or lost)", 3)
    for _, _, kind in events:
        if kind not in FAULT_KINDS:
            raise argparse.ArgumentTypeError(
                f"fault kind must be one of {', '.join(FAULT_KINDS)}, got {kind!r}")
    return tuple((int(a), int(c), k) for a, c, k in events)


#: Parsers of the flags whose values are lists of records: repeat the flag or use commas.
_RECORD_FLAGS = {"deaths": (parse_deaths, "AT:COUNT", "'none' for no deaths"),
                 "windows": (parse_windows, "FROM:TO:EXTRA", "'none' for no lag"),
                 "faults": (parse_faults, "AT:COUNT:KIND", "'none' for no faults")}


def _shown(kind: str, default: Any) -> str:
    return ",".join(":".join(str(v) for v in record) for record in default) or "none"


def parse_cap(text: str) -> int | None:
    """Parse a cap: a positive integer, or ``unlimited``."""
    if text.strip().lower() == UNLIMITED:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or {UNLIMITED!r}, "
                                         f"got {text!r}")
    return int(text)


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="simulate one cell and print its metrics",
                       description="Simulate one cell and print its metrics.")
    for f in PARAMS:
        meta = f.metadata
        flag = f"--{f.name}"
        if meta["kind"] == "int":
            p.add_argument(flag, type=int, default=f.default, metavar="N",
                           help=f"{meta['help']} (default {f.default})")
        elif meta["kind"] == "choice":
            p.add_argument(flag, choices=meta["choices"], default=f.default,
                           help=f"{meta['help']} (default {f.default})")
        elif meta["kind"] in ("gain", "rate"):
            p.add_argument(flag, type=float, default=f.default, metavar="X",
                           help=f"{meta['help']} (default {f.default})")
        elif meta["kind"] == "bool":
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default,
                           help=f"{meta['help']} (default off)")
        elif meta["kind"] == "cap":
            p.add_argument(flag, type=parse_cap, default=f.default, metavar="N",
                           help=f"{meta['help']} (default {UNLIMITED})")
        elif meta["kind"] == "times":
            p.add_argument(flag, type=parse_times, action="extend", metavar="T", nargs="*",
                           help=f"{meta['help']}; repeat or comma-separate (default none)")
        else:
            parse, metavar, none = _RECORD_FLAGS[meta["kind"]]
            p.add_argument(flag, type=parse, action="extend", metavar=metavar, nargs="*",
                           help=f"{meta['help']}; repeat or comma-separate, {none} "
                           f"(default {_shown(meta['kind'], DEFAULTS[f.name])})")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> None:
    from reconsim.simulate import run_cell

    params = {f.name: getattr(args, f.name) for f in PARAMS}
    # argparse's "extend" yields a list of parsed lists (or None when the flag is absent)
    for f in PARAMS:
        if f.metadata["kind"] in ("deaths", "times", "windows", "faults"):
            given = params[f.name]
            params[f.name] = (DEFAULTS[f.name] if given is None
                              else tuple(e for part in given for e in part))
    try:
        metrics = run_cell(**params)
    except ValueError as exc:
        raise UsageError(f"reconsim run: {exc}") from None
    if args.json:
        print(json.dumps(metrics))
        return
    width = max(len(m.name) for m in METRICS)
    for m in METRICS:
        value = metrics[m.name]
        shown = "null" if value is None else f"{value:.4f}" if m.float else str(value)
        print(f"{m.name:<{width}}  {shown:>10}  {m.help}")


def _add_seed(sub: Any) -> None:
    p = sub.add_parser("seed", help="print seed 001's tables, computed by the model",
                       description="Print seed 001's three tables, computed by the model.")
    p.set_defaults(handler=_seed)


def _seed(args: argparse.Namespace) -> None:
    from reconsim import seed001

    print(seed001.render(seed001.compute()))


def _add_sweep(sub: Any) -> None:
    from reconsim.sweep import BACKENDS

    p = sub.add_parser(
        "sweep", help="run a spec's grid into a Parquet table (resumable)",
        description="Run a spec's grid in parallel into DIR/data/*.parquet. Run the same "
        "command again after an interruption to compute only the missing chunks.")
    p.add_argument("spec", metavar="SPEC", help="the sweep spec, a TOML file")
    p.add_argument("--out", metavar="DIR", help="output directory (default results/<name>)")
    p.add_argument("--jobs", type=int, default=-1, metavar="N",
                   help="parallel workers (default -1: all cores)")
    p.add_argument("--backend", choices=BACKENDS, default="loky",
                   help="joblib backend: loky (local processes, default), dask (a Dask "
                   "cluster; needs reconsim[dask]) or sequential (this process)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, e.g. tcp://host:8786 (with --backend dask; "
                   "without it a local cluster is started)")
    p.add_argument("--force", action="store_true",
                   help="start over when DIR holds another spec's results")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: only on a terminal)")
    p.add_argument("--report", action="store_true",
                   help="write DIR/report.html (and summary.json, figures/) after the sweep")
    p.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> None:
    from reconsim.spec import SpecError, load_spec
    from reconsim.store import StoreError
    from reconsim.sweep import SweepError, describe, run_sweep

    try:
        spec = load_spec(args.spec)
        result = run_sweep(spec, args.out, jobs=args.jobs, backend=args.backend,
                           scheduler=args.scheduler, force=args.force, progress=args.progress)
    except (SpecError, SweepError, StoreError) as exc:
        raise UsageError(f"reconsim sweep: {exc}") from None
    print(describe(result))
    if args.report:
        _write_report(result.out)


def _write_report(out: str | Path) -> None:
    from reconsim.report import ReportError, build_report

    started = time.perf_counter()
    try:
        report = build_report(out)
    except ReportError as exc:
        raise UsageError(f"reconsim report: {exc}") from None
    size = report.html.stat().st_size
    print(f"{report.html}: {size / 1e6:.1f} MB, {len(report.figures)} figure files, "
          f"{time.perf_counter() - started:.1f} s")


def _add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="write a sweep's HTML report",
                       description="Write DIR/report.html (self-contained, works offline), "
                       "DIR/summary.json and DIR/figures/ (PNG and SVG) from a sweep's table.")
    p.add_argument("dir", metavar="DIR", help="a sweep's output directory")
    p.set_defaults(handler=lambda args: _write_report(args.dir))


def _add_publish(sub: Any) -> None:
    p = sub.add_parser("publish", help="write an index page linking every sweep's report",
                       description="Write RESULTS/index.html linking every sweep's report with "
                       "its headline figures: a folder to publish as a static site.")
    p.add_argument("results", metavar="RESULTS", nargs="?", default="results",
                   help="the folder holding sweep directories (default results)")
    p.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> None:
    from reconsim.report import ReportError, publish

    try:
        print(publish(args.results))
    except ReportError as exc:
        raise UsageError(f"reconsim publish: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    """The ``reconsim`` parser with every subcommand."""
    parser = _Parser(prog="reconsim", description=(
        "Benchmark and parameter-sweep harness for reconciliation loops. Controllers: "
        + "; ".join(f"{k}: {v}" for k, v in CONTROLLERS.items())))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    _add_run(sub)
    _add_seed(sub)
    _add_sweep(sub)
    _add_report(sub)
    _add_publish(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (2 for bad input, printed in one line)."""
    try:
        args = build_parser().parse_args(argv)
        args.handler(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished chunks are kept; run the same command again to resume",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
