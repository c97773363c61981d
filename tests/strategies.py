"""Hypothesis strategies for cells, sized so the reference model stays quick: those
:mod:`reconsim.testing` gives users, so that our controllers and theirs are checked alike."""

from reconsim.testing import cells, world_cells

__all__ = ["cells", "world_cells"]
