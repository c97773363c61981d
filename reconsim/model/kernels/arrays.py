"""The kernels' input arrays: one value per cell, or for a list parameter (a schedule) an
offsets array beside the values of every cell in turn."""

from __future__ import annotations

import numpy as np


def take_rows(arrays: dict[str, np.ndarray], rows: np.ndarray,
              names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The kernel arrays of ``rows`` only (all of them, or those ``names``): one value per
    row, or for a list parameter its offsets renumbered and the values of those rows."""
    names = tuple(arrays) if names is None else names
    taken: dict[str, np.ndarray] = {}
    for key in names:  # list parameters first: their value arrays are not one per row
        if not key.endswith("_offsets"):
            continue
        list_name, offsets = key.removesuffix("_offsets"), arrays[key]
        lengths = offsets[rows + 1] - offsets[rows]
        taken[key] = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        # each row's run of values, from its old offset
        where = np.repeat(offsets[rows] - taken[key][:-1], lengths) + np.arange(
            taken[key][-1], dtype=np.int64)
        for values in names:
            if values == list_name or (values.startswith(list_name + "_") and values != key):
                taken[values] = arrays[values][where]
    return {key: taken[key] if key in taken else arrays[key][rows] for key in names}
