"""The ``reconsim`` command line. Flags of ``reconsim run`` derive from :class:`reconsim.Cell`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from reconsim.errors import ReconsimError
from reconsim.params import CONTROLLERS, METRICS, PARAMS


class UsageError(ReconsimError):
    """Bad input on the command line: reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="simulate one cell and print its metrics",
                       description="Simulate one cell and print its metrics.")
    for param in PARAMS:  # each kind says how its flag reads
        p.add_argument(f"--{param.name}", **param.kind.argument(param.help, param.default))
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> None:
    from reconsim.simulate import run_cell

    params = {p.name: p.kind.from_flag(getattr(args, p.name), p.default) for p in PARAMS}
    try:
        metrics = run_cell(**params)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
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
    from reconsim.sweep import BACKENDS, WRITERS

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
    p.add_argument("--write-from", choices=WRITERS, default=None,
                   help="who writes the chunk files: workers (each its own; they must see "
                   "DIR) or parent (workers send rows back; for Dask workers without shared "
                   "storage). Default: parent with --backend dask, workers otherwise")
    p.add_argument("--force", action="store_true",
                   help="start over when DIR holds another spec's results")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: only on a terminal)")
    p.add_argument("--report", action="store_true",
                   help="write DIR/report.html (and summary.json, figures/) after the sweep")
    p.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> None:
    from reconsim.spec import load_spec
    from reconsim.sweep import describe, run_sweep

    spec = load_spec(args.spec)
    result = run_sweep(spec, args.out, jobs=args.jobs, backend=args.backend,
                       scheduler=args.scheduler, force=args.force, progress=args.progress,
                       write_from=args.write_from)
    print(describe(result))
    if args.report:
        _write_report(result.out)


def _write_report(out: str | Path) -> None:
    from reconsim.report import build_report

    started = time.perf_counter()
    report = build_report(out)
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
    from reconsim.report import publish

    print(publish(args.results))


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
    """Run the command line; return the exit status (2 for bad input, printed in one line).

    Every :class:`~reconsim.errors.ReconsimError` — a flag, a spec, a sweep directory, a
    report's table — ends here: ``error: reconsim COMMAND: MESSAGE`` on stderr, no traceback.
    """
    where = ""  # the parser's own errors name the program already
    try:
        args = build_parser().parse_args(argv)
        where = f"reconsim {args.command}: "
        args.handler(args)
    except ReconsimError as exc:
        print(f"error: {where}{exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished chunks are kept; run the same command again to resume",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
