"""``ContextAssembler``: a plan's sections under its budget, pinned content first, shares, then fills; the
result and its trace."""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..alternation import merge_turns, strict_alternation
from ..contracts import ChatMessage, ToolDefinition
from ..counting import TokenCounter
from ..errors import AssemblyCancelled, CapabilityError, ContextBudgetError
from ..neutralise import mark_result, neutralise_sections
from ..result import NOT_SENT, AssemblyResult, set_message_indices, trace_entry
from .counts import PlanCounts, PredictionMismatch, forget_constants
from .fastcounts import FastPlanCounts
from .trust import repeated_text
from .model import SUMMARY_PREFIX, ContextPlan, Message, SectionPlan, pinned
from .seams import block_of
from .strategies import (ByScore, CompactionOutcome, CompactionStrategy, DropOldest, NewestTurns, PinAndFold,
                         SummariseSpan)
from .summaries import SummaryStore


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
        (see :mod:`core.plans.counts`). ``stats``, if given, is filled with ``full_counts`` (complete-prompt
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
        blocks: dict = {}  # what every render of the prompt shares: passages' evidence blocks, ChatMessages
        render = ((lambda st, view: merge_turns(self._render(st, view, blocks))[0]) if merge
                  else (lambda st, view: self._render(st, view, blocks)))

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
            if counts_class is FastPlanCounts:
                repeated = repeated_text(self.counter, states)
                if repeated:  # what one entry adds depends on another: count it whole, and say so
                    counts_class, notes[:] = PlanCounts, [f"assembled with the reference method: {repeated}"]
            counts = counts_class(self.counter, states, tools, render)
            counts.block_memo = blocks
            runs.append(counts)
            try:
                result = self._assemble(states, counts, list(tools), budget, cancel)
            except (AssemblyCancelled, PredictionMismatch):
                raise
            except Exception:
                try:  # an error that rests on a predicted total is raised only once that total is checked
                    counts.settle()
                except PredictionMismatch:
                    raise
                except Exception:  # the committed prompt does not count: the error stands as it is
                    pass
                raise
            finished.append(states)
            return result

        notes: list[str] = []
        try:
            if reference:
                result = run(PlanCounts)
            else:
                try:
                    result = run(FastPlanCounts)
                    if notes:
                        result.counting_note = notes[0]
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
                st.outcome = counts.compact(name, strategy, tuple(entries), limit)
            lost = [m.id for m in _dropped(entries, st.outcome.entries, st.outcome.evicted) if m.pinned]
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
    def _render(states: list[_SectionState], view: Mapping[str, Sequence[Message]],
                blocks: dict | None = None) -> list[ChatMessage]:
        """Messages in plan order; passage sections go into their target's first user message. ``blocks``: what
        the assembly's renders made, by message object (the passages' evidence blocks, ``seams.block_of``'s memo,
        and each message's ``ChatMessage``), filled as they are met."""
        from ..contracts import Evidence
        from ..render import user_content

        passages: dict[str, list[Evidence]] = {}
        texts: dict[str, list[str]] = {}
        memo = {} if blocks is None else blocks
        for st in states:
            if st.plan.into is not None:
                made = [block_of(memo, m) for m in view[st.plan.name]]
                passages.setdefault(st.plan.into, []).extend(e for e, _ in made)
                texts.setdefault(st.plan.into, []).extend(b for _, b in made)
        messages: list[ChatMessage] = []
        for st in states:
            if st.plan.into is not None:
                continue
            placed = st.plan.name not in passages
            for m in view[st.plan.name]:
                hit = memo.get(("chat", id(m)))  # (every render of the assembly shares a message's ChatMessage)
                if hit is None or hit[0] is not m:
                    hit = memo[("chat", id(m))] = (m, m.chat())
                message = hit[1]
                if not placed and m.role == "user":
                    message = message.model_copy(update={"content": user_content(
                        m.content or "", passages[st.plan.name], texts[st.plan.name])})
                    placed = True
                messages.append(message)
        return messages

    @staticmethod
    def _indices(section: SectionPlan, message: Message, where: Mapping[Any, int],
                 first_user: Mapping[str, int]) -> list[int]:
        if section.into is not None:  # a passage lives in its target's user message
            return [first_user[section.into]] if section.into in first_user else []
        at = where.get(id(message))
        return [at if at is not None else where[(section.name, message.id or "")]]

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
        trace = [trace_entry(section="template", id="chat-template", decision="required", tokens=0,
                            reason="chat template, role markers and generation prefix")]
        messages, moved = self._render(states, current, getattr(counts, "block_memo", None)), None
        if getattr(self, "_merge_turns", False):
            messages, moved = merge_turns(messages)
        # where each committed entry is among the messages, by the entry itself (two entries of a section may carry
        # one id; each place is its own object), and by section and id for an equal copy a strategy kept instead
        where: dict[Any, int] = {}
        first_user: dict[str, int] = {}
        position = 0
        for st in states:
            if st.plan.into is not None:
                continue
            for m in current[st.plan.name]:
                at = position if moved is None else moved[position]
                where[id(m)] = at
                where.setdefault((st.plan.name, m.id or ""), at)
                if m.role == "user":
                    first_user.setdefault(st.plan.name, at)
                position += 1
        summaries = []
        for st in states:
            name = st.plan.name
            outcome = st.outcome or CompactionOutcome(tuple(current[name]))
            summarised = {rid: s for s in outcome.summaries for rid in s.replaces}
            summary_of = {}  # (the first summary whose message has that id, as a search in order finds it)
            for s in outcome.summaries:
                summary_of.setdefault(s.message.id, s)
            costs = counts.kept_costs(name, list(outcome.entries))
            for m, cost in zip(outcome.entries, costs):
                summary = summary_of.get(m.id) if summary_of else None
                entry = _entry(name, m, "pinned" if m.pinned else "kept", cost,
                               ("pinned: never evicted" if m.pinned else
                                f"summary replacing {len(summary.replaces)} message(s)" if summary else
                                "fits its section's allowance"), self._indices(st.plan, m, where, first_user))
                if summary is not None:
                    entry = entry.model_copy(update={"replaces": list(summary.replaces)})
                    summaries.append({"section": name, "id": summary.id, "span_hash": summary.span_hash,
                                      "replaces": list(summary.replaces), "text": (m.content or "")[len(SUMMARY_PREFIX):]})
                trace.append(entry)
            dropped = _dropped(st.entries, outcome.entries, outcome.evicted)
            out = list(zip(dropped, counts.alone_costs(name, dropped)))
            why = _compaction_reason(st, out, costs, outcome)
            for m, alone in out:
                if m.id in summarised:
                    trace.append(trace_entry(section=name, id=m.id or "", decision="summarised", tokens=alone,
                                            reason=f"replaced by summary {summarised[m.id].id}; {why}",
                                            summary_id=summarised[m.id].id))
                else:
                    trace.append(_entry(name, m, "dropped", alone, f"evicted by {why}"))
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
        from ..rendered import mark_not_rendered

        final = counts.final_rendered  # (the text of the messages counted)
        rendered = None if moved is not None or final is None else final[1]
        return mark_not_rendered(result, self.counter, ids=counts.final_ids, rendered=rendered)


def _entry(name: str, m: Message, decision: str, tokens: int, reason: str, indices: list[int] | None = None):
    """A kept or dropped entry's trace entry (``trace_entry``): score and source where the message has them, message
    indices for a kept one (set on the entry made, where they are all ``int``: as validation would set them)."""
    more = {}
    if m.score is not None:
        more["score"] = m.score
    if m.source is not None:
        more["source"] = m.source
    if indices is not None and not all(i.__class__ is int for i in indices):
        return trace_entry(name, m.id or "", decision, tokens, reason, **more, message_indices=indices)
    entry = trace_entry(name, m.id or "", decision, tokens, reason, **more)
    if indices is not None:
        set_message_indices(entry, list(indices))
    return entry


def _dropped(entries: Sequence[Message], kept: Sequence[Message], evicted: Sequence[Message] = ()) -> list[Message]:
    """The section's entries its outcome does not keep, each entry by itself (entries may share an id: each is still
    its own place and its own trace entry). A kept object that is none of the entries (a strategy's copy) stands for
    one entry: the first not yet stood for that it equals, else the first with its id that the strategy did not name
    evicted, else the first with its id; a note or summary of its own (a new id) stands for none."""
    kept_objects = {id(m) for m in kept}
    originals = {id(m) for m in entries}
    left = [m for m in entries if id(m) not in kept_objects]  # not kept as themselves
    copies = [m for m in kept if id(m) not in originals]
    if not copies:
        return left
    by_id: dict[str | None, list[Message]] = {}
    for m in left:
        by_id.setdefault(m.id, []).append(m)
    named_evicted = {id(m) for m in evicted}
    stood_for: set[int] = set()
    for copy in copies:  # (a copy stands only for an entry with its id: a note's or summary's own is new)
        candidates = [m for m in by_id.get(copy.id, ()) if id(m) not in stood_for]
        stand_in = (next((m for m in candidates if m == copy), None)
                    or next((m for m in candidates if id(m) not in named_evicted), None)
                    or next(iter(candidates), None))
        if stand_in is not None:
            stood_for.add(id(stand_in))
    return [m for m in left if id(m) not in stood_for]


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
