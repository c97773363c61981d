"""ACME's reconciliation controllers for reconsim.

Registered under the entry-point group ``reconsim.controllers`` (see pyproject.toml), so a
spec or a flag names them by their short name once this package is installed:
``reconsim run --controller patient --patience 5``.
"""

from acme_controllers.patient import PATIENT

__all__ = ["PATIENT"]
