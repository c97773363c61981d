"""The documentation: the README stays short and points at the pages, the CLI reference
lists every subcommand and flag and the pages write none the parser lacks, the
architecture page maps every module, the metrics table is the declared metrics, every
page is in the site, and no product file names an issue number."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

from reconsim.cli import build_parser
from reconsim.model.metrics import DERIVED, METRICS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(p.stem for p in DOCS.glob("*.md"))


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name."""
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _names(action: argparse.Action) -> list[str]:
    """An action's names as ``--help`` shows them: its option strings, or a positional's
    metavar (else its dest)."""
    return list(action.option_strings) or [str(action.metavar or action.dest)]


def parser_names(parser: argparse.ArgumentParser, *, helps: bool = True) -> dict[str, set[str]]:
    """Every name of the command (key ``""``) and of each subcommand: its flags and
    positionals, suppressed ones included; ``helps=False`` leaves out ``-h/--help``."""
    def names(p: argparse.ArgumentParser) -> set[str]:
        return {n for a in p._actions
                if not isinstance(a, argparse._SubParsersAction)
                and (helps or not isinstance(a, argparse._HelpAction)) for n in _names(a)}

    return {"": names(parser)} | {name: names(sub) for name, sub in subcommands(parser).items()}


def rendered(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """What the CLI reference lists, by subcommand, as sphinx-argparse renders ``parser``
    (its ``parse_parser``): every subcommand, and in each of its argument groups every action
    but the help and those whose help is ``argparse.SUPPRESS`` (which it leaves out)."""
    def shown(p: argparse.ArgumentParser) -> set[str]:
        return {n for group in p._action_groups for a in group._group_actions
                if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
                and argparse.SUPPRESS not in (a.help or "") for n in _names(a)}

    return {"": shown(parser)} | {name: shown(sub) for name, sub in subcommands(parser).items()}


#: A long flag, not part of a longer word (``--progress/--no-progress`` gives both).
FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")


def written_commands(page: str) -> list[str]:
    """The ``reconsim`` commands a page writes, outside the generated reference: each line
    of a code block that starts with ``reconsim`` (or ``$ reconsim``), with the indented
    lines that continue it, comments left out; and each inline code span that starts with
    ``reconsim``."""
    text = re.sub(r"```\{argparse\}.*?```", "", page, flags=re.S)
    lines: list[list[str]] = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        within = False
        for line in block.splitlines():
            code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].removeprefix("$ ")
            if code.startswith("reconsim "):
                lines.append([code])
            elif within and line[:1].isspace():
                lines[-1].append(code)
            within = code.startswith("reconsim ") or (within and line[:1].isspace())
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    return [" ".join(" ".join(parts).split()) for parts in lines] + [
        " ".join(span.split()) for span in re.findall(r"`(reconsim [^`]+)`", prose)]


def unknown_flags(page: str, parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(command, name) for each subcommand a page's ``reconsim`` command names that
    ``parser`` lacks, and each flag it uses that its subcommand lacks; and for each inline
    code span that starts with a flag (``--plot FILE``), a flag no subcommand has. A
    command naming a user's controller by import path (``--controller pkg.mod:NAME``) may
    use flags the parser lacks: that controller's parameters, flags once it is imported."""
    known = parser_names(parser)
    anywhere = set().union(*known.values())
    found = []
    for command in written_commands(page):
        words = command.split()
        sub = "" if len(words) < 2 or words[1].startswith("-") else words[1]
        if sub not in known and not sub.isupper():  # COMMAND: a placeholder for any
            found.append((command, sub))
            continue
        flags = known.get(sub, anywhere)
        users = re.search(r"--controller[ =]\S*:", command) is not None
        found += [(command, f) for f in FLAG.findall(command)
                  if f not in flags and not (users and f not in anywhere)]
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", page, flags=re.S | re.M)
    found += [(span, f) for span in re.findall(r"`(--[^`]+)`", prose)
              for f in FLAG.findall(span) if f not in anywhere]
    return found


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


def test_the_cli_reference_lists_every_subcommand_and_flag(
        page_parser: argparse.ArgumentParser) -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    (directive,) = re.findall(r"```\{argparse\}\n(.*?)```", page, flags=re.S)
    options = dict(re.findall(r"^:([\w-]+):[ \t]*(.*)$", directive, flags=re.M))
    assert (options.get("module"), options.get("func")) == ("cli_parser", "parser")
    assert not {"path", "nosubcommands"} & set(options)  # either leaves subcommands out
    real = build_parser()
    shown = rendered(page_parser)
    hidden = {name: {n for a in sub._actions if a.help == argparse.SUPPRESS for n in _names(a)}
              for name, sub in [("", real), *subcommands(real).items()]}
    in_examples = {(c.split()[1] if len(c.split()) > 1 else "", f)
                   for c in written_commands(page) for f in FLAG.findall(c)}
    missing = [(sub, name) for sub, names in parser_names(real, helps=False).items()
               for name in sorted(names)
               if name not in shown.get(sub, set())
               and not (name in hidden[sub] and (sub, name) in in_examples)]
    assert missing == []
    # The reference shows the same words as --help: its help texts differ only by the
    # escapes reStructuredText needs.
    for name, sub in subcommands(page_parser).items():
        original = subcommands(real)[name]
        assert re.sub(r"\\(.)", r"\1", sub.description or "") == (original.description or "")
        for mine, theirs in zip(sub._actions, original._actions, strict=True):
            assert re.sub(r"\\(.)", r"\1", mine.help or "") == (theirs.help or "")


def test_every_subcommand_and_flag_says_what_it_does() -> None:
    # The reference is generated from the parser: a flag or subcommand without a help text
    # would be listed there with nothing beside it.
    real = build_parser()
    (sub,) = (a for a in real._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {choice.dest: choice.help for choice in sub._choices_actions}
    undocumented = [(name, "(summary)") for name in subcommands(real)
                    if not (summaries.get(name) or "").strip()]
    undocumented += [(name, "(description)") for name, p in subcommands(real).items()
                     if not (p.description or "").strip()]
    undocumented += [(name, _names(a)[0]) for name, p in [("", real), *subcommands(real).items()]
                     for a in p._actions if not isinstance(a, argparse._SubParsersAction)
                     and not (a.help or "").strip()]
    assert undocumented == []


@pytest.mark.parametrize("page", [README, DOCS / "cli.md"], ids=lambda p: p.name)
def test_every_flag_a_page_writes_is_the_parser_s(page: Path) -> None:
    assert unknown_flags(page.read_text(encoding="utf-8"), build_parser()) == []


def test_the_cli_page_names_every_subcommand() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in subcommands(build_parser()):
        assert f"reconsim {name}" in page, name


def test_the_architecture_page_maps_every_module() -> None:
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"## Where things are\n.*?```text\n(.*?)```", page, flags=re.S)
    mapped = re.findall(r"^ +([\w/]+\.py) ", block, flags=re.M)
    package = ROOT / "reconsim"
    modules = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py"))
    assert sorted(mapped) == modules


def test_the_model_page_tables_every_metric_as_declared() -> None:
    page = (DOCS / "model.md").read_text(encoding="utf-8")
    section = page.split("\n## Metrics\n", 1)[1].split("\n### Derived figures\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+?) \| (.+) \|$", section, flags=re.M)
    assert rows == [(m.name, m.type, m.doc) for m in METRICS]


def test_the_model_page_tables_every_derived_figure_as_declared() -> None:
    page = (DOCS / "model.md").read_text(encoding="utf-8")
    section = page.split("\n### Derived figures\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `([^`]+)` \| (.+) \|$", section, flags=re.M)
    assert rows == [(name, d.formula, d.help) for name, d in DERIVED.items()]


def test_no_product_file_names_an_issue_number() -> None:
    files = [README, *DOCS.glob("*.md"), *DOCS.glob("*.py"),
             *(p for folder in ("reconsim", "bench", "tests", "examples", "sweeps")
               for p in (ROOT / folder).rglob("*")
               if p.is_file()
               and p.suffix in {".py", ".html", ".css", ".js", ".toml", ".md", ".json"})]
    # The word and a number after it, joined by a space, a dash, a "#" or a line break.
    found = [(p.relative_to(ROOT), m.group(0)) for p in files
             for m in re.finditer(r"\bissue[\s#-]*\d+", p.read_text(encoding="utf-8"), re.I)]
    assert found == []
