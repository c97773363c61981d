"""Make the ReplicaSet data set's copy in the package from its original folder:
``python tools/replicaset_data.py [SOURCE]`` (default ``../shared/data/kubernetes-replicaset``
beside the repository) writes ``reconsim/conformance/data/kubernetes-replicaset/``:
the README, scenarios and metrics copied unchanged, and every trace in ``traces.parquet``.
Then checks that the copy equals the source; exit 1 if it does not.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "kubernetes-replicaset"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from reconsim.conformance.load import build_traces, source_differences

    source = Path(argv[0]) if argv else DEFAULT_SOURCE
    path = build_traces(source)
    problems = source_differences(source)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{path}: {path.stat().st_size / 1e3:.0f} kB, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
