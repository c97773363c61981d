"""Sweeps: a TOML spec (:mod:`~reconsim.sweep.spec`) expands by index into cells
(:mod:`~reconsim.sweep.grid`), which the runner (:mod:`~reconsim.sweep.runner`) simulates
chunk by chunk in parallel and the store (:mod:`~reconsim.sweep.store`) keeps as Parquet.
"""
