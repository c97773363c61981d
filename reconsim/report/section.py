"""What a section of the report is: one question, with its numbers, charts and words.

Each module of :mod:`reconsim.report.sections` defines one :class:`Section`; the page
(:mod:`reconsim.report.page`) lists them in order. A section depends on the kit
(:mod:`~reconsim.report.load`, :mod:`~reconsim.report.query`,
:mod:`~reconsim.report.charts`, :mod:`~reconsim.web.html` and this module) and never on
another section, so a new section is one new module and one line in
:data:`reconsim.report.page.SECTIONS`.

A section's figures are one typed object, its *summary*:

1. Declare it as frozen, slotted dataclasses, nested as the figures are (a sequence is a
   ``tuple``; rows whose keys are the sweep's axes, like :func:`~.query.where`'s and
   :func:`~.query.examples`' entries, stay ``dict``)::

       @dataclass(frozen=True, slots=True)
       class Delays:
           cells: int
           by_lag: tuple[LagRow, ...]
           grid: pl.DataFrame = field(metadata=NOT_IN_JSON)  # a chart's aggregate

   Every field goes into ``summary.json`` (:func:`to_json`: dataclasses become objects in
   field order, tuples lists), except those with ``metadata=NOT_IN_JSON``: data a chart
   draws, computed with the figures so that the table is read once; and those with
   ``metadata=UNLESS_DEFAULT`` go in only where they differ from their default: figures
   only some sweeps have (delays that vary), so that the others' ``summary.json`` stays
   as it was.
2. ``summarize(sweep: Sweep) -> Delays`` runs every query of the section, once.
3. ``render(summary: Delays, context: Context, figures: Mapping[str, Figure]) -> Markup``
   writes its HTML; ``context`` (:class:`Context`) holds what was swept (the page's
   introduction and the sweep's own section show it), ``figures`` the charts by name.
   Its words and tags belong in its template, ``templates/delays.html``: a macro ``body``
   that ``render`` calls with the summary (:func:`~reconsim.report.blocks.macro`), and one
   for the glance; Python hands it data (a table's rows, a
   :class:`~reconsim.web.html.TableCell` where a cell is marked) and the template writes
   the HTML with the kit's blocks (``table``, ``folded``, ``figure_html``). A claim the
   section checks cell by cell is a :class:`~reconsim.report.claims.Claim` in the
   summary, worded, boxed and put at a glance by ``claims.html``. The page puts the
   section in its element, under its :meth:`Section.heading`.
4. ``charts(summary: Delays, context: Context) -> list[Figure]`` draws its charts from the
   summary alone: no query of the table (optional; default none).
5. ``glance(summary: Delays) -> Markup | None``: its one-sentence verdict for the top of
   the page (optional; default none).
6. ``SECTION = Section("delays", summarize, render, charts, glance)``: ``summary.json``
   holds ``to_json(summary)`` under the key ``"delays"`` (the section's name).
7. ``shown(summary: Delays) -> bool``: whether the section is on the page at all
   (optional; default always): one about what only some sweeps have is left out of the
   page, its letter and ``summary.json`` elsewhere.

A section written against the old interface (``summarize`` returning
``{"delays": asdict(Delays(...))}``, ``render(summary_dict, figures)``) adopts this one by
returning ``Delays(...)`` itself and reading its fields (``summary.cells``) where it read
``summary["delays"]["cells"]``; ``mypy --strict`` then checks every field it reads.
HTML is :class:`~markupsafe.Markup`: the page escapes a plain ``str``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from markupsafe import Markup

from reconsim.report.charts import Figure
from reconsim.report.load import AxisFacts, Sweep

#: Field metadata of summary fields that ``summary.json`` leaves out (a chart's data).
NOT_IN_JSON: Final[Mapping[str, bool]] = {"json": False}
#: Field metadata of summary fields that ``summary.json`` leaves out while they hold their
#: default (figures only some sweeps have).
UNLESS_DEFAULT: Final[Mapping[str, str]] = {"json": "unless default"}

#: Axes with at most this many values are listed value by value in the sweep's facts.
LISTED_VALUES: Final = 30


def _in_json(f: dataclasses.Field[Any], value: Any) -> bool:
    """Whether field ``f``, holding ``value``, goes into ``summary.json``."""
    shown = f.metadata.get("json", True)
    return shown is True or (shown == UNLESS_DEFAULT["json"] and value != f.default)


def to_json(value: Any) -> Any:
    """A summary as JSON-ready data: dataclasses as dicts of their fields in order (those
    with ``metadata=NOT_IN_JSON`` left out, and those with ``metadata=UNLESS_DEFAULT``
    holding their default), tuples and lists as lists, mappings as dicts."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)
                if _in_json(f, getattr(value, f.name))}
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class SweepFacts:
    """The sweep's identity from ``sweep.json`` beside what the data itself holds
    (``summary.json``'s ``sweep``)."""

    name: str
    version: Any
    spec_hash: Any
    spec: Any
    started: Any
    finished: Any
    cells_per_second: Any
    cells_declared: Any
    cells: int
    controllers: tuple[str, ...]
    schedules: dict[str, tuple[tuple[int, int], ...]]
    stale_law_cells: int
    #: What each user's controller does, as the sweep recorded it (``sweep.json``).
    descriptions: dict[str, str] = field(default_factory=dict, metadata=NOT_IN_JSON)


@dataclass(frozen=True, slots=True)
class AxisSummary:
    """One axis: how many distinct values, its range, and the values when there are few
    (``summary.json``'s ``axes``)."""

    distinct: int
    nulls: int
    min: Any
    max: Any
    values: tuple[Any, ...] | None


@dataclass(frozen=True, slots=True)
class Context:
    """What was swept, as every section may show it: the sweep's facts and its axes."""

    sweep: SweepFacts
    axes: dict[str, AxisSummary]

    @property
    def constant(self) -> frozenset[str]:
        """The axes that take a single value in the whole sweep (not worth repeating)."""
        return frozenset(a for a, f in self.axes.items() if f.distinct <= 1)

    @classmethod
    def of(cls, sweep: Sweep) -> Context:
        """The context of a loaded sweep (no query: :func:`~.load.load_sweep` counted it)."""
        meta = sweep.meta
        facts = SweepFacts(
            name=str(meta.get("name", "")), version=meta.get("version"),
            spec_hash=meta.get("spec_hash"), spec=meta.get("spec"),
            started=meta.get("started"), finished=meta.get("finished"),
            cells_per_second=meta.get("cells_per_second"), cells_declared=meta.get("cells"),
            cells=sweep.cells, controllers=tuple(sweep.controllers),
            schedules=dict(sweep.schedules), stale_law_cells=sweep.stale_law_cells,
            descriptions=_descriptions(meta.get("controllers")))
        return cls(facts, {a: axis_summary(sweep.axis_facts[a]) for a in sweep.axes})


def _descriptions(recorded: Any) -> dict[str, str]:
    """``sweep.json``'s ``controllers`` (name -> what it does), or none where it records
    none (a sweep of reconsim's own controllers, or one written before it did)."""
    if not isinstance(recorded, dict):
        return {}
    return {str(k): str(v) for k, v in recorded.items()}


def axis_summary(facts: AxisFacts) -> AxisSummary:
    """One axis's summary from its facts over the table."""
    values = facts.values
    non_null = [v for v in values if v is not None]
    return AxisSummary(distinct=len(values), nulls=facts.nulls,
                       min=min(non_null) if non_null else None,
                       max=max(non_null) if non_null else None,
                       values=values if len(values) <= LISTED_VALUES else None)


S = TypeVar("S")


def _no_charts(summary: Any, context: Context) -> list[Figure]:
    return []


def _no_glance(summary: Any) -> Markup | None:
    return None


def _always(summary: Any) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Section(Generic[S]):
    """One section: ``summarize`` computes its summary ``S`` (a frozen dataclass) from the
    sweep; ``render`` its HTML from the summary, the :class:`Context` and the charts by
    name; ``charts`` its charts from the summary; ``glance`` its one-sentence verdict for
    the top of the page (or None). ``summary.json`` holds :func:`to_json` of the summary
    under ``name`` (see the module's docstring for the whole contract)."""

    name: str
    summarize: Callable[[Sweep], S]
    render: Callable[[S, Context, Mapping[str, Figure]], Markup]
    charts: Callable[[S, Context], list[Figure]] = _no_charts
    glance: Callable[[S], Markup | None] = _no_glance
    #: Whether the summary's fields are top-level entries of ``summary.json`` rather than
    #: one entry under ``name`` (the sweep's own section: ``sweep`` and ``axes``).
    spread: bool = False
    #: Its heading, and its element's id on the page (``name`` unless given).
    title: str = ""
    anchor: str = ""
    #: Whether its heading takes a letter (a, b, …: its place among the lettered sections
    #: of the page's list), and the claim it checks as the page's introduction names it.
    lettered: bool = True
    checks: str | None = None
    #: Whether the section is on the page and in ``summary.json`` for its summary: a
    #: section about what only some sweeps have (events, changes of desired) is left out
    #: of the others' (default: always).
    shown: Callable[[S], bool] = _always

    @property
    def element(self) -> str:
        """Its element's id on the page: :attr:`anchor`, else :attr:`name`."""
        return self.anchor or self.name

    def heading(self, letter: str | None) -> str:
        """Its heading on the page, after its ``letter`` where it takes one."""
        return f"{letter}. {self.title}" if letter else self.title

    def entries(self, summary: S) -> dict[str, Any]:
        """The section's entries of ``summary.json``: its summary under its name (none where
        the section is not :attr:`shown`)."""
        if not self.shown(summary):
            return {}
        data = to_json(summary)
        return dict(data) if self.spread else {self.name: data}
