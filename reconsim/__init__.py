"""reconsim: a benchmark and parameter-sweep harness for reconciliation loops."""

from reconsim.params import CONTROLLERS, METRIC_NAMES, METRICS, PARAM_NAMES, Cell
from reconsim.reference import run_reference
from reconsim.simulate import run_cell, simulate

__all__ = [
    "CONTROLLERS",
    "METRICS",
    "METRIC_NAMES",
    "PARAM_NAMES",
    "Cell",
    "run_cell",
    "run_reference",
    "simulate",
]
