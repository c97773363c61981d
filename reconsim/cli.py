"""The ``reconsim`` command line. Flags of ``reconsim run`` derive from :class:`reconsim.Cell`."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from reconsim.errors import ReconsimError
from reconsim.process import configure_allocator
from reconsim.words import counted

# Nothing that imports polars is imported here, at the top: ``main`` sets polars' allocator
# first (reconsim.process), and ``--help`` stays fast. Each subcommand imports what it needs.


class UsageError(ReconsimError):
    """Bad input on the command line: reported in one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _add_run(sub: Any) -> None:
    from reconsim.model.params import all_params

    p = sub.add_parser("run", help="simulate one cell and print its metrics",
                       description="Simulate one cell and print its metrics. A user's "
                       "controller is named by its import path (--controller "
                       "package.module:Name) or its entry point; its parameters are flags too.")
    for param in all_params():  # each kind says how its flag reads (a user's controller's too)
        p.add_argument(f"--{param.name}", **param.kind.argument(param.help, param.default))
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.add_argument("--check", action="store_true",
                   help="also run the cell on the reference model and refuse (exit 1) where "
                   "the kernels differ from it")
    p.add_argument("--plot", metavar="FILE", help="also draw the cell second by second into "
                   f"FILE ({', '.join(PLOT_FORMATS)}: a self-contained page, or an image)")
    p.add_argument("--window", metavar="FROM:TO", type=_window,
                   help="with --plot: draw only seconds FROM to TO (both included)")
    p.add_argument("--title", metavar="TEXT",
                   help="with --plot: the chart's title (default: the cell's controller, U, "
                   "G and B, and its id with --cell)")
    p.add_argument("--from", dest="sweep", metavar="DIR",
                   help="run a cell of the sweep in DIR again (with --cell; no cell "
                   "parameter flags: the cell is the table's)")
    p.add_argument("--cell", type=int, metavar="ID",
                   help="with --from: the cell's id, its number in the sweep's grid (the "
                   "report names it)")
    p.set_defaults(handler=_run)


def _window(text: str) -> tuple[int, int]:
    """``--window FROM:TO``: two seconds, FROM at most TO."""
    first, colon, last = text.partition(":")
    if not (colon and first.isdecimal() and last.isdecimal() and int(first) <= int(last)):
        raise argparse.ArgumentTypeError(
            f"expected FROM:TO, whole seconds with FROM <= TO, got {text!r}")
    return int(first), int(last)


#: What ``reconsim run --plot FILE`` writes, by FILE's suffix.
PLOT_FORMATS = (".html", ".png", ".svg")


def _run(args: argparse.Namespace) -> int:
    from reconsim.model.controllers import registry
    from reconsim.model.differential import ControllerMismatchError, compare_cell
    from reconsim.model.metrics import METRICS, RESPONSES
    from reconsim.model.simulate import simulate_cell

    if args.plot is not None and Path(args.plot).suffix.lower() not in PLOT_FORMATS:
        raise UsageError(f"--plot: {args.plot}: unknown suffix "
                         f"{Path(args.plot).suffix or '(none)'!r}; use .html, .png or .svg")
    for flag, value in (("--window", args.window), ("--title", args.title)):
        if value is not None and args.plot is None:
            raise UsageError(f"{flag} {value if flag == '--title' else args.given[flag]}: "
                             "draws with --plot FILE only")
    cell = _sweep_cell(args) if args.sweep is not None or args.cell is not None else None
    try:
        cell = _flags_cell(args) if cell is None else cell
        if args.check:
            compare_cell(cell)
        metrics = simulate_cell(cell)
    except ControllerMismatchError as exc:
        print(f"differs: {one_line(str(exc))}")
        return 1
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.window is not None and args.window[0] > cell.duration:
        raise UsageError(f"--window {args.given['--window']}: starts after the run's last "
                         f"second, {cell.duration}")
    if args.plot is not None:
        _plot(cell, args)
    if args.json:
        print(json.dumps(metrics))
        return 0
    # (a world's own metrics only for a cell of that world: elsewhere they are null)
    world = registry.get(cell.controller).world
    shown_metrics = [m for m in METRICS if m.world is None or m.world == world]
    width = max(len(m.name) for m in shown_metrics)
    for m in shown_metrics:
        value = metrics[m.name]
        shown = "null" if value is None else f"{value:.4f}" if m.float else str(value)
        print(f"{m.name:<{width}}  {shown:>10}  {m.help}")
    _print_responses(metrics[RESPONSES])
    return 0


def _print_responses(responses: list[dict[str, Any]]) -> None:
    """``reconsim run``'s table of the responses to the cell's events, one line each."""
    from reconsim.model.metrics import RESPONSE_FIELDS, RESPONSES

    if not responses:
        return
    print(f"\n{RESPONSES}: one line per event (a death event or a change of desired), "
          "over the seconds up to the next one")
    widths = {f: max(len(f), 10) for f in RESPONSE_FIELDS}
    print("  ".join(f"{f:>{w}}" for f, w in widths.items()))
    for response in responses:
        print("  ".join(f"{'null' if response[f] is None else response[f]:>{w}}"
                        for f, w in widths.items()))


def _flags_cell(args: argparse.Namespace) -> Any:
    """The cell ``reconsim run``'s parameter flags give (``ValueError`` naming a bad one)."""
    from reconsim.model.controllers import resolve
    from reconsim.model.params import PARAMS, all_params, applies, make_cell

    params = {p.name: p.kind.from_flag(getattr(args, p.name), p.default) for p in PARAMS}
    params["controller"] = controller = resolve(params["controller"]).name
    params |= {p.name: p.kind.from_flag(getattr(args, p.name), p.default)
               for p in all_params()[len(PARAMS):] if applies(p.name, controller)}
    return make_cell(**params)


def _sweep_cell(args: argparse.Namespace) -> Any:
    """The cell ``--from DIR --cell ID`` names: the table's parameters, whole. A cell
    parameter flag beside them is refused (the table's cell would not be the one run)."""
    from reconsim.model.params import all_params
    from reconsim.sweep.runner import sweep_cell
    from reconsim.sweep.store import StoreError

    if args.sweep is None or args.cell is None:
        given = "--cell" if args.sweep is None else "--from"
        raise UsageError(f"{given} {args.given[given]}: needs "
                         f"{'--from DIR' if args.sweep is None else '--cell ID'} too")
    names = {p.name for p in all_params()}
    flags = [f for f in args.given if f.removeprefix("--").removeprefix("no-") in names]
    if flags:
        raise UsageError(f"{flags[0]} {args.given[flags[0]]}: --from {args.sweep} runs its "
                         "cell with the table's parameters; drop the flag, or run the cell "
                         "by its flags without --from")
    try:
        return sweep_cell(args.sweep, args.cell)
    except StoreError as exc:
        raise UsageError(f"--from {args.sweep}: {exc}") from None


def _plot(cell: Any, args: argparse.Namespace) -> None:
    """Draw one cell's trace into ``--plot FILE`` (its suffix says how), written
    atomically: the seconds of ``--window``, titled ``--title``."""
    from reconsim.io import write_atomic
    from reconsim.report.plot import plot_cell
    from reconsim.report.sections.timelines import heading, run_command

    path = Path(args.plot)
    sweep = args.sweep is not None
    data = plot_cell(cell, path.suffix.lower(), args.window,
                     args.title or heading(cell, args.cell if sweep else None),
                     run_command(args.sweep, args.cell) if sweep else None)
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise UsageError(f"--plot: {exc}") from None


def _add_seed(sub: Any) -> None:
    p = sub.add_parser("seed", help="print seed 001's tables, computed by the model",
                       description="Print seed 001's three tables, computed by the model.")
    p.set_defaults(handler=_seed)


def _seed(args: argparse.Namespace) -> None:
    from reconsim.model.studies import seed001

    print(seed001.render(seed001.compute()))


def _add_sweep(sub: Any) -> None:
    from reconsim.sweep.runner import (
        BACKENDS,
        CHECK_CELLS,
        CONFIRM_CELLS,
        DEFAULT_MAX_CELLS,
        WRITERS,
    )

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
                   help="start over when DIR holds another spec's or another model's results")
    p.add_argument("--max-cells", type=int, default=DEFAULT_MAX_CELLS, metavar="N",
                   help=f"refuse a grid of more than N cells (default {DEFAULT_MAX_CELLS:.0e})")
    p.add_argument("--confirm-above", type=int, default=CONFIRM_CELLS, metavar="N",
                   help="before a grid of more than N cells, print its estimated time and "
                   "disk (from a short calibration run of its own cells, nothing written) "
                   f"and ask to continue (default {CONFIRM_CELLS:.0e}; 0: always)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="do not ask: run a grid larger than --confirm-above without a "
                   "question (needed without a terminal)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: only on a terminal)")
    p.add_argument("--report", action="store_true",
                   help="write DIR/report.html (and summary.json, figures/) after the sweep")
    p.add_argument("--check", action=argparse.BooleanOptionalAction, default=True,
                   help=f"first run {CHECK_CELLS} cells of each user's controller's grid on "
                   "the reference model and on the kernels, and refuse the sweep at a "
                   "difference, with the reconsim run command that shows it (default: "
                   "check; --no-check skips it)")
    p.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from reconsim.sweep.runner import check_size, describe, plan, run_sweep
    from reconsim.sweep.spec import load_spec

    spec = load_spec(args.spec)
    check_size(spec, args.max_cells)
    print(plan(spec), flush=True)
    if not _confirmed(spec, args):
        print("not started; nothing written")
        return 1
    result = run_sweep(spec, args.out, jobs=args.jobs, backend=args.backend,
                       scheduler=args.scheduler, force=args.force, progress=args.progress,
                       write_from=args.write_from, max_cells=args.max_cells,
                       check=args.check)
    print(describe(result))
    if args.report:
        _write_report(result.out)
    return 0


def _confirmed(spec: Any, args: argparse.Namespace) -> bool:
    """Whether a sweep may start: at once up to ``--confirm-above`` cells; above, after
    its estimate, with ``--yes`` or a yes on the terminal. Without a terminal and without
    ``--yes``, a :class:`UsageError` saying to pass it."""
    from reconsim.sweep.runner import CELLS_CEILING, estimate

    limit = args.confirm_above
    if not 0 <= limit <= CELLS_CEILING:
        raise UsageError(f"--confirm-above must be an integer in [0, {CELLS_CEILING}], "
                         f"got {limit}")
    if spec.n_cells <= limit:
        return True
    if args.jobs == 0 or args.jobs < -1:  # the sweep's own check, before the calibration
        return True
    line = estimate(spec, jobs=args.jobs).line(spec.name)
    if args.yes:
        print(line, flush=True)
        return True
    if not sys.stdin.isatty():
        raise UsageError(f"{line}; more than --confirm-above {limit:,} cells and no "
                         "terminal to ask on: pass --yes to run it")
    print(line, flush=True)
    try:
        answer = input("continue? [y/N] ")
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def _write_report(sweep_dir: str | Path, out: str | None = None) -> None:
    from reconsim.report import build_report

    started = time.perf_counter()
    report = build_report(sweep_dir, out=out)
    size = report.html.stat().st_size
    print(f"{report.html}: {size / 1e6:.1f} MB, {counted(len(report.figures), 'figure file')}, "
          f"{time.perf_counter() - started:.1f} s")


def _add_report(sub: Any) -> None:
    p = sub.add_parser("report", help="write a sweep's HTML report",
                       description="Write DIR/report.html (self-contained, works offline), "
                       "DIR/summary.json and DIR/figures/ (PNG and SVG) from a sweep's table.")
    p.add_argument("dir", metavar="DIR",
                   help="a sweep's output directory: a path, a file:// URL, or s3://, gs://, "
                   "az:// (needs fsspec and s3fs, gcsfs or adlfs for sweep.json)")
    p.add_argument("--out", metavar="FOLDER", default=None,
                   help="write the report's files into this local folder instead of DIR "
                   "(required when DIR is on object storage)")
    p.set_defaults(handler=lambda args: _write_report(args.dir, args.out))


def _add_publish(sub: Any) -> None:
    p = sub.add_parser("publish", help="write an index page linking every sweep's report",
                       description="Write RESULTS/index.html linking every sweep's report with "
                       "its headline figures, and RESULTS/bench/history.html, the controller "
                       "benchmarks over time from the runs saved under RESULTS/bench/ "
                       "(none without runs): a folder to publish as a static site.")
    p.add_argument("results", metavar="RESULTS", nargs="?", default="results",
                   help="the folder holding sweep directories (default results)")
    p.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> None:
    from reconsim.benchmarks.history_page import HISTORY_PAGE
    from reconsim.site import publish

    print(publish(args.results))
    if (history := Path(args.results) / HISTORY_PAGE).exists():
        print(history)


def _add_compare(sub: Any) -> None:
    p = sub.add_parser(
        "compare", help="compare two sweeps cell by cell",
        description="Compare two sweep directories cell by cell: cells matched on their "
        "parameters (or, with --match-on or --ignore, paired on some axes and compared as "
        "distributions over the others), per metric how many changed, the largest changes "
        "and where they lie, and the axes whose values differ between the sweeps. "
        "Writes A_vs_B.html (self-contained) and prints its path; a page of another "
        "comparison, or any other file, is not overwritten unless --force. Exit status 0 "
        "when every matched cell is identical on every metric, 1 when one differs, 2 on bad "
        "input.")
    p.add_argument("a", metavar="A", help="a sweep's output directory")
    p.add_argument("b", metavar="B", help="another sweep's output directory")
    p.add_argument("--tolerance", action="append", default=[], metavar="METRIC=X",
                   help="count a cell as changed only when |B - A| > X for METRIC "
                   "(repeatable; default 0: exact)")
    p.add_argument("--match-on", metavar="AXES",
                   help="pair cells on these axes only (comma-separated, e.g. G,B,controller); "
                   "the other axes are compared as distributions: per value of AXES, each "
                   "metric's median, p95, max and share of nulls over its cells in A and in B")
    p.add_argument("--ignore", metavar="AXES",
                   help="pair cells on every axis but these (comma-separated, e.g. U: two "
                   "sweeps that differ in U); with --match-on, its axes less these")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true",
                     help="print a markdown summary (for $GITHUB_STEP_SUMMARY)")
    out.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--html", metavar="FILE",
                   help="where to write the page (default ./A_vs_B.html from the names); "
                   "a page of the same two sweeps is overwritten")
    p.add_argument("--force", action="store_true",
                   help="overwrite FILE even when it holds another comparison, or is not a "
                   "comparison's page")
    p.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    from reconsim.compare.cells import (
        compare,
        output_name,
        parse_axes,
        parse_tolerances,
        render,
    )
    from reconsim.compare.page import render_html

    page = Path(args.html or output_name(args.a, args.b))
    if not args.force:
        _refuse_another_page(page, args.a, args.b)
    comparison = compare(args.a, args.b, parse_tolerances(args.tolerance),
                         match_on=parse_axes("--match-on", args.match_on),
                         ignore=parse_axes("--ignore", args.ignore))
    _write_text(str(page), render_html(comparison))
    if args.json:
        print(json.dumps(comparison.to_json(), indent=1, default=str))
    else:
        print(render(comparison, markdown=args.markdown), end="")
    # Last, and on stderr where stdout is a document for a program (JSON, a job summary).
    print(f"{page}: the comparison's page, {page.stat().st_size / 1e6:.1f} MB",
          file=sys.stderr if args.json or args.markdown else sys.stdout)
    return 0 if comparison.identical else 1


def _refuse_another_page(page: Path, a: str, b: str) -> None:
    """Refuse to write the comparison of sweeps ``a`` and ``b`` over ``page`` when it exists
    and holds anything but a comparison of the same two sweeps (:class:`UsageError`)."""
    from reconsim.compare.page import compared, sweeps

    if not page.exists():
        return
    held = compared(page)
    if held == sweeps(a, b):
        return  # the same comparison, run again (with other options, perhaps)
    what = ("is not a comparison's page" if held is None
            else f"holds the comparison of {held[0]} and {held[1]}")
    raise UsageError(f"{page}: {what}; --force overwrites it, --html FILE writes the page "
                     "elsewhere")


def _add_bench_compare(sub: Any) -> None:
    p = sub.add_parser(
        "bench-compare", help="compare two runs of the controller benchmarks",
        description="Compare two pytest-benchmark JSON files of the controller benchmarks: "
        "every quality figure base -> head (exact), time per cell as a ratio with its spread "
        "(advisory), and each variant's quality against its cost. Exit status 1 when a "
        "quality figure changed and --baseline does not record the head's figures.")
    p.add_argument("base", metavar="BASE.json", help="the base run (pytest-benchmark JSON)")
    p.add_argument("head", metavar="HEAD.json", help="the head run (pytest-benchmark JSON)")
    p.add_argument("--baseline", metavar="FILE",
                   help="the head's quality baseline (bench/quality-baseline.json): a changed "
                   "variant passes when this file records exactly its head figures")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true",
                     help="print markdown (for $GITHUB_STEP_SUMMARY) instead of text")
    out.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    p.set_defaults(handler=_bench_compare)


def _bench_compare(args: argparse.Namespace) -> int:
    from reconsim.benchmarks.compare import compare_runs, load_baseline, load_run, render

    base, head = load_run(args.base), load_run(args.head)
    baseline = load_baseline(args.baseline) if args.baseline else None
    comparison = compare_runs(base, head, baseline, args.baseline)
    if args.html:
        from reconsim.benchmarks.compare_page import render_html

        _write_text(args.html, render_html(comparison))
    if args.json:
        print(json.dumps(comparison.to_json(), indent=1))
    else:
        print(render(comparison, markdown=args.markdown), end="")
    return 1 if comparison.failed else 0


def _write_text(path: str, text: str) -> None:
    """Write a page atomically, or report in one line why it cannot be written
    (:class:`~reconsim.errors.WriteError`)."""
    from reconsim.io import write_atomic

    write_atomic(Path(path), text.encode("utf-8"))


def _add_check_controller(sub: Any) -> None:
    p = sub.add_parser(
        "check-controller", help="check a controller: reference model against the kernels",
        description="Run random cells of a controller over every world parameter on the "
        "reference model and on the fast kernels and compare every metric. Exit status 0 "
        "when they agree, 1 at the first difference (printed as the reconsim run command "
        "that reproduces it), 2 when the definition cannot be used.")
    p.add_argument("controller", metavar="CONTROLLER",
                   help="a built-in's name, package.module:Name, or an entry point's name")
    p.add_argument("--examples", type=int, default=200, metavar="N",
                   help="random cells to check (default 200)")
    p.set_defaults(handler=_check_controller)


def _check_controller(args: argparse.Namespace) -> int:
    from reconsim.model.controllers import resolve
    from reconsim.testing import ControllerMismatchError, check_controller

    if args.examples < 1:
        raise UsageError(f"--examples must be at least 1, got {args.examples}")
    controller = resolve(args.controller)
    start = time.perf_counter()
    try:
        checked = check_controller(controller, examples=args.examples)
    except ControllerMismatchError as exc:
        print(f"differs: {one_line(str(exc))}")
        return 1
    took = f"{time.perf_counter() - start:.1f} s"
    if not controller.compiled:
        print(f"{controller.name}: {counted(checked, 'cell ran', 'cells ran')} without error "
              "on the reference model "
              f"({took}); declared compiled=False, it has no kernel to compare with")
        return 0
    print(f"{controller.name}: {counted(checked, 'cell agrees', 'cells agree')} on every "
          "metric, reference model "
          f"and kernels ({took})")
    return 0


def _add_conformance(sub: Any) -> None:
    p = sub.add_parser(
        "conformance", help="compare reconsim with the real Kubernetes ReplicaSet and "
        "Deployment controllers",
        description="Run the 400 scenarios of a Kubernetes v1.23.13 data set that ships "
        "with reconsim and compare them with the real controllers. The ReplicaSet data "
        "set (the default) maps each scenario to a cell: ten metrics per scenario and five "
        "series second by second. The Deployment data set runs reconsim's Deployment "
        "reference model: every metric and every trace column, second by second. Prints "
        "the scenarios matched per metric, on all of them and second by second, and each "
        "remaining difference under its cause with an example and its first differing "
        "second. Exit status 0 once compared (whatever the figures), 2 on bad input.")
    p.add_argument("--dataset", metavar="NAME|DIR", default=None,
                   help="the data set: kubernetes-replicaset (default), "
                   "kubernetes-deployment, or a folder in a data set's original layout "
                   "(README.md, scenarios.json, metrics.csv, traces/ID.csv), its kind told "
                   "by its scenarios")
    p.add_argument("--controller", metavar="NAME", default=None,
                   help="the controller the ReplicaSet data set's scenarios run (a name, "
                   "package.module:Name or an entry point; default the best available: "
                   "replicaset if known, else expectations)")
    p.add_argument("--scenario", action="append", default=None, metavar="ID",
                   help="compare only this scenario (repeatable; default all)")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="a data set folder in the shipped layout (default the copy in the "
                   "package)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print the comparison as JSON instead of the table")
    out.add_argument("--out", metavar="FILE",
                     help="also write the comparison as JSON to FILE (atomically)")
    p.set_defaults(handler=_conformance)


def _conformance_dataset(args: argparse.Namespace) -> Any:
    """The data set ``--dataset`` and ``--data`` name (default the shipped ReplicaSet one)."""
    from reconsim.conformance.load import KINDS, REPLICASET, load, load_source

    if args.data is not None and args.dataset is not None:
        raise UsageError("--data and --dataset: give one of them")
    if args.data is not None:
        return load(Path(args.data))
    name = REPLICASET.name if args.dataset is None else args.dataset
    if name in KINDS:
        return load(KINDS[name].data_dir, KINDS[name])
    if not Path(name).is_dir():
        raise UsageError(f"--dataset {name!r}: neither {' nor '.join(KINDS)} nor a folder")
    return load_source(Path(name))


def _conformance(args: argparse.Namespace) -> None:
    from reconsim.conformance.compare import run
    from reconsim.conformance.load import DEPLOYMENT
    from reconsim.conformance.render import render
    from reconsim.model.controllers import resolve

    dataset = _conformance_dataset(args)
    if dataset.kind is DEPLOYMENT and args.controller is not None:
        raise UsageError("--controller: the Deployment data set runs reconsim's Deployment "
                         "reference model; --controller is for the ReplicaSet data set")
    controller = None if args.controller is None else resolve(args.controller).name
    known = {s.id for s in dataset.scenarios}
    for id in args.scenario or ():
        if id not in known:
            raise UsageError(f"--scenario: no scenario {id!r} in the data set")
    result = run(dataset, controller, args.scenario)
    text = json.dumps(result.to_json(), indent=1)
    if args.out is not None:
        _write_text(args.out, text + "\n")
    print(text if args.json else render(result), end="\n" if args.json else "")


def _named_controllers(argv: Sequence[str]) -> None:
    """Resolve the controller ``reconsim run --controller REF`` names before the parser is
    built, so that its parameters become flags (naming it imports its module)."""
    if not argv or argv[0] != "run":
        return
    from reconsim.model.controllers import resolve

    for i, arg in enumerate(argv):
        if arg == "--controller" and i + 1 < len(argv):
            resolve(argv[i + 1])
        elif arg.startswith("--controller="):
            resolve(arg.partition("=")[2])


def _given(argv: Sequence[str]) -> dict[str, str]:
    """The flags of ``argv`` and the text each was given (the last time; "" for a switch).

    >>> _given(["run", "--G", "20", "--window=0:60", "--slow_start"])
    {'--G': '20', '--window': '0:60', '--slow_start': ''}
    """
    out: dict[str, str] = {}
    for i, arg in enumerate(argv):
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            following = argv[i + 1] if i + 1 < len(argv) else ""
            out[flag] = value if eq else "" if following.startswith("--") else following
    return out


def build_parser() -> argparse.ArgumentParser:
    """The ``reconsim`` parser with every subcommand."""
    from reconsim.model.params import CONTROLLERS

    parser = _Parser(prog="reconsim", description=(
        "Benchmark and parameter-sweep harness for reconciliation loops. Controllers: "
        + "; ".join(f"{k}: {v}" for k, v in CONTROLLERS.items())))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    _add_run(sub)
    _add_check_controller(sub)
    _add_seed(sub)
    _add_sweep(sub)
    _add_report(sub)
    _add_publish(sub)
    _add_compare(sub)
    _add_bench_compare(sub)
    _add_conformance(sub)
    return parser


def one_line(text: str) -> str:
    r"""``text`` with every character that would break its line (or is not printable)
    escaped: an error is one line on stderr whatever the input it quotes.

    >>> print(one_line("grid." + chr(10) + ": unknown key"))
    grid.\n: unknown key
    """
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (2 for bad input, printed in one line).

    Every :class:`~reconsim.errors.ReconsimError` — a flag, a spec, a sweep directory, a
    report's table — ends here: ``error: reconsim COMMAND: MESSAGE`` on stderr, no traceback.
    """
    # Where the process starts, before anything imports polars (the subcommands import it
    # lazily): its allocator returns freed pages at once, which lowers the peak memory of
    # ``report`` and ``sweep`` (reconsim.process). Called from a program that has imported
    # polars already, it changes nothing.
    configure_allocator()
    with _notices():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    where = ""
    command = None
    try:
        given = list(sys.argv[1:] if argv is None else argv)
        where = "reconsim run: " if given[:1] == ["run"] else ""  # a named controller's refusal
        _named_controllers(given)
        where = ""  # the parser's own errors name the program and the command
        args, unknown = build_parser().parse_known_args(argv)
        args.given = _given(given)  # the flags as typed, for messages that quote them
        command = args.command
        where = f"reconsim {command}: "
        if unknown:  # argparse would name the program alone, not the command
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")
        status = args.handler(args)
    except ReconsimError as exc:
        print(f"error: {where}{one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Every file is written whole (a temporary file, then a rename): a sweep keeps its
        # finished chunks, and no command leaves a file half-written.
        print("interrupted: " + ("finished chunks are kept; run the same command again to "
                                 "resume" if command == "sweep" else
                                 "no file was left half-written"),
              file=sys.stderr)
        return 130
    return int(status or 0)


@contextlib.contextmanager
def _notices() -> Iterator[None]:
    """Print what the library logs (``logging.getLogger("reconsim...")``: a sweep that
    resumes, a kernel's compilation, ...) on stderr, one message a line, while the command
    runs, whether stderr is a terminal or not; the library itself prints nothing. A kernel's
    compilation (``reconsim.compile``: the first use on this machine takes tens of seconds)
    is one line a kernel and controller, a sweep's workers' too: a script or a CI job that
    waits on it sees why."""
    logger = logging.getLogger("reconsim")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # printed here, not again by a handler of the caller's
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
