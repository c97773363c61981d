"""reconsim: a benchmark and parameter-sweep harness for reconciliation loops.

Importing reconsim changes nothing in the process: its names below are imported when
first used (so ``import reconsim`` brings in neither polars nor numba), and settings a
process takes as it starts are made where reconsim starts one (:mod:`reconsim.process`).
The report (:mod:`reconsim.report`) is not among them: it brings Altair and vl-convert,
which simulating and sweeping do not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconsim.model.metrics import METRIC_NAMES, METRICS
    from reconsim.model.params import CONTROLLERS, PARAM_NAMES, Cell
    from reconsim.model.reference import run_reference
    from reconsim.model.simulate import run_cell, simulate
    from reconsim.model.trace import trace, trace_cell
    from reconsim.sweep.runner import SweepResult, run_sweep, sweep_cell
    from reconsim.sweep.spec import Spec, SpecError, load_spec, parse_spec
    from reconsim.sweep.store import scan

#: Where each of reconsim's names lives: imported from there when first used.
_HOMES = {
    **dict.fromkeys(("CONTROLLERS", "PARAM_NAMES", "Cell"), "reconsim.model.params"),
    **dict.fromkeys(("METRICS", "METRIC_NAMES"), "reconsim.model.metrics"),
    "run_reference": "reconsim.model.reference",
    "run_cell": "reconsim.model.simulate",
    "simulate": "reconsim.model.simulate",
    "trace": "reconsim.model.trace",
    "trace_cell": "reconsim.model.trace",
    "SweepResult": "reconsim.sweep.runner",
    "run_sweep": "reconsim.sweep.runner",
    "sweep_cell": "reconsim.sweep.runner",
    **dict.fromkeys(("Spec", "SpecError", "load_spec", "parse_spec"), "reconsim.sweep.spec"),
    "scan": "reconsim.sweep.store",
}

__all__ = [
    "CONTROLLERS",
    "METRICS",
    "METRIC_NAMES",
    "PARAM_NAMES",
    "Cell",
    "Spec",
    "SpecError",
    "SweepResult",
    "load_spec",
    "parse_spec",
    "run_cell",
    "run_reference",
    "run_sweep",
    "scan",
    "simulate",
    "sweep_cell",
    "trace",
    "trace_cell",
]


def __getattr__(name: str) -> Any:
    """One of reconsim's names, imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'reconsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
