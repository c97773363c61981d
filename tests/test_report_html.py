"""The HTML kit and the templates: a value is escaped exactly once unless it is markup we
built, whichever kind of data it comes from; summary.json keeps the values as they are.

That no f-string in the page code writes HTML, and that the templates ship as package data,
are lints of the source: ``nox -s lint`` runs them (``tools/check_html_fstrings.py``,
``tools/check_package_data.py``)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from markupsafe import Markup

from reconsim.report import build_report
from reconsim.report.blocks import key_text
from reconsim.site import publish
from reconsim.web.charts import CANVAS_MARKS, Figure
from reconsim.web.html import TableCell, environment, esc
from tests.helpers.tables import HAND_ROWS, hand_table, write_table

ROOT = Path(__file__).parents[1]

#: One payload per kind of data-derived string the page shows: markup, an ampersand and
#: both quotes, each naming where it came from.
PAYLOADS = {kind: f"<i class=\"{kind}\">&'{kind}</i>"
            for kind in ("name", "schedule", "controller", "spec", "axis", "version")}


class Text(HTMLParser):
    """The text a browser shows (outside script and style) and the tags it would build."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def shown(page: str) -> Text:
    parser = Text()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A report and an index built from a sweep whose every string carries a payload."""
    results = tmp_path_factory.mktemp("hostile") / "results"
    frame = hand_table(HAND_ROWS).with_columns(
        schedule=pl.col("schedule").replace("none", PAYLOADS["schedule"]),
        controller=pl.col("controller").replace("oracle", PAYLOADS["controller"]),
        window=pl.when(pl.col("controller") == "oracle").then(pl.lit(PAYLOADS["axis"])))
    sweep = write_table(results / "hostile", frame, name=PAYLOADS["name"],
                        spec={"name": "hostile", "grid": {"G": [0, PAYLOADS["spec"]]}},
                        version=PAYLOADS["version"])
    report = build_report(sweep)
    return report.html, publish(results)


def test_every_data_derived_string_is_shown_as_text_never_as_markup(
        hostile: tuple[Path, Path]) -> None:
    page = hostile[0].read_text(encoding="utf-8")
    seen = shown(page)
    text = "".join(seen.text)
    for kind, payload in PAYLOADS.items():
        # The spec is shown as JSON, its string's quotes backslashed.
        visible = json.dumps(payload)[1:-1] if kind == "spec" else payload
        assert visible not in page, kind                       # never raw, not even in a script
        assert str(esc(visible)) in page, kind                 # escaped in the HTML
        assert visible in text, kind                           # and shown as the text it is
    assert "i" not in seen.tags                                # no payload became a tag
    index = hostile[1].read_text(encoding="utf-8")
    assert PAYLOADS["name"] not in index
    assert PAYLOADS["name"] in "".join(shown(index).text)
    assert "i" not in shown(index).tags


@pytest.mark.parametrize("which", ["report", "index"])
def test_nothing_is_escaped_twice(hostile: tuple[Path, Path], which: str) -> None:
    page = hostile[0 if which == "report" else 1].read_text(encoding="utf-8")
    for twice in ("&amp;lt;", "&amp;gt;", "&amp;amp;", "&amp;#", "&amp;quot;"):
        assert twice not in page, twice
    # The words we write with entities arrive as the characters they stand for.
    text = "".join(shown(page).text)
    assert "&lt;" not in text
    assert "&amp;" not in text


def test_summary_json_keeps_the_strings_as_they_are(hostile: tuple[Path, Path]) -> None:
    summary = hostile[0].with_name("summary.json").read_text(encoding="utf-8")
    assert '"name": "<i class=\\"name\\">&\'name</i>"' in summary
    assert "&lt;" not in summary
    assert "&amp;" not in summary


def test_summary_data_holds_no_markup(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        schedule=pl.col("schedule").replace("none", PAYLOADS["schedule"]))
    data = build_report(write_table(tmp_path / "s", frame, name=PAYLOADS["name"])).data

    def strings(value: Any) -> list[Any]:
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in (k, *strings(v))]
        if isinstance(value, (list, tuple)):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    found = strings(data)
    assert PAYLOADS["schedule"] in found
    assert all(type(s) is str for s in found)


#: The page kit's blocks (``templates/kit.html``), as every page's templates have them.
KIT = environment("reconsim.report").globals


def test_table_escapes_every_cell_but_markup() -> None:
    html = KIT["table"](["a < b", "n"], [
        ["<x>", 1234],
        [Markup("<em>ours</em>"), 0.5],
        [TableCell(3, "bad"), TableCell(None, "absent", "<none>")],
        [TableCell(1, "", Markup("1 <sub>2</sub>")), None],
        [True, TableCell("—", "absent")],
    ], missing="null")
    assert isinstance(html, Markup)
    assert html == ("<table><thead><tr><th>a &lt; b</th><th>n</th></tr></thead><tbody>"
                    '<tr><td>&lt;x&gt;</td><td class="num">1,234</td></tr>'
                    '<tr><td><em>ours</em></td><td class="num">0.5</td></tr>'
                    '<tr><td class="bad num">3</td><td class="absent">&lt;none&gt;</td></tr>'
                    '<tr><td class="num">1 <sub>2</sub></td><td>null</td></tr>'
                    '<tr><td>True</td><td class="absent">—</td></tr>'
                    "</tbody></table>")
    assert KIT["table"](["x"], [[None]], missing="—") == (
        "<table><thead><tr><th>x</th></tr></thead><tbody><tr><td>—</td></tr></tbody></table>")


def test_blocks_escape_text_and_keep_markup_once() -> None:
    assert esc(None) == "null"
    assert esc("<&>\"'") == "&lt;&amp;&gt;&#34;&#39;"
    assert esc(Markup("<b>")) == "<b>"
    inner = KIT["table"](["x"], [["<y>"]])
    assert KIT["folded"](inner, 13, "<rows>") == (
        f"<details><summary>13 &lt;rows&gt;</summary>{inner}</details>")
    assert KIT["folded"](inner, 3, "rows") == inner
    assert KIT["folded"](inner, 1_200, "rows", limit=2_000) == inner
    assert KIT["folded"](inner, 1_200, "rows").startswith("<details><summary>1,200 rows<")
    # Text helpers give text; escaping is left to where it meets markup.
    assert key_text({"schedule": "<s>", "G": 1000, "U": None}, ()) == "schedule = <s>, G = 1,000"


@pytest.mark.parametrize(("marks", "renderer"), [(CANVAS_MARKS, "svg"), (CANVAS_MARKS + 1,
                                                                        "canvas")])
def test_a_chart_is_its_spec_in_a_script_element(marks: int, renderer: str) -> None:
    fig = Figure("law", "<Law> & co", {"title": "</script><b>"}, {"marks": marks})
    html = KIT["figure_html"](fig)
    assert html == (
        f'<figure><div class="chart" id="chart-law" data-figure="law" data-renderer="{renderer}">'
        '<noscript><img src="figures/law.svg" alt="&lt;Law&gt; &amp; co"></noscript></div>'
        '<script type="application/json" id="spec-law">{"title":"\\u003c/script\\u003e'
        '\\u003cb\\u003e"}</script><figcaption>&lt;Law&gt; &amp; co: '
        '<a href="figures/law.svg">SVG</a>, <a href="figures/law.png">PNG</a>. Hover a mark '
        "for its cells' figures.</figcaption></figure>")
