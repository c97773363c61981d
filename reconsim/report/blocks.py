"""The report's text blocks: where cells lie, a slice's fixed values, example cells, in
words and as the rows of tables; and the sections' templates (``templates/``), which have
these blocks at hand, with the tables of ``templates/blocks.html`` and the page kit's
(:mod:`reconsim.web.html`), and which a section calls through :func:`macro`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any, Final, cast

import jinja2
from markupsafe import Markup

from reconsim.report.query import describe
from reconsim.web.html import TableCell, environment, num, plain, share
from reconsim.words import plural


def cells_text(n: int) -> str:
    """``n cells`` (``1 cell``), thousands separated."""
    return f"{n:,} cell" + ("" if n == 1 else "s")


def key_text(row: Mapping[str, Any], skip: Iterable[str], hide: Iterable[str] = ()) -> str:
    """A series' or cell's parameters in words (text); nulls (not applicable) and the keys
    in ``skip`` and ``hide`` left out."""
    left_out = {*skip, *hide}
    return ", ".join(f"{k} = {num(v)}" for k, v in row.items()
                     if k not in left_out and v is not None)


def fixed_text(fixed: Mapping[str, Any], hide: Iterable[str] = (),
               controller: str | None = None) -> str:
    """``axis = value`` pairs of a slice (text); axes in ``hide`` left out, and nulls of
    parameters that do not apply (see :func:`reconsim.report.query.describe`)."""
    hidden = set(hide)
    text = describe({a: v for a, v in fixed.items() if a not in hidden}, controller)
    return text or "the whole sweep"


def where_rows(where: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """One row per axis that varies among the population: the values the cells have, each
    as ``value: cells of all``."""
    rows = []
    for w in where:
        if w["distinct_in_population"] <= 1:
            continue
        if w["truncated"]:
            text = (f"{w['distinct']:,} distinct values from {plain(w['min'])} to "
                    f"{plain(w['max'])} (too many to list)")
        else:
            text = ", ".join(f"{plain(v['value'])}: {v['cells']:,} of {v['of']:,}"
                             for v in w["values"])
        rows.append((w["axis"], text))
    return rows


def where_sentence(where: Sequence[Mapping[str, Any]], skip: Sequence[str] = ()) -> str:
    """Where cells lie, in words (text): the range among them of each axis that varies in
    the population, with ``every value`` where they take all of the population's."""
    parts = []
    for w in where:
        if w["axis"] in skip or w["distinct_in_population"] <= 1:
            continue
        every = w["distinct"] == w["distinct_in_population"]
        if w["distinct"] == 1:
            text = f"{w['axis']} = {plain(w['min'])}"
        elif isinstance(w["min"], (int, float)) and not isinstance(w["min"], bool):
            text = f"{w['axis']} from {num(w['min'])} to {num(w['max'])}"
        elif w["values"]:
            text = f"{w['axis']} " + ", ".join(plain(v["value"]) for v in w["values"])
        else:
            text = f"{w['axis']}: {w['distinct']:,} values"
        if every and w["distinct"] > 1:
            text += " (every value)"
        parts.append(text)
    return "; ".join(parts)


def example_rows(examples: Sequence[Mapping[str, Any]], hide: Iterable[str] = ()
                 ) -> tuple[list[str], list[list[Any]]]:
    """Example cells in full, one row each, and the columns' headings; columns in ``hide``,
    and those null in every row (parameters that do not apply), left out."""
    if not examples:
        return [], []
    hidden = set(hide)
    head = [h for h in examples[0]
            if h not in hidden and any(e[h] is not None for e in examples)]
    return head, [[e[h] for h in head] for e in examples]


#: The tables of ``templates/blocks.html``, globals of the sections' templates.
TABLES: Final = ("where_table", "examples_table")


@cache
def _templates() -> jinja2.Environment:
    """The sections' templates: the page kit's environment (:func:`~reconsim.web.html.
    environment`: its table, folding and chart) with this module's blocks, the
    :data:`TABLES`, table cells, share and :func:`~reconsim.words.plural` at hand: an
    overlay with globals of its own, so that the kit's environment is left as it is."""
    env = environment("reconsim.report").overlay()
    env.globals = {**env.globals, "where_rows": where_rows, "where_sentence": where_sentence,
                   "example_rows": example_rows, "share": share, "TableCell": TableCell,
                   "plural": plural, "cells_text": cells_text, "key_text": key_text,
                   "fixed_text": fixed_text}
    blocks = env.get_template("blocks.html").module
    env.globals |= {name: getattr(blocks, name) for name in TABLES}
    return env


def macro(template: str, name: str) -> Callable[..., Markup]:
    """Macro ``name`` of ``template``, to call from Python: it returns Markup (a macro of an
    autoescaping environment does)."""
    return cast("Callable[..., Markup]", getattr(_templates().get_template(template).module,
                                                 name))
