"""The model: one cell's parameters (:mod:`~reconsim.model.params`), the reference model
that is its executable spec (:mod:`~reconsim.model.reference`), the fast kernel
(:mod:`~reconsim.model.kernels.count`) and its polars front (:mod:`~reconsim.model.simulate`),
the laws the sweeps check (:mod:`~reconsim.model.laws`) and seed 001's published
figures (:mod:`~reconsim.model.studies.seed001`).

Nothing here reads or writes files; polars appears only at the edge (``simulate``).
"""
