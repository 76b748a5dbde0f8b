"""What a request is made of, section by section: tokens, share of the window and of the allowance, and
what was not sent; for a plan, each section's share, allowance, pinned, kept, evicted and summarised.

It is the table Claude Code's ``/context`` and Letta's context-window view show, computed from the
result alone: the inspector's composition view and the HTML report print it. No Qt here. The rows add
up: sections + free + margin + output reserve = the context limit (when the input fits its allowance),
and sections + free = the allowance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .palette import RESERVE_TITLES, section_order, section_title
from .result import NOT_SENT, AssemblyResult


@dataclass(frozen=True)
class SectionFigures:
    """A section's decisions (counts of items) and, under a plan, its share and allowance."""

    section: str
    share: float | None = None  # a plan section's share of the budget
    allowance: int | None = None  # the tokens the plan gave it (its pins' cost included)
    compaction: str | None = None
    pinned: int = 0
    required: int = 0
    kept: int = 0
    evicted: int = 0  # dropped
    summarised: int = 0

    def describe(self) -> str:
        """``share 85%, allowance 214; pinned 1, kept 16, evicted 4, summarised 0``."""
        plan = []
        if self.share is not None:
            plan.append(f"share {self.share:.0%}")
        if self.allowance is not None:
            plan.append(f"allowance {self.allowance:,}")
        if self.compaction is not None:
            plan.append(self.compaction)
        counts = f"pinned {self.pinned}, kept {self.kept}, evicted {self.evicted}, summarised {self.summarised}"
        if self.required:
            counts = f"required {self.required}, " + counts
        return (", ".join(plan) + "; " if plan else "") + counts


@dataclass(frozen=True)
class CompositionRow:
    key: str  # a section name, or free / margin / reserve
    kind: str  # "section", "free", "margin" or "reserve"
    title: str
    tokens: int  # sent (a section) or the part's size
    of_window: float  # fraction of the context limit
    of_allowance: float | None  # fraction of the input allowance (sections and free only)
    not_sent_items: int = 0
    not_sent_tokens: int = 0
    figures: SectionFigures | None = None


def section_figures(result: AssemblyResult) -> dict[str, SectionFigures]:
    """Per section of the trace: decision counts, and the plan's share and allowance where there is one."""
    extra: dict[str, Any] = result.model_extra or {}
    plan_sections = {s.get("name"): s for s in (extra.get("plan") or {}).get("sections", []) if isinstance(s, dict)}
    outcomes = {o.get("section"): o for o in extra.get("section_outcomes") or [] if isinstance(o, dict)}
    out: dict[str, SectionFigures] = {}
    for section in section_order([e.section for e in result.trace] + list(plan_sections)):
        mine = [e for e in result.trace if e.section == section]
        plan, outcome = plan_sections.get(section, {}), outcomes.get(section, {})
        share, allowance = plan.get("share"), outcome.get("allowance")
        out[section] = SectionFigures(
            section, share if isinstance(share, (int, float)) else None,
            allowance if isinstance(allowance, int) else None,
            plan.get("compaction") if plan else None,
            pinned=sum(e.decision == "pinned" for e in mine), required=sum(e.decision == "required" for e in mine),
            kept=sum(e.decision == "kept" for e in mine), evicted=sum(e.decision == "dropped" for e in mine),
            summarised=sum(e.decision == "summarised" for e in mine))
    return out


def composition(result: AssemblyResult) -> list[CompositionRow]:
    """One row per section (prompt order), then free, margin and output reserve."""
    limit = max(result.context_limit, 1)
    allowance = max(result.input_budget, 1)
    sent = result.sent_tokens_by_section()
    figures = section_figures(result)
    rows: list[CompositionRow] = []
    for section, fig in figures.items():
        tokens = sent.get(section, 0)
        lost = [e for e in result.trace if e.section == section and e.decision in NOT_SENT]
        rows.append(CompositionRow(section, "section", section_title(section), tokens, tokens / limit,
                                   tokens / allowance, len(lost), sum(e.tokens for e in lost), fig))
    free = max(result.remaining_tokens, 0)
    rows.append(CompositionRow("free", "free", RESERVE_TITLES["free"], free, free / limit, free / allowance))
    for key, tokens in (("margin", result.margin), ("reserve", result.max_new_tokens)):
        rows.append(CompositionRow(key, key, RESERVE_TITLES[key], tokens, tokens / limit, None))
    return rows


def percent(fraction: float | None) -> str:
    """``12.3%``; a share below 0.1% that is not zero reads ``<0.1%`` (never a misleading 0.0%), and one above 99.9%
    that is not whole reads ``>99.9%`` (never 100.0% with tokens left)."""
    if fraction is None:
        return ""
    if 0 < fraction < 0.001:
        return "<0.1%"
    if 0.999 < fraction < 1 - 1e-9:  # (a total summed from shares is 1 within float error: 100.0%)
        return ">99.9%"
    return f"{fraction:.1%}"
