"""The report page (``templates/page.html``): what is measured, the verdicts at a glance,
each section in order, and the definitions.

:data:`SECTIONS` is the page: each entry is one module of :mod:`reconsim.report.sections`
that owns its numbers, charts and words. Every number on the page comes from the summary
that is also written as ``summary.json``. A section that is not
:attr:`~reconsim.report.section.Section.shown` for its summary (the responses to events,
the law per step: only some sweeps have them) is left out, and the letters follow the
sections on the page.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from markupsafe import Markup

from reconsim.model.controllers import registry
from reconsim.model.laws import BOUNDARY, LAW_FORMULA, LAW_SCOPE
from reconsim.model.metrics import DERIVED, METRICS
from reconsim.model.params import CONTROLLERS
from reconsim.report.charts import Figure
from reconsim.report.section import Context, Section
from reconsim.report.sections import (
    answers,
    boundary,
    controllers,
    delays,
    faults,
    law,
    read_cost,
    responses,
    rollout,
    seed,
    steps,
    sweep,
    timelines,
)
from reconsim.web.html import render


def controller_rows(context: Context) -> list[tuple[str, str]]:
    """The controllers in the sweep, each with what it does (for the page's introduction):
    reconsim's own as this version describes them, a user's as the sweep recorded it."""
    users = context.sweep.descriptions
    return [(c, CONTROLLERS.get(c) or users.get(c) or "(a user's controller; the sweep "
                                                     "recorded no description)")
            for c in context.sweep.controllers]


def definition_rows() -> list[tuple[str, str]]:
    """The metrics and derived figures, defined (the page's last table)."""
    rows = [(m.name, m.help) for m in METRICS]
    rows += [(name, f"{d.formula}: {d.help}") for name, d in DERIVED.items()]
    rows += [("law_overshoot", f"{LAW_FORMULA['ready']} for {LAW_SCOPE}; "
              f"{LAW_FORMULA['created']} where observe = created"),
             ("law holds", "measured overshoot == law_overshoot"),
             ("above the boundary", BOUNDARY)]
    return rows


#: The report's sections, in page order.
SECTIONS: Final[tuple[Section[Any], ...]] = (
    answers.SECTION,
    law.SECTION,
    boundary.SECTION,
    responses.SECTION,
    steps.SECTION,
    rollout.SECTION,
    read_cost.SECTION,
    controllers.SECTION,
    seed.SECTION,
    delays.SECTION,
    faults.SECTION,
    timelines.SECTION,
    sweep.SECTION,
)


#: The sections a sweep whose every cell runs in a world of its own (the Deployment world)
#: shows: the others ask about a loop of rounds — its period U, its ledger's law, its reads.
WORLD_SECTIONS: Final = frozenset({"rollout", "controllers", "timelines", "sweep"})


def worlds_only(context: Context) -> bool:
    """Whether every controller of the sweep is one of reconsim's own that runs in a world of
    its own (whatever users' controllers this process has resolved)."""
    own = {c.name: c for c in registry.built_in()}
    controllers = context.sweep.controllers
    return bool(controllers) and all(c in own and own[c].world is not None for c in controllers)


def on_page(section: Section[Any], summary: Any, context: Context) -> bool:
    """Whether ``section`` is on the page: shown for its summary and, in a sweep of worlds
    of their own only (:func:`worlds_only`), one of :data:`WORLD_SECTIONS`."""
    return section.shown(summary) and (not worlds_only(context)
                                       or section.name in WORLD_SECTIONS)


@dataclass(frozen=True, slots=True)
class Summaries:
    """The page's figures: each section's summary (in :data:`SECTIONS`' order) and the
    sweep's :class:`~reconsim.report.section.Context`."""

    context: Context
    sections: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        """Each section's entries of ``summary.json``, in page order."""
        out: dict[str, Any] = {}
        for section, summary in zip(SECTIONS, self.sections, strict=True):
            if on_page(section, summary, self.context) or not section.shown(summary):
                out |= section.entries(summary)
        return out


def render_page(summaries: Summaries, figures: Sequence[Figure], bundle: str) -> str:
    """The whole report page (``templates/page.html``), self-contained: ``bundle`` is the
    Vega/vega-embed JavaScript, which must not contain ``</script``."""
    by_name = {f.name: f for f in figures}
    context = summaries.context
    pairs = [(s, x) for s, x in zip(SECTIONS, summaries.sections, strict=True)
             if on_page(s, x, context)]
    letters = section_letters({s.name for s, _ in pairs})
    return render(
        "reconsim.report", "page.html", sweep=context.sweep, bundle=Markup(bundle),
        worlds_only=worlds_only(context),
        controllers=controller_rows(context), definitions=definition_rows(),
        checks=", ".join(f"({letters[s.name]}) {s.checks}" for s, _ in pairs if s.checks),
        glance=[line for s, x in pairs if (line := s.glance(x)) is not None],
        sections=[(s.element, s.heading(letters.get(s.name)), s.render(x, context, by_name))
                  for s, x in pairs])


def section_letters(shown: Collection[str] | None = None) -> dict[str, str]:
    """Each lettered section's letter, by name: a, b, c, … in :data:`SECTIONS`' order,
    among the sections named in ``shown`` (those on the page; None: every one)."""
    lettered = [s.name for s in SECTIONS if s.lettered and (shown is None or s.name in shown)]
    return {name: chr(ord("a") + i) for i, name in enumerate(lettered)}
