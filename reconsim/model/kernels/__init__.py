"""The fast kernels, compiled with numba: :mod:`.count` for the seed's world (copies
counted, not listed), :mod:`.world` for the richer world (every copy tracked)."""
