"""Lint the page code (``nox -s lint``): no f-string in it writes HTML.

An f-string is text (escaped where it meets markup); HTML is written as Markup. A tag or an
entity in an f-string would be escaped into visible text, or, if wrapped in Markup, let its
values through unescaped. Exit 0 when no f-string's literal text holds a tag or an entity;
otherwise 1, each one named (``file:line``) on stderr.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reconsim" / "report"
#: The modules that write the pages' HTML.
MODULES = [ROOT / "reconsim" / "web" / "html.py", REPORT / "blocks.py", REPORT / "page.py",
           ROOT / "reconsim" / "site.py", *sorted((REPORT / "sections").glob("*.py"))]
HTML = re.compile(r"<[a-zA-Z/!]|&[a-zA-Z#0-9]+;")


def found_in(path: Path) -> list[str]:
    """``file:line`` of each f-string in ``path`` whose literal text holds HTML."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            literal = "".join(v.value for v in node.values
                              if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if HTML.search(literal):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def main() -> int:
    missing = [str(p.relative_to(ROOT)) for p in MODULES if not p.exists()]
    found = [f for path in MODULES if path.exists() for f in found_in(path)]
    for name in missing:
        print(f"{name}: no such module (update MODULES in {Path(__file__).name})",
              file=sys.stderr)
    for where in found:
        print(f"{where}: an f-string writes HTML; build it as Markup", file=sys.stderr)
    print(f"page code: {len(found)} f-strings writing HTML in {len(MODULES)} modules")
    return 1 if found or missing else 0


if __name__ == "__main__":
    sys.exit(main())
