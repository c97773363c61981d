"""A claim checked cell by cell: its counts and verdict, where its counterexamples lie
against a polars recount, and its words (``templates/claims.html``)."""

from __future__ import annotations

import html
import re

import polars as pl
import pytest
from markupsafe import Markup

from reconsim.report.blocks import macro
from reconsim.report.claims import Check, Claim, Spread, locate, sentence
from reconsim.report.section import to_json


def text(fragment: str) -> str:
    """An HTML fragment as its reader sees it: tags dropped, entities read, spaces one."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def test_a_claim_counts_its_cells_and_gives_its_verdict() -> None:
    where = ({"axis": "G", "values": []},)
    failing = Claim.of("c", "cells", 10, 3, by=Spread("x", 1, 2), where=where,
                       examples=({"G": 1},))
    assert (failing.cells, failing.holds, failing.counterexamples, failing.verdict,
            failing.box) == (10, 7, 3, "fails", "fails")
    holding = Claim.of("c", "cells", 10, 0, by=Spread("x", None, None), where=where,
                       examples=({"G": 1},))
    assert (holding.holds, holding.verdict, holding.box) == (10, "holds", "holds")
    # Without a counterexample there is nothing to locate, list or measure.
    assert (holding.by, holding.where, holding.examples) == (None, (), ())
    untested = Claim.of("c", "cells", 0, 0)
    assert (untested.verdict, untested.box) == ("untested", "none")


def test_summary_json_holds_a_claim_field_by_field() -> None:
    assert to_json(Claim.of("c", "cells", 4, 0)) == {
        "claim": "c", "scope": "cells", "cells": 4, "holds": 4, "counterexamples": 0,
        "verdict": "holds", "where": [], "examples": []}
    # How far the counterexamples miss, only where the section measures it.
    assert to_json(Claim.of("c", "cells", 4, 1, by=Spread("d", -1, 2)))["by"] == {
        "figure": "d", "min": -1, "max": 2}


WHERE = ({"axis": "G", "distinct": 1, "distinct_in_population": 2, "min": 40, "max": 40,
          "truncated": False, "values": [{"value": 40, "cells": 1, "of": 2}]},)


@pytest.mark.parametrize(("claim", "words"), [
    (Claim.of("U < G + B implies overshoot", "ledger cells with U < G + B", 1200, 0),
     "U < G + B implies overshoot: holds on all 1,200 ledger cells with U < G + B."),
    (Claim.of("U < G + B implies overshoot", "ledger cells with U < G + B", 0, 0),
     "U < G + B implies overshoot: not tested, for this sweep has no ledger cells with "
     "U < G + B."),
    (Claim.of("The law", "ledger cells", 5, 1, by=Spread("measured minus law", 6, 6),
              where=WHERE),
     "The law: fails on 1 of the 5 ledger cells (20.0%), measured minus law 6 on every one; "
     "they lie at G = 40."),
    (Claim.of("The law", "ledger cells", 5, 2, by=Spread("measured minus law", -3, 6)),
     "The law: fails on 2 of the 5 ledger cells (40.0%), measured minus law from -3 to 6."),
    (Claim.of("The law", "ledger cells with no delay", 1920, 1920),
     "The law: fails on every one of the 1,920 ledger cells with no delay."),
])
def test_one_template_words_every_verdict(claim: Claim, words: str) -> None:
    said = sentence(claim)
    assert text(said) == words
    assert "&lt;" in said or "<" not in claim.claim   # the claim's words are escaped


def test_the_counterexamples_are_listed_every_one_or_the_farthest_off() -> None:
    details = macro("claims.html", "details")
    rows = tuple({"G": g, "overshoot": 1} for g in (10, 20))
    assert text(details(Claim.of("c", "cells", 5, 0))) == ""
    every = details(Claim.of("U < G + B implies overshoot", "cells", 5, 2, where=WHERE,
                             examples=rows))
    assert "Where “U < G + B implies overshoot” fails" in text(every)
    assert "value: counterexamples of all cells with that value" in text(every)
    assert "Every counterexample:" in text(every)
    assert every.count("<tr>") == 1 + 1 + 1 + 2   # the where table and the examples table
    some = details(Claim.of("c", "cells", 50, 30, where=WHERE, examples=rows))
    assert ("2 of the 30 counterexamples, the farthest off, one per G, U, B and desired:"
            in text(some))


def test_locate_finds_the_counterexamples_as_polars_counts_them() -> None:
    frame = pl.DataFrame({"G": [0, 0, 10, 10, 20, 20, 30], "U": [5, 15, 5, 15, 5, 15, 5],
                          "B": [5] * 7, "desired": [6] * 7,
                          "overshoot": [0, 6, 0, 3, 9, 0, 1]})
    inside, fails = pl.col("G") > 0, pl.col("overshoot") > 0
    found = locate(frame.lazy(), {"c": Check(inside, fails, pl.col("overshoot"))},
                   ["G", "U"], ["overshoot"])
    where, listed = found["c"]
    failing = frame.filter(inside & fails)
    population = frame.filter(inside)
    for w in where:
        want = failing.group_by(w["axis"]).len().sort(w["axis"])
        assert [(v["value"], v["cells"]) for v in w["values"]] == want.rows()
        assert all(v["of"] == population.filter(pl.col(w["axis"]) == v["value"]).height
                   for v in w["values"])
    # Every counterexample, the farthest off first.
    assert [(e["G"], e["overshoot"]) for e in listed] == [(20, 9), (10, 3), (30, 1)]
    assert locate(frame.lazy(), {}, ["G"], ["overshoot"]) == {}


@pytest.mark.parametrize(("claim", "kind", "words"), [
    (Claim.of("The law", "cells", 4, 0), "holds",
     "The law: holds on all 4 cells. On every one, it is exact. 2 more unchecked."),
    (Claim.of("The law", "cells", 4, 1), "fails",
     "The law: fails on 1 of the 4 cells (25.0%). It holds on the other 3. 2 more unchecked."),
    (Claim.of("The law", "cells", 0, 0), "none",
     "The law: not tested, for this sweep has no cells. 2 more unchecked."),
])
def test_one_verdict_box_for_every_claim(claim: Claim, kind: str, words: str) -> None:
    box = macro("claims.html", "box")
    plain = box(claim, "it is exact", " 2 more unchecked.")
    assert plain.startswith(f'<div class="verdict {kind}"><p><strong>')
    assert plain.endswith("</p></div>")
    assert text(plain) == words
    # what the box holds below the verdict, where a section gives some (`{% call %}`)
    assert box(claim, "it is exact", caller=lambda: Markup("<p>more</p>")).endswith(
        "</p>\n<p>more</p></div>")


@pytest.mark.parametrize(("claim", "line"), [
    (Claim.of("c", "cells", 0, 0), '<a href="#s">Title</a>: none to check.'),
    (Claim.of("c", "cells", 4, 0),
     '<a href="#s">Title</a>: the law holds on all 4 steps it checks (1 not checked).'),
    (Claim.of("c", "cells", 4, 1), '<a href="#s">Title</a>: <strong>the law fails on 1 of 4 '
     "steps (25.0%)</strong> (1 not checked)."),
])
def test_one_glance_line_for_every_claim(claim: Claim, line: str) -> None:
    glance = macro("claims.html", "glance")
    assert glance(claim, "s", "Title", "none to check", "steps it checks", "the law ",
                  failing="steps", held=" (1 not checked)") == line
    if claim.verdict == "fails":
        assert glance(claim, "s", "Title", "", "steps", failed=": <b>").endswith(
            "(25.0%)</strong>: &lt;b&gt;.")
