"""reconsim: a benchmark and parameter-sweep harness for reconciliation loops.

The report (:mod:`reconsim.report`) is not imported here: it brings Altair and
vl-convert, which simulating and sweeping do not need.
"""

# ruff: noqa: E402 (the allocator's setting must precede the first import of polars)
import os

#: polars allocates through jemalloc and configures it on import: pages freed are marked
#: reusable after 0.5 s (``MADV_FREE``) and returned after another 1 s. Marked pages still
#: count in the process's resident memory until the kernel takes them, and a report's
#: queries each take and free hundreds of MB in turn: at 10^8 cells they raised its peak
#: from about 1,700 to about 1,900 MiB. With this setting, added after polars' own, they
#: are returned as soon as they are marked (no change in time was measurable). It takes
#: effect only where reconsim is imported before polars (as by the ``reconsim`` command),
#: and never over a setting of the user's own.
JEMALLOC_CONF = "muzzy_decay_ms:0"
os.environ.setdefault("_RJEM_MALLOC_CONF", JEMALLOC_CONF)

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
