"""The ``reconsim`` parser as the CLI page shows it (``cli.md``, sphinx-argparse).

sphinx-argparse reads every help text as reStructuredText, where the plain-text help of
``reconsim --help`` has markup characters: ``|diff|`` would be a substitution and
``DIR/data/*.parquet`` an unclosed emphasis. This copy of the real parser
(:func:`reconsim.cli.build_parser`) escapes them, so the page shows the same words as
``--help``; the command line itself is unchanged.
"""

from __future__ import annotations

import argparse
import re

from reconsim.cli import build_parser

_MARKUP = re.compile(r"([\\*|`_])")


def _escaped(text: str | None) -> str | None:
    return None if text is None else _MARKUP.sub(r"\\\1", text)


def _escape(parser: argparse.ArgumentParser) -> None:
    parser.description = _escaped(parser.description)
    for action in parser._actions:
        if action.help not in (None, argparse.SUPPRESS):
            action.help = _escaped(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = _escaped(choice.help)
            for sub in action.choices.values():
                _escape(sub)


def parser() -> argparse.ArgumentParser:
    """:func:`reconsim.cli.build_parser`, its help texts escaped for reStructuredText."""
    built = build_parser()
    _escape(built)
    return built
