"""Time and size of the HTML report for ``sweeps/million.toml``'s table (1,117,200 cells).

The table is the sweep's own output: the spec run by :func:`reconsim.sweep.runner.run_sweep`
into a temporary directory. ``RECONSIM_BENCH_QUICK=1`` runs the same grid with
desired = 1 only (159,600 cells). The issue's goal: at most 15 s and 5 MB; the size is
asserted (it is deterministic), the time reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.conftest import QUICK
from reconsim.report import build_report
from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import load_spec

MILLION = Path(__file__).resolve().parent.parent / "sweeps" / "million.toml"

#: The issue's budget for a million-cell report.
MAX_SECONDS = 15.0
MAX_HTML_BYTES = 5_000_000


@pytest.fixture(scope="module")
def million_cell_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("million")
    spec_path = MILLION
    if QUICK:
        text = MILLION.read_text(encoding="utf-8").replace(
            "desired = [1, 2, 3, 4, 6, 8, 12]", "desired = 1").replace(
            'name = "million"', 'name = "million-quick"')
        spec_path = folder / "million-quick.toml"
        spec_path.write_text(text, encoding="utf-8")
    out = folder / "sweep"
    run_sweep(load_spec(spec_path), out, jobs=2, progress=False)
    return out


@pytest.mark.benchmark(group="report")
def test_report_million_cells(benchmark, million_cell_sweep: Path) -> None:  # type: ignore[no-untyped-def]
    report = benchmark.pedantic(build_report, args=(million_cell_sweep,), rounds=3,
                                warmup_rounds=0, iterations=1)
    cells = report.data["sweep"]["cells"]
    seconds = benchmark.stats.stats.max
    html_bytes = report.html.stat().st_size
    figure_bytes = sum(p.stat().st_size for p in report.figures)
    law, boundary = report.data["law"], report.data["boundary"]
    benchmark.extra_info.update(
        cells=cells, seconds_max=round(seconds, 2),
        seconds_median=round(benchmark.stats.stats.median, 2), html_bytes=html_bytes,
        summary_bytes=report.summary.stat().st_size, figure_bytes=figure_bytes,
        law_cells=law["cells"], law_mismatches=law["mismatches"],
        boundary={k: boundary[k] for k in ("above_zero", "above_positive", "below_zero",
                                           "below_positive")})
    print(f"\nreport of {cells:,} cells: {benchmark.stats.stats.median:.2f} s median, "
          f"{seconds:.2f} s max; report.html {html_bytes / 1e6:.2f} MB, "
          f"figures {figure_bytes / 1e6:.2f} MB, "
          f"summary.json {report.summary.stat().st_size / 1e3:.0f} kB "
          f"(budget: {MAX_SECONDS:.0f} s, {MAX_HTML_BYTES / 1e6:.0f} MB)")
    declared = json.loads((million_cell_sweep / "sweep.json").read_text(encoding="utf-8"))
    assert cells == declared["cells"]
    # Size is deterministic, so it is asserted; time is reported, never asserted (a busy
    # machine must not fail the run), against MAX_SECONDS in the printed line.
    assert html_bytes <= MAX_HTML_BYTES
