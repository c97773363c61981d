"""The kernels against the reference model, cell by cell: the check that a controller's
compiled code decides as its Python does.

:func:`compare_cell` runs one cell both ways and names the first difference as the
``reconsim run`` command that reproduces it. :func:`reconsim.testing.check_controller` runs
it on random cells (Hypothesis); a sweep runs it first on a few cells drawn from its own
grid for each user's controller it names (:func:`check_cells`), and ``reconsim run
--check`` on the cell it runs — a controller that numba compiles to other decisions than
Python takes (``str`` of a dictionary, say) is refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from reconsim.errors import ReconsimError
from reconsim.model.controllers import RunawayError
from reconsim.model.metrics import METRIC_NAMES, RESPONSES
from reconsim.model.params import Cell, cell_text
from reconsim.model.reference import run_reference
from reconsim.model.simulate import cells_frame, simulate


class ControllerMismatchError(ReconsimError, AssertionError):
    """The fast kernels and the reference model differ on a cell."""


def _metrics_or_refusal(run: Callable[[], dict[str, Any]]) -> dict[str, Any] | str:
    try:
        return run()
    except RunawayError as refused:
        return refused.reason


def compare_cell(cell: Cell) -> None:
    """Raise :class:`ControllerMismatchError` when the kernels and the reference model
    differ on ``cell`` (a metric, or the responses to its events), with the ``reconsim run``
    command that reproduces it. A cell both refuse with the same line (a
    :class:`~reconsim.controllers.RunawayError`) agrees; a controller's misbehaviour (a
    :class:`~reconsim.controllers.DecisionError`) is raised as it is."""
    fast = _metrics_or_refusal(lambda: simulate(cells_frame([cell])).row(0, named=True))
    slow = _metrics_or_refusal(lambda: run_reference(cell))
    if isinstance(fast, str) or isinstance(slow, str):
        if fast != slow:
            def said(got: dict[str, Any] | str) -> str:
                return f"refused: {got}" if isinstance(got, str) else "ran to the end"

            raise ControllerMismatchError(
                f"controller {cell.controller!r}: the kernels and the reference model differ "
                f"(kernel {said(fast)}; reference {said(slow)}): reconsim run "
                f"{cell_text(cell)}")
        return
    differ = [m for m in (*METRIC_NAMES, RESPONSES) if fast[m] != slow[m]]
    if differ:
        shown = ", ".join(f"{m} (kernel {fast[m]}, reference {slow[m]})" for m in differ)
        raise ControllerMismatchError(
            f"controller {cell.controller!r}: the kernels and the reference model differ on "
            f"{shown}: reconsim run {cell_text(cell)}")


def check_cells(cells: Iterable[Cell]) -> int:
    """:func:`compare_cell` on each of ``cells`` in turn, up to the first difference;
    return how many were compared."""
    n = 0
    for cell in cells:
        compare_cell(cell)
        n += 1
    return n
