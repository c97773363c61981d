"""The default sweep's ``summary.json`` against the golden copy committed before the report
was reorganised: every key the report writes must come out identical.

Regenerate (only after an intended change of the report's figures)::

    reconsim sweep sweeps/default.toml --out /tmp/d --report
    python -m tests.test_report_golden /tmp/d/summary.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from reconsim import load_spec, run_sweep
from reconsim.report import build_report
from tests.helpers.golden import differences

GOLDEN = Path(__file__).parent / "golden" / "default_summary.json"
SPEC = Path(__file__).parents[1] / "sweeps" / "default.toml"
#: Facts of one run, not of the table: when it ran, how fast, and which reconsim release
#: ran it (a version bump changes no figure).
RUN_FACTS = ("started", "finished", "cells_per_second", "version")


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without the facts that differ from run to run."""
    sweep = {k: v for k, v in summary["sweep"].items() if k not in RUN_FACTS}
    return summary | {"sweep": sweep}


def test_differences_finds_every_changed_key() -> None:
    want = {"a": 1, "b": [1, 2], "c": {"d": 1.0}}
    got = {"a": 2, "b": [1, 3], "c": {"d": 1}, "e": 0}
    assert sorted(differences(got, want)) == ["/a: 2 != 1", "/b[1]: 3 != 2",
                                              "/c/d: 1 != 1.0", "/e: unexpected"]


def test_default_sweep_summary_is_golden(tmp_path: Path) -> None:
    out = tmp_path / "default"
    run_sweep(load_spec(SPEC), out, jobs=2, progress=False)
    got = comparable(build_report(out).data)
    # Through JSON, as the file is written: tuples become lists, keys strings.
    got = json.loads(json.dumps(got, ensure_ascii=False, default=str))
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert differences(got, want) == []


if __name__ == "__main__":
    fresh = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    GOLDEN.write_text(json.dumps(comparable(fresh), indent=1, ensure_ascii=False) + "\n",
                      encoding="utf-8")
