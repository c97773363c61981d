"""The documentation: the README stays short and points at the pages, the CLI page is the
real parser's, the metrics table the declared metrics, every page is in the site, and no
product file names an issue number."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

from reconsim.cli import build_parser
from reconsim.model.metrics import METRICS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(p.stem for p in DOCS.glob("*.md"))


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name."""
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def flags(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Every subcommand's option strings and positional names, as ``--help`` lists them."""
    return {name: sorted(s for a in p._actions for s in (a.option_strings or [a.metavar or a.dest]))
            for name, p in subcommands(parser).items()}


@pytest.fixture(scope="module")
def page_parser() -> argparse.ArgumentParser:
    """The parser the CLI page documents (docs/cli_parser.py)."""
    sys.path.insert(0, str(DOCS))
    try:
        import cli_parser  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS))
    parser: argparse.ArgumentParser = cli_parser.parser()
    return parser


def test_readme_is_short_and_keeps_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    assert "python3 -m pip install nox && nox -s tests     # the test suite" in lines
    assert any(line.startswith("python3 -m pip install nox && nox -s sweep") for line in lines)
    assert "nox -s docs" in README.read_text(encoding="utf-8")


def test_readme_links_every_page_and_every_link_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert links
    for link in links:
        assert (ROOT / link).is_file(), link
    assert {Path(link).stem for link in links} >= set(PAGES) - {"index"}


def test_every_page_is_in_the_site() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    (toctree,) = re.findall(r"```\{toctree\}\n(.*?)```", index, flags=re.S)
    listed = {line.strip() for line in toctree.splitlines()
              if line.strip() and not line.startswith(":")}
    assert listed == set(PAGES) - {"index"}


def test_links_between_pages_resolve() -> None:
    for page in DOCS.glob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", page.read_text("utf-8")):
            assert (DOCS / link).is_file(), (page.name, link)


def test_the_cli_page_is_generated_from_the_real_parser(
        page_parser: argparse.ArgumentParser) -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert re.search(r"```\{argparse\}\n:module: cli_parser\n:func: parser\n:prog: reconsim\n",
                     page)
    real = build_parser()
    assert flags(page_parser) == flags(real)
    # The page's copy differs only by the escapes reStructuredText needs.
    for name, sub in subcommands(page_parser).items():
        original = subcommands(real)[name]
        assert re.sub(r"\\(.)", r"\1", sub.description or "") == (original.description or "")
        for mine, theirs in zip(sub._actions, original._actions, strict=True):
            assert re.sub(r"\\(.)", r"\1", mine.help or "") == (theirs.help or "")


def test_the_cli_page_names_every_subcommand() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in subcommands(build_parser()):
        assert f"reconsim {name}" in page, name


def test_the_model_page_tables_every_metric_as_declared() -> None:
    page = (DOCS / "model.md").read_text(encoding="utf-8")
    section = page.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+?) \| (.+) \|$", section, flags=re.M)
    assert rows == [(m.name, m.type, m.doc) for m in METRICS]


def test_no_product_file_names_an_issue_number() -> None:
    files = [README, *DOCS.glob("*.md"), *DOCS.glob("*.py"),
             *(p for folder in ("reconsim", "bench", "tests", "examples", "sweeps")
               for p in (ROOT / folder).rglob("*")
               if p.is_file() and p.suffix in {".py", ".html", ".css", ".js", ".toml", ".md"})]
    # The word and a number after it, joined by a space, a dash, a "#" or a line break.
    found = [(p.relative_to(ROOT), m.group(0)) for p in files
             for m in re.finditer(r"\bissue[\s#-]*\d+", p.read_text(encoding="utf-8"), re.I)]
    assert found == []
