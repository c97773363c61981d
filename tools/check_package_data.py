"""Lint the packaging (``nox -s lint``): every file under a templates/ folder of the package,
and under a data/ folder's data sets (``reconsim/PACKAGE/data/SET/``), is package data in
pyproject.toml, so it ships with the package.

Exit 0 when each is; otherwise 1, each file left out named on stderr.
"""

from __future__ import annotations

import fnmatch
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]
    folders = sorted((ROOT / "reconsim").rglob("templates"))
    problems = []
    if len(folders) < 4:
        problems.append(f"only {len(folders)} templates folders under reconsim/ (at least 4)")
    files = 0
    data_sets = sorted(d for d in (ROOT / "reconsim").glob("**/data/*") if d.is_dir())
    for folder in (*folders, *data_sets):
        home = folder.parent if folder.name == "templates" else folder.parent.parent
        package = ".".join(home.relative_to(ROOT).parts)
        patterns = data.get(package, [])
        for f in sorted(folder.iterdir()):
            files += 1
            if not any(fnmatch.fnmatch(f.relative_to(home).as_posix(), p) for p in patterns):
                problems.append(f"{f.relative_to(ROOT)}: not package data of {package} "
                                "([tool.setuptools.package-data] in pyproject.toml)")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"package data: {files} files in {len(folders)} templates folders and "
          f"{len(data_sets)} data sets, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
