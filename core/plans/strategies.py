"""The built-in compaction strategies: drop-oldest, pin-and-fold, newest-turns, by-score, summarise-span."""
from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from .model import SUMMARY_PREFIX, Message
from .summaries import Summariser, _call_summariser, _span_hash

Count = Callable[[Sequence[Message]], int]


@dataclass(frozen=True)
class Summary:
    id: str
    message: Message
    replaces: tuple[str, ...]
    span_hash: str


@dataclass(frozen=True)
class CompactionOutcome:
    entries: tuple[Message, ...]
    evicted: tuple[Message, ...] = ()
    summaries: tuple[Summary, ...] = ()


class CompactionStrategy(Protocol):
    def compact(self, entries: Sequence[Message], *, budget_tokens: int, count: Count) -> CompactionOutcome: ...


class _ComparesWithBudget:
    """A built-in strategy compares counts with ``budget_tokens`` only; saying so lets the assembler
    answer its counts from item costs (a count near the budget is still counted whole)."""

    def thresholds(self, budget_tokens: int) -> tuple[int, ...]:
        return (budget_tokens,)


class DropOldest(_ComparesWithBudget):
    """Drops unpinned entries from the front until the rest fits. Costs nothing."""

    def compact(self, entries, *, budget_tokens, count):
        kept = list(entries)
        evicted = []
        while count(kept) > budget_tokens:
            victim = next((m for m in kept if not m.pinned), None)
            if victim is None:
                break
            kept.remove(victim)
            evicted.append(victim)
        return CompactionOutcome(tuple(kept), tuple(evicted))


class PinAndFold(_ComparesWithBudget):
    """Keeps pins verbatim and folds the rest into one short note. Costs nothing."""

    def compact(self, entries, *, budget_tokens, count):
        if count(entries) <= budget_tokens:
            return CompactionOutcome(tuple(entries))
        folded = [m for m in entries if not m.pinned]
        pins = [m for m in entries if m.pinned]
        if not folded:
            return CompactionOutcome(tuple(entries))
        note = Message(role="user", id=f"fold-{_span_hash(folded)[:12]}",
                       content=f"[{len(folded)} earlier message{'s' if len(folded) != 1 else ''} folded away to fit "
                               "the context budget]")
        first = entries.index(folded[0])
        kept = [m for m in entries[:first] if m.pinned] + [note] + [m for m in entries[first:] if m.pinned]
        if count(kept) > budget_tokens:
            kept = pins
        return CompactionOutcome(tuple(kept), tuple(folded))


class NewestTurns(_ComparesWithBudget):
    """Seed 003's history policy: whole turns (a user message and what follows it), newest first,
    stopping at the first turn that does not fit. A turn with a pinned message is always kept."""

    def compact(self, entries, *, budget_tokens, count):
        turns: list[list[Message]] = []
        for m in entries:
            if m.role == "user" or not turns:
                turns.append([m])
            else:
                turns[-1].append(m)
        keep = [any(m.pinned for m in turn) for turn in turns]
        # Asked at turn t, every later turn is kept (pinned, or asked and fitted: a misfit ends the questions)
        # and an earlier one only if pinned: the candidate is the pinned turns before t, then everything from t.
        flat = [m for turn in turns for m in turn]
        starts, pins, pins_before, at = [], [], [], 0
        for t, turn in enumerate(turns):
            starts.append(at)
            at += len(turn)
            pins_before.append(len(pins))
            if keep[t]:
                pins += turn
        for t in reversed(range(len(turns))):
            if keep[t]:
                continue
            if count(pins[:pins_before[t]] + flat[starts[t]:]) <= budget_tokens:
                keep[t] = True
            else:
                break
        kept = tuple(m for t, turn in enumerate(turns) if keep[t] for m in turn)
        evicted = tuple(m for t, turn in enumerate(turns) if not keep[t] for m in turn)
        return CompactionOutcome(kept, evicted)


class ByScore(_ComparesWithBudget):
    """Seed 003's evidence policy: by score, highest first, ties by id; one that does not fit is
    skipped and a smaller later one may still fit. Pinned passages are always kept."""

    def compact(self, entries, *, budget_tokens, count):
        return self.fill(entries, lambda kept, at, m: count(kept[:at] + [m] + kept[at:]) <= budget_tokens)

    @staticmethod
    def fill(entries: Sequence[Message], fits: Callable[[list[Message], int, Message], bool]) -> CompactionOutcome:
        """The selection, with ``fits(kept, at, m)`` saying whether ``kept`` with ``m`` inserted at ``at`` fits;
        ``kept`` becomes that list exactly when it answers yes (a caller may keep its sums by that)."""
        ranked = sorted(entries, key=lambda m: (-(m.score or 0.0), m.id or ""))
        kept = [m for m in ranked if m.pinned]
        ranks = [i for i, m in enumerate(ranked) if m.pinned]  # kept's places in the ranking, in order
        evicted = []
        for i, m in enumerate(ranked):
            if m.pinned:
                continue
            at = bisect.bisect(ranks, i)
            if fits(kept, at, m):
                kept.insert(at, m)
                ranks.insert(at, i)
            else:
                evicted.append(m)
        return CompactionOutcome(tuple(kept), tuple(evicted))


class SummariseSpan:
    """Replaces the oldest unpinned span with a summary from a summariser the caller supplies.

    The span is the oldest unpinned entries (pins among them stay, verbatim), grown until what
    remains plus room for a summary (``max_summary_tokens``, at most a quarter of the allowance) fits. A failed, cancelled or empty summary never
    becomes half a record: it raises.
    """

    def __init__(self, summariser: Summariser, *, max_summary_tokens: int = 256) -> None:
        self.summariser = summariser
        self.max_summary_tokens = max_summary_tokens
        self.cancel: threading.Event | None = None
        self.memo: dict[str, str] | None = None  # set by the assembler: one call per span per assembly

    def _room(self, budget_tokens: int) -> int:
        return min(self.max_summary_tokens, max(32, budget_tokens // 4))  # kept free for the summary

    def thresholds(self, budget_tokens: int) -> tuple[int, ...]:
        return (budget_tokens, budget_tokens - self._room(budget_tokens))

    def compact(self, entries, *, budget_tokens, count):
        entries = list(entries)
        if count(entries) <= budget_tokens:
            return CompactionOutcome(tuple(entries))
        unpinned = [i for i, m in enumerate(entries) if not m.pinned]
        if not unpinned:
            return CompactionOutcome(tuple(entries))
        # The span is the oldest unpinned entries (pins inside it stay verbatim, after the summary),
        # grown until what remains plus a summary of max_summary_tokens fits.
        room = self._room(budget_tokens)
        taken: list[int] = []
        pins_before: list[Message] = []  # the pins among the entries up to the last one taken
        for i in unpinned:
            pins_before += entries[taken[-1] + 1 if taken else 0:i]  # between two unpinned entries: pins
            taken.append(i)
            rest = pins_before + entries[i + 1:]  # every entry but those taken, in order
            if count(rest) + room <= budget_tokens:
                break
        span = [entries[i] for i in taken]
        digest = _span_hash(span)
        text = self.memo.get(digest) if self.memo is not None else None
        if text is None:
            text = _call_summariser(self.summariser, span, self.cancel)
            if self.memo is not None:
                self.memo[digest] = text
        summary_message = Message(role="user", id=f"summary-{digest[:12]}", content=SUMMARY_PREFIX + text)
        replaced = tuple(m.id or f"#{entries.index(m)}" for m in span)
        gone = set(taken)
        kept = entries[:taken[0]] + [summary_message] + [m for j, m in enumerate(entries) if j > taken[0] and j not in gone]
        return CompactionOutcome(tuple(kept), (), (Summary(summary_message.id, summary_message, replaced, digest),))


# The built-in strategies by type (a subclass may ask otherwise): their lists hold the section's own objects and notes
# they make, none with tool calls, so the counts may compare them by ``==`` (``SliceCosts._slice_cost``).
BUILT_IN = (DropOldest, PinAndFold, NewestTurns, SummariseSpan, ByScore)
