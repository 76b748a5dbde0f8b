"""Where each part of the budget bar goes, in tokens: a pure layout the inspector draws and the HTML
report writes as SVG, so both show the same thing. No Qt here.

Main lane, left to right: each section's sent tokens (prompt order), the free part of the input
allowance, the safety margin and the output reserve up to the context limit. The dropped lane holds
what was not sent: in the whole-window view from the allowance line on (the part that did not fit),
in the fit-to-input view right after what was sent (so sent + dropped reads against the allowance).
A section's run of more than ``FOLD_AT`` not-sent items becomes one labelled segment with its count
("History: 208 dropped, 61,204 tokens"), unless the person unfolded that section.

An imported request counted with an estimate (no public tokenizer: Claude, Gemini) whose file records
the provider's input tokens is drawn to the provider's figure (``bar_basis``): the sent sections are
our estimate's shares scaled to it (each segment keeps our own figure in ``estimate``), and free, margin
and reserve follow from it; our estimate and its drift are drawn beside it, below.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

from .palette import section_order, section_title
from .result import NOT_SENT, AssemblyResult

View = Literal["fit", "window"]
FOLD_AT = 3
MIN_ZOOM_TOKENS = 8  # the narrowest the token axis may be zoomed to


@dataclass(frozen=True)
class Segment:
    """One drawn part of the bar. ``kind``: section, dropped, free, margin, reserve or required."""

    kind: str
    key: str  # the section name, or the reserve key
    x0: float
    width: float
    lane: str  # "main", "dropped" or (a replay's recording) "recorded"
    tokens: int
    items: tuple[str, ...] = ()
    newly: bool = False  # not sent, and newly so in a replay
    summarised: bool = False  # not dropped but replaced by a summary (drawn with the dropped)
    item_tokens: tuple[int, ...] = ()  # a not-sent segment's items' tokens, in ``items`` order
    estimate: int | None = None  # drawn to the provider's figure: our estimate's own tokens of this section

    @property
    def x1(self) -> float:
        return self.x0 + self.width

    @property
    def section(self) -> str | None:
        return self.key if self.kind in ("section", "dropped") else None

    @property
    def folded(self) -> bool:
        """A run of several not-sent items drawn as one."""
        return self.kind == "dropped" and len(self.items) > 1

    @property
    def verb(self) -> str:
        return ("newly " if self.newly else "") + ("summarised" if self.summarised else "dropped")

    def run_label(self) -> str:
        """``History: 208 dropped, 61,204 tokens`` (a folded run) or ``turn-3 57`` (one item)."""
        if self.folded:
            return f"{section_title(self.key)}: {len(self.items)} {self.verb}, {self.tokens:,} tokens"
        return f"{self.items[0]} {self.tokens:,}" if self.items else f"{self.tokens:,}"


@dataclass(frozen=True)
class BarBasis:
    """The input-token figure a result's bar is drawn to. ``provider``: the provider's recorded figure, because
    our count (``ours``) is an estimate; otherwise our count."""

    input_tokens: int
    ours: int
    provider: bool = False

    @property
    def drift(self) -> int:
        return self.ours - self.input_tokens

    def words(self) -> str:
        """``drawn to the provider's 568 input tokens; our estimate 602 (drift +34)`` (empty for our own count)."""
        if not self.provider:
            return ""
        return (f"drawn to the provider's {self.input_tokens:,} input tokens; our estimate {self.ours:,} "
                f"(drift {self.drift:+,})")


def bar_basis(result: AssemblyResult) -> BarBasis:
    """What the bar of ``result`` is drawn to: the provider's recorded input tokens where our count is an
    estimate and the file records them (``authoritative_source`` "provider"), else our count."""
    extra = result.model_extra or {}
    theirs = extra.get("authoritative_input_tokens")
    if extra.get("authoritative_source") == "provider" and isinstance(theirs, int) and theirs >= 0:
        return BarBasis(theirs, result.input_tokens, True)
    return BarBasis(result.input_tokens, result.input_tokens)


def _scaled(tokens: list[int], total: int) -> list[int]:
    """``tokens`` scaled to sum to ``total`` exactly (largest remainders get the rounding)."""
    ours = sum(tokens)
    if ours <= 0:
        return list(tokens)
    raw = [t * total / ours for t in tokens]
    out = [int(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True)[:total - sum(out)]:
        out[i] += 1
    return out


def result_segments(result: AssemblyResult, lane: str = "main", *, drops: str | None = "dropped",
                    newly: frozenset[tuple[str, str]] = frozenset(), view: View = "window",
                    fold_at: int = FOLD_AT, unfolded: Iterable[str] = ()) -> list[Segment]:
    """Sent sections, free, margin and reserve of ``result`` in ``lane``; what was not sent in lane
    ``drops`` (none when ``drops`` is None). ``newly`` names the (section, id) a replay newly dropped."""
    segments: list[Segment] = []
    sent = result.sent_tokens_by_section()
    order = section_order(e.section for e in result.trace)
    basis = bar_basis(result)
    shown = [s for s in order if sent.get(s, 0) > 0]
    drawn = _scaled([sent[s] for s in shown], basis.input_tokens) if basis.provider else [sent[s] for s in shown]
    x = 0.0
    for section, tokens in zip(shown, drawn):
        ids = tuple(e.id for e in result.trace if e.section == section and e.decision not in NOT_SENT)
        segments.append(Segment("section", section, x, tokens, lane, tokens, ids,
                                estimate=sent[section] if basis.provider else None))
        x += tokens
    sent_end = max(x, float(basis.input_tokens))
    free = max(0, result.input_budget - basis.input_tokens) if basis.provider else max(0, result.remaining_tokens)
    if free:
        segments.append(Segment("free", "free", sent_end, free, lane, free))
    x = float(result.input_budget) if basis.input_tokens <= result.input_budget else sent_end
    if result.margin > 0:
        segments.append(Segment("margin", "margin", x, result.margin, lane, result.margin))
        x += result.margin
    if result.max_new_tokens > 0:
        segments.append(Segment("reserve", "reserve", x, result.max_new_tokens, lane, result.max_new_tokens))
    if drops is None:
        return segments
    x = float(result.input_budget) if view == "window" else sent_end
    unfolded = set(unfolded)
    rank = {section: n for n, section in enumerate(order)}
    out = sorted((e for e in result.trace if e.decision in NOT_SENT), key=lambda e: rank.get(e.section, len(rank)))
    for section in order:
        mine = [e for e in out if e.section == section]
        # one run per kind of loss: dropped before, newly dropped, summarised
        for is_newly, is_summary in ((False, False), (True, False), (False, True), (True, True)):
            run = [e for e in mine if ((e.section, e.id) in newly) == is_newly
                   and (e.decision == "summarised") == is_summary]
            if not run:
                continue
            if len(run) > fold_at and section not in unfolded:
                tokens = sum(max(e.tokens, 0) for e in run)
                segments.append(Segment("dropped", section, x, tokens, drops, tokens, tuple(e.id for e in run),
                                        is_newly, is_summary, tuple(e.tokens for e in run)))
                x += tokens
                continue
            for e in run:
                width = max(e.tokens, 0)
                segments.append(Segment("dropped", section, x, width, drops, e.tokens, (e.id,), is_newly,
                                        is_summary, (e.tokens,)))
                x += width
    return segments


def rejection_segments(need: int, allowance: int, margin: object, reserve: object, required_lane: str,
                       lane: str) -> list[Segment]:
    """A rejected request: nothing was sent; the required content is drawn from 0 in ``required_lane``."""
    segments = [Segment("required", "required", 0, need, required_lane, need)]
    x = float(allowance)
    if isinstance(margin, int) and margin > 0:
        segments.append(Segment("margin", "margin", x, margin, lane, margin))
        x += margin
    if isinstance(reserve, int) and reserve > 0:
        segments.append(Segment("reserve", "reserve", x, reserve, lane, reserve))
    return segments


def content_extent(segments: Iterable[Segment]) -> float:
    """The right end of what the request holds: sent, not sent, or required."""
    return max([s.x1 for s in segments if s.kind in ("section", "dropped", "required")] + [1.0])


def full_extent(segments: Iterable[Segment], marks: Iterable[int | None] = ()) -> float:
    """The right end of everything: every segment and every mark (allowance, limit, provider count)."""
    segments = list(segments)
    return max([s.x1 for s in segments] + [float(m) for m in marks if m is not None] + [1.0])


def view_extent(segments: Iterable[Segment], view: View, *, allowances: Iterable[int | None] = (),
                limits: Iterable[int | None] = ()) -> float:
    """The token the view's right edge shows. Whole window: the largest context limit (what does not fit
    runs off the edge and the person may zoom out). Fit to input: what was sent and dropped, with the
    allowance (and limit) brought in only when near enough not to squash it."""
    segments = list(segments)
    limits = [v for v in limits if v is not None]
    if view == "window":
        return float(max(limits)) if limits else full_extent(segments)
    content = content_extent(segments)
    right = content
    for mark in [v for v in allowances if v is not None] + limits:
        if mark <= content * 1.5:
            right = max(right, float(mark))
    return right


def zoom_limits(segments: Iterable[Segment], marks: Iterable[int | None] = ()) -> tuple[float, float]:
    """(narrowest, widest) token ranges the axis may show: a few tokens at most zoomed in, everything
    (segments and marks, with room for the labels) at most zoomed out."""
    return float(MIN_ZOOM_TOKENS), full_extent(segments, marks) * 1.2
