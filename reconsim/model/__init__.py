"""The model: one cell's parameters (:mod:`~reconsim.model.params`), the world's rules
written once (:mod:`~reconsim.model.rules`), the reference models that are its executable
spec (:mod:`~reconsim.model.reference`, :mod:`~reconsim.model.events`), the fast kernels
(:mod:`~reconsim.model.kernels`) and their polars front (:mod:`~reconsim.model.simulate`),
the check of one against the other (:mod:`~reconsim.model.differential`), the metrics and
the laws the sweeps check (:mod:`~reconsim.model.metrics`, :mod:`~reconsim.model.laws`) and
seed 001's published figures (:mod:`~reconsim.model.studies.seed001`).

Nothing here reads or writes files; polars appears only at the edge (``simulate``).
"""
