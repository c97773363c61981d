"""The model's version: which results a cell's parameters give.

Bump :data:`MODEL_VERSION` in the commit that changes any cell's metrics (a rule of the
reference model and the kernels with it), not for a refactoring that leaves every figure
alone. A sweep directory records it with its table's columns, and a sweep refuses to
resume a directory whose chunks another model wrote (:mod:`reconsim.sweep.store`).
"""

from __future__ import annotations

from typing import Final

#: 1: the richer world (rng streams, lag and fault schedules, the world kernel).
MODEL_VERSION: Final = 1
