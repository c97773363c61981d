"""reconsim: a benchmark and parameter-sweep harness for reconciliation loops.

The report (:mod:`reconsim.report`) is not imported here: it brings Altair and
vl-convert, which simulating and sweeping do not need.
"""

from reconsim.model.params import CONTROLLERS, METRIC_NAMES, METRICS, PARAM_NAMES, Cell
from reconsim.model.reference import run_reference
from reconsim.model.simulate import run_cell, simulate
from reconsim.model.trace import trace
from reconsim.sweep.runner import SweepResult, run_sweep
from reconsim.sweep.spec import Spec, SpecError, load_spec, parse_spec
from reconsim.sweep.store import scan

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
    "trace",
]
