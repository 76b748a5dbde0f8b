"""Entries of a plan's section that carry one id (a caller's ids need not be unique) are each their own place and
their own trace entry: every entry is in the trace once, kept or dropped or summarised, and a kept one points at its
own message. Before, the dropped ones sharing an id with a kept one vanished from the trace and every kept one
pointed at the last message with that id."""
from __future__ import annotations

import pytest
from support import default_counter

from core import CompactionOutcome, ContextAssembler, ContextPlan, Message, SectionPlan, SummariseSpan


class Fixed:
    def summarise(self, span, *, cancel=None):
        return "the user asked about trains."


def _plan(compaction: str, budget: int = 140) -> ContextPlan:
    return ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("history", compaction=compaction),
                                 SectionPlan("question", pinned=True)),
                       budget_tokens=budget, reserve_output_tokens=20)


def _sections(ids) -> dict:
    history = [Message(role="user" if i % 2 == 0 else "assistant", content=f"message number {i} " + "word " * 10,
                       id=ids[i]) for i in range(len(ids))]
    return {"system": [Message(role="system", content="Answer.")], "history": history,
            "question": [Message(role="user", content="Why?", id="q")]}


@pytest.mark.parametrize("compaction", ["drop-oldest", "pin-and-fold", "newest-turns", "summarise-span"])
@pytest.mark.parametrize("ids", [["dup"] * 8, ["a", "b", "a", "b", "a", "b", "a", "b"], [None, "x", None, "x"] * 2])
@pytest.mark.parametrize("reference", [False, True])
def test_every_entry_is_its_own_trace_entry(compaction, ids, reference):
    sections = _sections(ids)
    result = ContextAssembler(_plan(compaction), default_counter(), reference=reference,
                              strategies={"summarise-span": SummariseSpan(Fixed())}).assemble(sections)
    history = [e for e in result.trace if e.section == "history"]
    originals = [e for e in history if not e.id.startswith(("fold-", "summary-"))]
    assert len(originals) == len(sections["history"])  # each once
    assert any(e.decision in ("dropped", "summarised") for e in originals)
    for entry in history:
        if entry.decision in ("kept", "pinned"):
            (index,) = entry.message_indices
            assert result.messages[index].content not in [result.messages[i].content for e in history
                                                          if e is not entry for i in e.message_indices]
    kept_texts = [result.messages[e.message_indices[0]].content for e in originals if e.decision == "kept"]
    assert kept_texts == [m.content for m in sections["history"] if m.content in kept_texts]  # their own, in order
    default = ContextAssembler(_plan(compaction), default_counter(),
                               strategies={"summarise-span": SummariseSpan(Fixed())}).assemble(sections)
    assert default.model_copy(update={"counting_note": None}).to_json() == result.model_copy(
        update={"counting_note": None}).to_json()


class KeepsCopies:
    """A strategy that keeps equal copies of the newest entries (another object in each one's place)."""

    def compact(self, entries, *, budget_tokens, count):
        kept = [m.model_copy() for m in entries[len(entries) // 2:]]
        return CompactionOutcome(tuple(kept), tuple(entries[:len(entries) // 2]))


def test_a_copy_a_strategy_keeps_stands_for_its_entry_once():
    sections = _sections(["dup"] * 8)
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("history", compaction="copies"),
                                 SectionPlan("question", pinned=True)), budget_tokens=140, reserve_output_tokens=20,
                       custom_strategies=("copies",))
    result = ContextAssembler(plan, default_counter(), strategies={"copies": KeepsCopies()}).assemble(sections)
    history = [e for e in result.trace if e.section == "history"]
    assert [e.decision for e in history].count("kept") == 4 and [e.decision for e in history].count("dropped") == 4


class KeepsLastCopy:
    """A strategy that keeps an equal copy of the newest entry only (the older one, with the same id, evicted)."""

    def compact(self, entries, *, budget_tokens, count):
        return CompactionOutcome((entries[-1].model_copy(),), tuple(entries[:-1]))


class EvictsThePin:
    """A strategy that keeps the unpinned entry and evicts the pinned one, which carries the same id."""

    def compact(self, entries, *, budget_tokens, count):
        return CompactionOutcome(tuple(m for m in entries if not m.pinned), tuple(m for m in entries if m.pinned))


def _custom(name: str) -> ContextPlan:
    return ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("history", compaction=name),
                                 SectionPlan("question", pinned=True)), budget_tokens=60, reserve_output_tokens=20,
                       custom_strategies=(name,))


@pytest.mark.parametrize("reference", [False, True])
def test_a_copy_stands_for_the_entry_it_equals_not_the_first_with_its_id(reference):
    history = [Message(role="user", content="a much longer message " * 12, id="dup", source="old"),
               Message(role="user", content="short", id="dup", source="new")]
    sections = {"system": [Message(role="system", content="Answer.")], "history": history,
                "question": [Message(role="user", content="Why?", id="q")]}
    result = ContextAssembler(_custom("last"), default_counter(), strategies={"last": KeepsLastCopy()},
                              reference=reference).assemble(sections)
    entries = [(e.decision, e.source) for e in result.trace if e.section == "history"]
    assert sorted(entries) == [("dropped", "old"), ("kept", "new")]


def test_a_pinned_entry_evicted_beside_a_kept_one_of_its_id_is_refused():
    from core import ContextBudgetError

    history = [Message(role="user", content="the pinned one " * 8, id="dup", pinned=True),
               Message(role="user", content="the other one " * 8, id="dup")]
    sections = {"system": [Message(role="system", content="Answer.")], "history": history,
                "question": [Message(role="user", content="Why?", id="q")]}
    with pytest.raises(ContextBudgetError, match="evicted pinned entry 'dup'"):
        ContextAssembler(_custom("unpin"), default_counter(), strategies={"unpin": EvictsThePin()}).assemble(sections)
