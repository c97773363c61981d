"""The fast kernels, compiled with numba: :mod:`.count` for the seed's world (copies
counted, not listed), :mod:`.world` for the richer world (every copy tracked), :mod:`.events`
for controllers that sync on events (the world in milliseconds); each compiled for a
controller by :mod:`.specialise`, on the world's rules that :mod:`.rules` compiles from
:mod:`reconsim.model.rules`."""
