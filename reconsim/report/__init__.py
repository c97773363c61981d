"""The HTML result report of a sweep.

Not imported by :mod:`reconsim`: it brings Altair and vl-convert, which simulating and
sweeping do not need.
"""

from reconsim.report.build import Report, build_report
from reconsim.report.source import ReportError

__all__ = ["Report", "ReportError", "build_report"]
