"""The budget bar's words: the caption above it and the text shown on hover, from core's figures.

A not-sent item says why, in the core's own reason ("does not fit: needs 46, 19 left", "evicted by
pin-and-fold: recent over its 85% share ..."), never a guess; a folded run lists its items with their
tokens; a plan's section shows its share, allowance, pinned, kept, evicted and summarised.
"""
from __future__ import annotations

import core

from ... import theme
from ...document import Row

RUN_ITEMS_SHOWN = 12


def limits(row: Row | None) -> tuple[int | None, int | None]:
    """(input allowance, context limit) of a row, as recorded."""
    if row is None:
        return None, None
    if row.result is not None:
        return row.result.input_budget, row.result.context_limit
    if row.rejection is not None:
        limit = row.rejection.get("context_limit")
        return row.allowance, limit if isinstance(limit, int) else None
    return None, None


def _plan_sections(result: core.AssemblyResult) -> str:
    extra = result.model_extra or {}
    if not extra.get("plan"):
        return ""
    figures = core.section_figures(result)
    parts = [f"{theme.section_title(s)}: {f.describe()}" for s, f in figures.items() if s != "template"]
    return " Plan sections — " + "; ".join(parts) + "."


def caption(row: Row | None) -> str:
    if row is None:
        return "No request selected."
    if row.result is None:
        return f"{row.label}: {row.summary()}"
    r = row.result
    basis = core.bar_basis(r)
    used = (f"{basis.input_tokens:,} input tokens as the provider recorded them (our estimate {basis.ours:,}, "
            f"drift {basis.drift:+,})" if basis.provider else f"{r.input_tokens:,} input tokens")
    text = (f"{row.label} ({r.strategy}): {used} of a {r.input_budget:,}-token allowance "
            f"({max(0, r.input_budget - basis.input_tokens):,} free, "
            f"{core.percent(basis.input_tokens / max(r.input_budget, 1))} used); "
            f"context limit {r.context_limit:,} = allowance + margin {r.margin:,} + output reserve "
            f"{r.max_new_tokens:,}.")
    dropped = [e for e in r.trace if e.decision == "dropped"]
    if dropped:
        by_section = {}
        for e in dropped:
            count, tokens = by_section.get(e.section, (0, 0))
            by_section[e.section] = (count + 1, tokens + e.tokens)
        text += f" Dropped: {len(dropped)} items, {sum(e.tokens for e in dropped):,} tokens (" + ", ".join(
            f"{theme.section_title(s)} {n}" for s, (n, _) in by_section.items()) + ")."
    summarised = [e for e in r.trace if e.decision == "summarised"]
    if summarised:
        text += (f" Summarised: {len(summarised)} items, {sum(e.tokens for e in summarised):,} tokens, "
                 "replaced by summaries.")
    if basis.input_tokens > r.input_budget:
        text += f" OVER the allowance by {basis.input_tokens - r.input_budget:,}."
    extra = r.model_extra or {}
    if extra.get("count_is_estimate"):  # no public tokenizer: our count is an estimate; say which figure to trust
        theirs = extra.get("provider_input_tokens")
        text += (f" Our count is an estimate ({r.counter.name if r.counter else 'no public tokenizer'}); the "
                 f"provider's {theirs:,} input tokens are the figure to go by: the bar is drawn to them, each "
                 "section its share by our estimate (≈)." if basis.provider else
                 " Our count is an estimate: this model's tokenizer is not public.")
    return text + _plan_sections(r)


def comparison_caption(recorded: Row, replayed: Row, note: str) -> str:
    r = replayed.result
    if recorded.result is not None:
        rec = recorded.result
        before = (f"recorded {rec.input_tokens:,} input tokens of a {rec.input_budget:,}-token allowance "
                  f"(limit {rec.context_limit:,})")
    else:
        before = f"recorded: {recorded.summary()}"
    after = (f"replayed {r.input_tokens:,} of {r.input_budget:,} (limit {r.context_limit:,}, margin {r.margin:,}, "
             f"output reserve {r.max_new_tokens:,}), {replayed.dropped_count} items dropped"
             if r is not None else "no replay")
    return f"{recorded.label} ({recorded.strategy}) under edits: {after}; {before}." + (f" {note}" if note else "")


def _reasons(row: Row | None) -> dict[tuple[str, str], core.TraceEntry]:
    if row is None or row.result is None:
        return {}
    return {(e.section, e.id): e for e in row.result.trace}


def hover_text(seg: core.Segment, row: Row | None, *, comparing: bool = False) -> str:
    limit = limits(row)[1]
    share = f"{100.0 * seg.tokens / limit:.1f}% of the {limit:,}-token context limit" if limit else ""
    entries = _reasons(row)
    lines: list[str] = []
    if seg.kind == "section" and seg.estimate is not None:
        lines.append(f"{theme.section_title(seg.key)}: ≈{seg.tokens:,} of the provider's input tokens (our estimate "
                     f"counts {seg.estimate:,}, scaled to the provider's total)")
    elif seg.kind == "section":
        lines.append(f"{theme.section_title(seg.key)}: {seg.tokens:,} tokens sent")
    elif seg.kind == "dropped" and not seg.folded:
        entry = entries.get((seg.key, seg.items[0]))
        why = entry.reason if entry is not None else ""
        head = f"{theme.section_title(seg.key)} / {seg.items[0]}: {seg.tokens:,} tokens " + (
            "summarised (replaced by a summary)" if seg.summarised else "dropped") + (f": {why}" if why else "")
        if seg.newly:
            head += "; newly dropped by the replay"
        lines.append(head)
    elif seg.kind == "dropped":
        lines.append(seg.run_label() + (" by the replay" if seg.newly else ""))
        reasons = list(dict.fromkeys(entries[(seg.key, i)].reason for i in seg.items if (seg.key, i) in entries))
        if len(reasons) == 1:
            lines.append(f"all: {reasons[0]}")
        elif reasons:
            lines.append(f"first: {reasons[0]}")
        shown = [f"  {i}: {t:,}" for i, t in zip(seg.items[:RUN_ITEMS_SHOWN], seg.item_tokens)]
        lines += shown
        if len(seg.items) > RUN_ITEMS_SHOWN:
            lines.append(f"  … and {len(seg.items) - RUN_ITEMS_SHOWN} more (Unfold in the bar's menu lists each)")
    else:
        lines.append(f"{theme.RESERVE_TITLES[seg.kind]}: {seg.tokens:,} tokens")
    if seg.kind == "dropped" and not seg.summarised:
        lines.append(theme.PRICED_ALONE)
    if comparing:
        lines[0] = ("Recorded — " if seg.lane == "recorded" else "Replayed — ") + lines[0]
    if share:
        lines.insert(1, share)
    if seg.items and seg.kind == "section":
        shown_ids = ", ".join(seg.items[:8]) + (f", and {len(seg.items) - 8} more" if len(seg.items) > 8 else "")
        lines.append(f"{len(seg.items)} item{'s' if len(seg.items) != 1 else ''}: {shown_ids}")
    if seg.section is not None and row is not None and row.result is not None and (row.result.model_extra or {}).get(
            "plan"):
        figures = core.section_figures(row.result).get(seg.section)
        if figures is not None:
            lines.append(f"plan section: {figures.describe()}")
    return "\n".join(lines)
