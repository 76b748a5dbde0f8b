"""Plans of named sections (seed 002): shares of the whole budget, pins, compaction strategies.

    plan = ContextPlan(sections=(SectionPlan("system", share=0.1),
                                 SectionPlan("constraints", share=0.2, pinned=True),
                                 SectionPlan("recent", share=0.6, compaction="summarise-span")),
                       budget_tokens=8192, reserve_output_tokens=1024)
    result = ContextAssembler(plan, counter, strategies={"summarise-span": SummariseSpan(summariser)}
                              ).assemble({"system": [...], "constraints": [...], "recent": history})

Sections appear in the prompt in plan order. The budget is ``budget_tokens`` or the counter's
declared context window, minus ``reserve_output_tokens``, read on every assembly. Pinned content
(a pinned message, or every message of a pinned section) gets its room first and is never
evicted; the rest of the budget is split by shares, each a fraction of that whole remainder,
never of what earlier sections left. Sections without a share fill what the shares leave, in
``fill_order``. Every count is of the complete prompt through the counter's chat template.
"""
from __future__ import annotations

import bisect
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .contracts import ChatMessage, ToolCall, ToolDefinition, problems_from
from .alternation import merge_turns, strict_alternation
from .counting import TokenCounter
from .neutralise import mark_result, neutralise_sections
from .plancounts import FastPlanCounts, PlanCounts, PredictionMismatch, forget_constants
from .errors import (AssemblyCancelled, CapabilityError, ContextBudgetError,
                     RequestError)
from .result import NOT_SENT, AssemblyResult, TraceEntry
from .summaries import (HttpSummariser, RecordedSummariser, Summariser, SummaryStore,  # noqa: F401 - re-exported
                        _call_summariser, _span_hash)

BUILTIN_STRATEGIES = ("drop-oldest", "pin-and-fold", "summarise-span", "newest-turns", "by-score")
SUMMARY_PREFIX = "Summary of earlier conversation: "


class Message(BaseModel):
    """A message of a plan section. ``pinned`` travels on the message, so it survives a copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    id: str | None = None
    pinned: bool = False
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    score: float | None = Field(default=None, allow_inf_nan=False)  # for passages ranked by-score
    source: str | None = None

    def chat(self) -> ChatMessage:
        return ChatMessage(role=self.role, content=self.content, tool_calls=self.tool_calls,
                           tool_call_id=self.tool_call_id)


def pinned(message: Message) -> Message:
    """The same message, pinned: no strategy may evict it."""
    return message.model_copy(update={"pinned": True})


class SectionPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    share: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False, strict=True)
    pinned: bool = False
    compaction: str = "drop-oldest"
    # Passages: rendered as escaped <evidence> blocks into the first user message of section ``into``.
    into: str | None = None

    def __init__(self, name: str | None = None, /, **data: Any) -> None:  # SectionPlan("recent", share=0.6)
        if name is not None:
            data["name"] = name
        super().__init__(**data)


class ContextPlan(BaseModel):
    """Named sections in prompt order, the budget and the output reserve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sections: tuple[SectionPlan, ...] = Field(min_length=1)
    budget_tokens: int | None = Field(default=None, gt=0, strict=True)
    reserve_output_tokens: int = Field(default=0, ge=0, strict=True)
    fill_order: tuple[str, ...] = ()
    custom_strategies: tuple[str, ...] = ()  # names of strategies the caller will supply

    @model_validator(mode="after")
    def _coherent(self) -> "ContextPlan":
        names = [s.name for s in self.sections]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise ValueError(f"section {duplicate!r} is declared twice")
        known = set(BUILTIN_STRATEGIES) | set(self.custom_strategies)
        for section in self.sections:
            if section.compaction not in known:
                raise ValueError(f"section {section.name!r} names an unknown compaction strategy "
                                 f"{section.compaction!r} (built in: {', '.join(BUILTIN_STRATEGIES)}; "
                                 "declare your own in custom_strategies)")
        total = sum(s.share or 0 for s in self.sections)
        if total > 1 + 1e-9:
            raise ValueError(f"section shares add up to {total:g}, more than the whole budget (1)")
        for section in self.sections:
            if section.into is not None and (section.into not in names or section.into == section.name):
                raise ValueError(f"section {section.name!r} is placed into {section.into!r}, which is not "
                                 "another section of the plan")
        unknown = [n for n in self.fill_order if n not in names]
        if unknown:
            raise ValueError(f"fill_order names {unknown[0]!r}, which the plan does not declare")
        if self.budget_tokens is not None and self.reserve_output_tokens >= self.budget_tokens:
            raise ValueError(f"reserve_output_tokens ({self.reserve_output_tokens}) leaves nothing of "
                             f"budget_tokens ({self.budget_tokens})")
        return self

    def section(self, name: str) -> SectionPlan:
        return next(s for s in self.sections if s.name == name)


def parse_plan(data: Any, *, source: str | None = None) -> ContextPlan:
    try:
        return ContextPlan.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


# ---------------------------------------------------------------------------------------------
# Strategies

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
        stopped = False
        for t in reversed(range(len(turns))):
            if keep[t] or stopped:
                continue
            candidate = [m for u, turn in enumerate(turns) if keep[u] or u == t for m in turn]
            if count(candidate) <= budget_tokens:
                keep[t] = True
            else:
                stopped = True
        kept = tuple(m for t, turn in enumerate(turns) if keep[t] for m in turn)
        evicted = tuple(m for t, turn in enumerate(turns) if not keep[t] for m in turn)
        return CompactionOutcome(kept, evicted)


class ByScore(_ComparesWithBudget):
    """Seed 003's evidence policy: by score, highest first, ties by id; one that does not fit is
    skipped and a smaller later one may still fit. Pinned passages are always kept."""

    def compact(self, entries, *, budget_tokens, count):
        ranked = sorted(entries, key=lambda m: (-(m.score or 0.0), m.id or ""))
        kept = [m for m in ranked if m.pinned]
        ranks = [i for i, m in enumerate(ranked) if m.pinned]  # kept's places in the ranking, in order
        evicted = []
        for i, m in enumerate(ranked):
            if m.pinned:
                continue
            at = bisect.bisect(ranks, i)
            candidate = kept[:at] + [m] + kept[at:]
            if count(candidate) <= budget_tokens:
                kept = candidate
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
        for i in unpinned:
            taken.append(i)
            rest = [m for j, m in enumerate(entries) if j not in taken]
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
        kept = [m for j, m in enumerate(entries) if j < taken[0]] + [summary_message] + \
               [m for j, m in enumerate(entries) if j > taken[0] and j not in taken]
        return CompactionOutcome(tuple(kept), (), (Summary(summary_message.id, summary_message, replaced, digest),))


# ---------------------------------------------------------------------------------------------
# The assembler


@dataclass
class _SectionState:
    plan: SectionPlan
    entries: list[Message]
    outcome: CompactionOutcome | None = None
    allowance: int | None = None
    ids: list[str] = field(default_factory=list)


class ContextAssembler:
    """Assembles named sections under a plan. Strategies the plan names must all be available here."""

    def __init__(self, plan: ContextPlan, counter: TokenCounter, *,
                 strategies: Mapping[str, CompactionStrategy] | None = None,
                 store: SummaryStore | None = None, scope: str | None = None, reference: bool = False) -> None:
        self.plan = plan
        self.reference = reference  # count the complete prompt for every question (seed 002's method)
        self.counter = counter
        self.strategies: dict[str, CompactionStrategy] = {
            "drop-oldest": DropOldest(), "pin-and-fold": PinAndFold(), "newest-turns": NewestTurns(),
            "by-score": ByScore()}
        self.strategies.update(strategies or {})
        for section in plan.sections:
            if section.compaction not in self.strategies:
                hint = " (supply SummariseSpan(summariser))" if section.compaction == "summarise-span" else ""
                raise ValueError(f"section {section.name!r} uses strategy {section.compaction!r}, which this "
                                 f"assembler does not have{hint}")
            if not callable(getattr(self.strategies[section.compaction], "compact", None)):
                raise ValueError(f"strategy {section.compaction!r} has no compact() method")
        if (store is None) != (scope is None):
            raise ValueError("a summary store needs a scope, and a scope needs a store")
        self.store = store
        self.scope = scope

    def budget(self) -> int:
        """Read on every assembly, so a counter swapped for one with a smaller window is honoured."""
        window = self.plan.budget_tokens or self.counter.declared_context_window
        if window is None:
            raise CapabilityError(f"the plan sets no budget_tokens and {self.counter.name} declares no "
                                  "context window: there is no safe guess")
        budget = window - self.plan.reserve_output_tokens
        if budget <= 0:
            raise ContextBudgetError(f"reserve_output_tokens {self.plan.reserve_output_tokens} leaves nothing of "
                                     f"the {window}-token window")
        return budget

    def assemble(self, sections: Mapping[str, Sequence[Message | Mapping[str, Any]]], *,
                 tools: Sequence[ToolDefinition] = (), cancel: threading.Event | None = None,
                 reference: bool | None = None, stats: dict | None = None) -> AssemblyResult:
        """Assemble ``sections`` under the plan. ``reference=True`` counts the complete prompt for every
        question (seed 002's method); the default answers from item costs and reaches the same result
        (see :mod:`core.plancounts`). ``stats``, if given, is filled with ``full_counts`` (complete-prompt
        tokenisations) and ``item_counts`` (single-text tokenisations)."""
        budget = self.budget()
        declared = [s.name for s in self.plan.sections]
        unknown = [name for name in sections if name not in declared]
        if unknown:
            raise ValueError(f"messages under {unknown[0]!r}, which the plan does not declare "
                             f"(declared: {', '.join(declared)})")
        reference = self.reference if reference is None else reference
        sections, neutralised = neutralise_sections(sections, self.counter)  # tool text never a control token
        summaries: dict[str, str] = {}  # one summary call per span, even if assembly starts again
        for strategy in self.strategies.values():
            if hasattr(strategy, "cancel"):
                strategy.cancel = cancel
            if isinstance(strategy, SummariseSpan):
                strategy.memo = summaries
        items_before = self.counter.item_counts
        runs: list[PlanCounts] = []
        finished: list[list[_SectionState]] = []
        # A template that demands strict user/assistant alternation (Mistral Nemo, Gemma 3) refuses two user
        # messages in a row, which pins and folds produce: such messages are sent joined, as one turn.
        merge = self._merge_turns = strict_alternation(self.counter)
        render = (lambda st, view: merge_turns(self._render(st, view))[0]) if merge else self._render

        def run(counts_class: type[PlanCounts]) -> AssemblyResult:
            states = [_SectionState(s, [self._message(m, s) for m in sections.get(s.name, ())])
                      for s in self.plan.sections]
            seen: set[int] = set()
            for st in states:
                st.ids = [m.id or f"{st.plan.name}-{i}" for i, m in enumerate(st.entries)]
                st.entries = [m if m.id else m.model_copy(update={"id": st.ids[i]}) for i, m in enumerate(st.entries)]
                # one object passed twice becomes two equal ones: each place in the prompt is its own entry
                st.entries = [m if id(m) not in seen and not seen.add(id(m)) else m.model_copy()
                              for m in st.entries]
            if counts_class is FastPlanCounts and (merge or not FastPlanCounts.covers(self.counter, states, tools)):
                counts_class = PlanCounts  # a layout the item model does not cover: count it whole
            counts = counts_class(self.counter, states, tools, render)
            runs.append(counts)
            result = self._assemble(states, counts, list(tools), budget, cancel)
            finished.append(states)
            return result

        try:
            if reference:
                result = run(PlanCounts)
            else:
                try:
                    result = run(FastPlanCounts)
                except PredictionMismatch as exc:
                    forget_constants(self.counter)
                    result = run(PlanCounts)
                    result.counting_note = f"assembled with the reference method: {exc}"
        finally:
            for strategy in self.strategies.values():
                if isinstance(strategy, SummariseSpan):
                    strategy.memo = None
            if stats is not None:
                stats["full_counts"] = sum(c.full_counts for c in runs)
                stats["item_counts"] = self.counter.item_counts - items_before + sum(c.probe_counts for c in runs)
                stats["predicted"] = sum(c.predicted for c in runs)
        if self.store is not None and self.scope is not None:
            records = [(st.plan.name, s) for st in finished[-1] if st.outcome for s in st.outcome.summaries]
            if records:
                self.store.write(self.scope, records)
        return mark_result(result, neutralised)

    def _assemble(self, states: list[_SectionState], counts: PlanCounts, tools: list[ToolDefinition], budget: int,
                  cancel: threading.Event | None) -> AssemblyResult:
        current = counts.current
        pinned_total = counts.pinned_total()
        if pinned_total > budget:
            names = [f"{st.plan.name}:{m.id}" for st in states for m in st.entries if m.pinned]
            raise ContextBudgetError(
                f"pinned content alone needs {pinned_total} tokens, {pinned_total - budget} over the budget of "
                f"{budget} (pinned: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''})")
        available = budget - pinned_total
        for st in states:
            if st.plan.share is not None:
                st.allowance = math.floor(st.plan.share * available)
        order = [st for st in states if st.plan.share is not None]
        fill = [self.plan.section(n) for n in self.plan.fill_order] + [s for s in self.plan.sections]
        seen: set[str] = set()
        for plan_section in fill:
            st = next(x for x in states if x.plan is plan_section)
            if st.plan.share is None and st.plan.name not in seen:
                seen.add(st.plan.name)
                order.append(st)
        for st in order:
            if cancel is not None and cancel.is_set():
                raise AssemblyCancelled("assembly cancelled")
            name = st.plan.name
            if all(m.pinned for m in st.entries):  # nothing a strategy could change
                st.outcome = CompactionOutcome(tuple(st.entries))
                if st.allowance is not None:  # its pins had their room first; the share comes on top
                    st.allowance += counts.pins_cost(name)
                continue
            pins_cost = counts.pins_cost(name)
            # a section without a share fills what the shared sections and earlier fills left
            free = st.allowance if st.allowance is not None else budget - counts.running_total()
            limit = pins_cost + free
            entries = st.entries
            if counts.cost(name, entries, (limit,)) <= limit:
                st.outcome = CompactionOutcome(tuple(entries))
            else:
                strategy = self.strategies[st.plan.compaction]
                st.outcome = strategy.compact(tuple(entries), budget_tokens=limit,
                                              count=counts.strategy_count(name, strategy, limit))
            kept_ids = {m.id for m in st.outcome.entries}
            lost = [m.id for m in entries if m.pinned and m.id not in kept_ids]
            if lost:
                raise ContextBudgetError(f"strategy {st.plan.compaction!r} evicted pinned entry {lost[0]!r} "
                                         f"of section {name!r}")
            counts.commit(name, st.outcome.entries)
            st.allowance = limit
        # A strategy (a third party's included) may not hand back more than it was allowed.
        for st in order:
            if st.allowance is None:
                continue
            used = counts.cost(st.plan.name, current[st.plan.name], (st.allowance,))
            if used > st.allowance:
                used = counts.confirmed(st.plan.name, current[st.plan.name], used)
                raise ContextBudgetError(f"strategy {st.plan.compaction!r} returned {used} tokens for section "
                                         f"{st.plan.name!r}, over its allowance of {st.allowance}")
        input_tokens = counts.final_total()
        if input_tokens > budget:
            raise ContextBudgetError(f"the assembled prompt counts {input_tokens} tokens, over the budget of {budget}")
        return self._result(states, counts, tools, input_tokens, budget)

    @staticmethod
    def _render(states: list[_SectionState], view: Mapping[str, Sequence[Message]]) -> list[ChatMessage]:
        """Messages in plan order; passage sections go into their target's first user message."""
        from .contracts import Evidence
        from .render import user_content

        passages: dict[str, list[Evidence]] = {}
        for st in states:
            if st.plan.into is not None:
                passages.setdefault(st.plan.into, []).extend(
                    Evidence(id=m.id or "", source=m.source or "", text=m.content or "", score=m.score or 0.0)
                    for m in view[st.plan.name])
        messages: list[ChatMessage] = []
        for st in states:
            if st.plan.into is not None:
                continue
            placed = st.plan.name not in passages
            for m in view[st.plan.name]:
                message = m.chat()
                if not placed and m.role == "user":
                    message = message.model_copy(update={"content": user_content(m.content or "",
                                                                                  passages[st.plan.name])})
                    placed = True
                messages.append(message)
        return messages

    @staticmethod
    def _indices(section: SectionPlan, message: Message, where: Mapping[tuple[str, str], int],
                 first_user: Mapping[str, int]) -> list[int]:
        if section.into is not None:  # a passage lives in its target's user message
            return [first_user[section.into]] if section.into in first_user else []
        return [where[(section.name, message.id or "")]]

    @staticmethod
    def _message(value: Message | Mapping[str, Any], section: SectionPlan) -> Message:
        message = value if isinstance(value, Message) else Message.model_validate(dict(value))
        if section.pinned and not message.pinned:
            message = pinned(message)
        return message

    def _result(self, states, counts: PlanCounts, tools, input_tokens, budget) -> AssemblyResult:
        """The result and its trace. A partial prompt no template accepts costs nothing in the trace
        (its tokens stay in the template entry, so the figures still add up)."""
        current = counts.current
        trace = [TraceEntry(section="template", id="chat-template", decision="required", tokens=0,
                            reason="chat template, role markers and generation prefix")]
        messages, moved = self._render(states, current), None
        if getattr(self, "_merge_turns", False):
            messages, moved = merge_turns(messages)
        where: dict[tuple[str, str], int] = {}
        first_user: dict[str, int] = {}
        position = 0
        for st in states:
            if st.plan.into is not None:
                continue
            for m in current[st.plan.name]:
                where[(st.plan.name, m.id or "")] = position
                if moved is not None:
                    where[(st.plan.name, m.id or "")] = moved[position]
                if m.role == "user":
                    first_user.setdefault(st.plan.name, where[(st.plan.name, m.id or "")])
                position += 1
        summaries = []
        for st in states:
            name = st.plan.name
            outcome = st.outcome or CompactionOutcome(tuple(current[name]))
            summarised = {rid: s for s in outcome.summaries for rid in s.replaces}
            costs = counts.kept_costs(name, list(outcome.entries))
            for m, cost in zip(outcome.entries, costs):
                summary = next((s for s in outcome.summaries if s.message.id == m.id), None)
                entry = TraceEntry(section=name, id=m.id or "", decision="pinned" if m.pinned else "kept", tokens=cost,
                                   reason=("pinned: never evicted" if m.pinned else
                                           f"summary replacing {len(summary.replaces)} message(s)" if summary else
                                           "fits its section's allowance"),
                                   message_indices=self._indices(st.plan, m, where, first_user),
                                   **({"score": m.score} if m.score is not None else {}),
                                   **({"source": m.source} if m.source is not None else {}))
                if summary is not None:
                    entry = entry.model_copy(update={"replaces": list(summary.replaces)})
                    summaries.append({"section": name, "id": summary.id, "span_hash": summary.span_hash,
                                      "replaces": list(summary.replaces), "text": (m.content or "")[len(SUMMARY_PREFIX):]})
                trace.append(entry)
            kept_ids = {m.id for m in outcome.entries}
            out = [(m, counts.alone_cost(name, m)) for m in st.entries if m.id not in kept_ids]
            why = _compaction_reason(st, out, costs, outcome)
            for m, alone in out:
                if m.id in summarised:
                    trace.append(TraceEntry(section=name, id=m.id or "", decision="summarised", tokens=alone,
                                            reason=f"replaced by summary {summarised[m.id].id}; {why}",
                                            summary_id=summarised[m.id].id))
                else:
                    trace.append(TraceEntry(section=name, id=m.id or "", decision="dropped", tokens=alone,
                                            reason=f"evicted by {why}"))
        sent = sum(e.tokens for e in trace[1:] if e.decision not in NOT_SENT)
        trace[0] = trace[0].model_copy(update={"tokens": input_tokens - sent})
        window = self.plan.budget_tokens or self.counter.declared_context_window or budget
        result = AssemblyResult(
            strategy="plan", messages=messages, tools=list(tools), input_tokens=input_tokens, input_budget=budget,
            remaining_tokens=budget - input_tokens, context_limit=window, max_new_tokens=self.plan.reserve_output_tokens,
            margin=0, fill_order=list(self.plan.fill_order), trace=trace, counter=self.counter.identity,
            plan=self.plan.model_dump(mode="json"),
            section_outcomes=[_outcome_record(st) for st in states])
        if summaries:
            result.summaries = summaries  # type: ignore[attr-defined]
        from .rendered import mark_not_rendered

        return mark_not_rendered(result, self.counter, ids=counts.final_ids)


def _compaction_reason(st: _SectionState, out: list[tuple[Message, int]], kept_costs: list[int],
                       outcome: CompactionOutcome) -> str:
    """Why a strategy took entries out, with the numbers: "pin-and-fold: recent over its 85% share
    (214-token allowance); 19 of 20 unpinned items, 262 of 275 tokens". A section is only ever compacted
    when it is over its own allowance, whatever the whole budget has left."""
    over = (f"over its {st.plan.share:.0%} share" if st.plan.share is not None
            else "over the room the other sections left")
    allowance = f" ({st.allowance}-token allowance)" if st.allowance is not None else ""
    original = {m.id for m in st.entries}
    kept_unpinned = [cost for m, cost in zip(outcome.entries, kept_costs) if not m.pinned and m.id in original]
    taken = sum(cost for _, cost in out)
    unpinned = len([m for m in st.entries if not m.pinned])
    return (f"{st.plan.compaction}: {st.plan.name} {over}{allowance}; {len(out)} of {unpinned} unpinned items, "
            f"{taken} of {taken + sum(kept_unpinned)} tokens")


def _outcome_record(st: _SectionState) -> dict[str, Any]:
    outcome = st.outcome or CompactionOutcome(())
    return {"section": st.plan.name, "declared": True, "empty": not st.entries, "entries": len(st.entries),
            "kept": len([m for m in outcome.entries if not any(s.message.id == m.id for s in outcome.summaries)]),
            "evicted": len(outcome.evicted), "summarised": sum(len(s.replaces) for s in outcome.summaries),
            "allowance": st.allowance}


# ---------------------------------------------------------------------------------------------
# Seed 003's request, expressed as a plan


def plan_from_request(request) -> tuple[ContextPlan, dict[str, list[Message]], list[ToolDefinition]]:
    """The plan, sections and tools that assemble ``request`` (a seed-003 ``Request``) with the same
    decisions as ``assemble(request)``: required parts pinned, history by whole turns newest first,
    passages by score into the question's message, the two filling in ``fill_order``. Passages and
    tools the caller may not see (``core.permissions``) never become plan messages."""
    from .permissions import permitted

    request = permitted(request)[0]
    sections: dict[str, list[Message]] = {
        "instructions": [Message(role="system", content=request.instructions, id="instructions")]
        if request.instructions else [],
        "history": [],
        "current": [Message(role="user", content=request.current, id="question")],
        "tool_exchanges": [],
        "evidence": [Message(role="user", content=p.text, id=p.id, source=p.source, score=p.score)
                     for p in request.evidence],
    }
    for turn_id, turn in zip(request.turn_ids(), request.history_turns()):
        for k, m in enumerate(turn):
            sections["history"].append(Message(role=m.role, content=m.content, tool_calls=m.tool_calls,
                                               tool_call_id=m.tool_call_id, id=turn_id if k == 0 else f"{turn_id}/{k}"))
    for x, exchange in enumerate(request.tool_exchanges):
        results = {r.tool_call_id: r for r in exchange.results}
        sections["tool_exchanges"].append(Message(role="assistant", content=exchange.content,
                                                  tool_calls=exchange.calls, id=f"exchange-{x}"))
        for call in exchange.calls:
            sections["tool_exchanges"].append(Message(role="tool", content=results[call.id].content,
                                                      tool_call_id=call.id, id=f"exchange-{x}/{call.id}"))
    plan = ContextPlan(
        sections=(SectionPlan("instructions", pinned=True), SectionPlan("history", compaction="newest-turns"),
                  SectionPlan("current", pinned=True), SectionPlan("tool_exchanges", pinned=True),
                  SectionPlan("evidence", compaction="by-score", into="current")),
        budget_tokens=request.context_limit - request.margin, reserve_output_tokens=request.max_new_tokens,
        fill_order=tuple(request.fill_order))
    return plan, sections, list(request.tools)


# ---------------------------------------------------------------------------------------------
# A plan request file: what `context-assembler assemble` and the inspector open


class RecordedSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    span_hash: str = Field(min_length=64, max_length=64)
    text: str


class PlanRequest(BaseModel):
    """``{"kind": "plan", "plan": {...}, "sections": {name: [message, ...]}, "tools": [...]}``.
    ``summaries`` (optional) are recorded summaries a summarise-span section replays by span hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["plan"] = "plan"
    id: str | None = None
    plan: ContextPlan
    sections: dict[str, list[Message]] = Field(default_factory=dict)
    tools: list[ToolDefinition] = Field(default_factory=list)
    summaries: list[RecordedSummary] = Field(default_factory=list)

    @model_validator(mode="after")
    def _declared(self) -> "PlanRequest":
        declared = [s.name for s in self.plan.sections]
        unknown = [name for name in self.sections if name not in declared]
        if unknown:
            raise ValueError(f"messages under {unknown[0]!r}, which the plan does not declare")
        return self


def looks_like_plan_request(data: Any) -> bool:
    return isinstance(data, dict) and (data.get("kind") == "plan" or ("plan" in data and "sections" in data))


def parse_plan_request(data: Any, *, source: str | None = None) -> PlanRequest:
    try:
        return PlanRequest.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


def assemble_plan_request(request: PlanRequest, counter: TokenCounter, *, summariser: Summariser | None = None,
                          store: SummaryStore | None = None, scope: str | None = None,
                          cancel: threading.Event | None = None, reference: bool = False,
                          stats: dict | None = None) -> AssemblyResult:
    """Assemble a plan request. A summarise-span section uses ``summariser`` if given, else the
    summaries recorded in the request (so a recorded run replays without a model), else it is refused.
    ``reference`` and ``stats`` are those of :meth:`ContextAssembler.assemble`."""
    strategies: dict[str, CompactionStrategy] = {}
    if any(s.compaction == "summarise-span" for s in request.plan.sections):
        if summariser is None and request.summaries:
            summariser = RecordedSummariser({s.span_hash: s.text for s in request.summaries})
        if summariser is None:
            raise ValueError("a section uses summarise-span: configure a summariser (an HTTP endpoint) or "
                             "record summaries in the request")
        strategies["summarise-span"] = SummariseSpan(summariser)
    assembler = ContextAssembler(request.plan, counter, strategies=strategies, store=store, scope=scope)
    result = assembler.assemble(request.sections, tools=request.tools, cancel=cancel, reference=reference, stats=stats)
    result.request_id = request.id
    recorded = list((result.model_extra or {}).get("summaries") or [])
    known = {s["span_hash"] for s in recorded}
    replay = [s.model_dump(mode="json") for s in request.summaries if s.span_hash not in known]
    carried = request.model_copy(update={"summaries": [RecordedSummary.model_validate(s) for s in recorded + replay]})
    result.plan_request = carried.model_dump(mode="json", exclude_none=True)  # type: ignore[attr-defined]
    return result
