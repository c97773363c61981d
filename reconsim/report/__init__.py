"""The HTML result report of a sweep, and the index page of every sweep's report.

Not imported by :mod:`reconsim`: it brings Altair and vl-convert, which simulating and
sweeping do not need.
"""

from reconsim.report.build import Report, build_report, publish
from reconsim.report.source import ReportError

__all__ = ["Report", "ReportError", "build_report", "publish"]
