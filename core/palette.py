"""The colours and names of sections and budget parts, in one place: the inspector and the HTML report read
them here, so a section looks the same in the app, in a saved picture and in a report.

Plain hex strings, no Qt. Known sections use Paul Tol's "bright" scheme and sections a plan names
(``system``, ``recent``...) the Okabe-Ito colours, both chosen to stay apart for colour-blind readers and
mid-tone, so they read on a light and on a dark window. Colour is never the only cue: the bar labels
its segments and hatches what was not sent.
"""
from __future__ import annotations

from typing import Iterable

from .result import SECTION_ORDER

SECTION_COLOURS: dict[str, str] = {
    "template": "#9A9A9A",
    "instructions": "#4477AA",
    "tools": "#AA3377",
    "history": "#66CCEE",
    "current": "#EE6677",
    "tool_exchanges": "#CCBB44",
    "evidence": "#228833",
}
# Okabe-Ito (black left out), in the order unknown sections receive them: the first few are the ones
# furthest from the known sections' colours and from each other.
FALLBACK_COLOURS: tuple[str, ...] = ("#E69F00", "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#F0E442")

SECTION_TITLES: dict[str, str] = {
    "template": "Template overhead",
    "instructions": "Instructions",
    "tools": "Tools",
    "history": "History",
    "current": "Current question",
    "tool_exchanges": "Tool exchanges",
    "evidence": "Evidence",
}

# Budget figures that are not sections.
RESERVE_COLOURS: dict[str, str] = {
    "free": "#B8D8B8",
    "margin": "#C8A2C8",
    "reserve": "#7D8CA3",
    "required": "#CC3311",
}
RESERVE_TITLES: dict[str, str] = {
    "free": "Free (unused allowance)",
    "margin": "Safety margin",
    "reserve": "Output reserve (max_new_tokens)",
    "required": "Required content (does not fit)",
}
NOT_SENT_COLOUR = "#888888"  # the legend's swatch for what was not sent (the bar hatches each section's own)
PROVIDER_COLOUR = "#CC3311"  # the provider's own input-token count: a colour no section uses
NEWLY_DROPPED_COLOUR = "#C62828"


def section_title(section: str) -> str:
    return SECTION_TITLES.get(section, section.replace("_", " ").capitalize() or "(unnamed)")


def section_order(sections: Iterable[str]) -> list[str]:
    """Known sections in prompt order, then the others in the order given: a plan's sections keep the
    plan's own order (the trace lists them so)."""
    names = list(dict.fromkeys(sections))
    known = sorted((s for s in names if s in SECTION_ORDER), key=SECTION_ORDER.index)
    return known + [s for s in names if s not in SECTION_ORDER]


class SectionPalette:
    """Section colours: the known ones fixed, others given the fallback colours in the order they are
    first asked for, so the sections of one plan are told apart (a hash of the name could give two of
    them one colour) and a name keeps its colour for as long as the palette lives."""

    def __init__(self) -> None:
        self._others: dict[str, str] = {}

    def colour(self, section: str) -> str:
        known = SECTION_COLOURS.get(section)
        if known is not None:
            return known
        if section not in self._others:
            self._others[section] = FALLBACK_COLOURS[len(self._others) % len(FALLBACK_COLOURS)]
        return self._others[section]

    def colours(self, sections: Iterable[str]) -> dict[str, str]:
        return {s: self.colour(s) for s in section_order(sections)}
