"""The model's version: which results a cell's parameters give.

Bump :data:`MODEL_VERSION` in the commit that changes any cell's metrics (a rule of the
reference model and the kernels with it), not for a refactoring that leaves every figure
alone. A sweep directory records it with its table's columns, and a sweep refuses to
resume a directory whose chunks another model wrote (:mod:`reconsim.sweep.store`).
"""

from __future__ import annotations

from typing import Final

#: 1: the richer world (rng streams, lag and fault schedules, the world kernel).
#: 2: a sweep's random death schedules (``rate``) are drawn from the model's own streams
#: (rng.death_seconds: a trial a second, stream 5, exact in integers) instead of NumPy's
#: ``Generator.exponential``, whose numbers NumPy does not promise across versions and
#: which neither a spec's hash nor this version covered. Their deaths, and so the metrics
#: of every cell on such a schedule, change; a directory of version 1 is refused.
#: 3: a random death schedule's trials are drawn per cell, its seed in the counter
#: (rng.death_seconds: ``counter(seed, DEATHS, t)`` where version 2 had
#: ``counter(0, DEATHS, t)`` for every cell), so that a seed axis moves the deaths. Cells of
#: seed 0 keep their deaths and metrics; a cell of another seed on such a schedule has
#: other deaths, and a directory of version 2 is refused.
#: 4: desired may change during a run (the ``scale`` schedule) and each event's response is
#: a column (``responses``); ``unneeded`` subtracts the increases of desired. No cell
#: without a scale schedule changes a figure, but the table gains both columns, and a
#: directory of version 3 is refused rather than extended with chunks of another shape.
#: 5: the Deployment world (the ``deployment`` controller and its parameters ``max_surge``,
#: ``max_unavailable``, ``min_ready``, ``rollout``): the table gains their columns and the
#: rolling update's metrics (null for every other controller). No other cell changes a
#: figure; a directory of version 4 is refused rather than extended with chunks of
#: another shape.
MODEL_VERSION: Final = 5
