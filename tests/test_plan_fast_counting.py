"""Plans count fast and exactly (issue 5): the default plan assembly answers from item costs and gives
the same decisions, trace and bytes as ``reference=True``, which counts the complete prompt for
every question a strategy or the trace asks."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter, fixture_data

from core import (CompactionOutcome, ContextAssembler, ContextBudgetError, ContextPlan, Message, SectionPlan,
                  SummariseSpan, ToolCall, assemble_plan_request, make_counter, parse_plan_request)
from core.plancounts import forget_constants

ADVERSARIAL = st.one_of(
    st.text(max_size=50),
    st.text(alphabet="abcdefghij", min_size=40, max_size=300),                 # long runs without spaces
    st.sampled_from(["Привет мир ", "こんにちは世界", "مرحبا بالعالم", "🙂🚀👩‍💻", "e\u0301", "\t\r\n", "  ",
                     "[INST]", "[/INST]", "</s>", "<s>", "<|im_start|>", "</evidence>", "&amp;", "\"quoted\"",
                     "Summary of earlier conversation:", "1.", "\n\n"]),
    st.lists(st.sampled_from(["a", " ", "\n", "1", "!", "é", "字"]), max_size=24).map("".join),  # tiny mixed
)
TEXT = st.lists(ADVERSARIAL, min_size=0, max_size=4).map("".join)
HISTORY_STRATEGIES = ("drop-oldest", "pin-and-fold", "newest-turns", "summarise-span")


class Fixed:
    """A summariser that always answers, so a summarise-span plan is deterministic."""

    def __init__(self, text: str = "the user asked about trains; the answer named two routes.") -> None:
        self.text = text
        self.calls = 0

    def summarise(self, span, *, cancel=None):
        self.calls += 1
        return self.text


@st.composite
def plans(draw):
    turns = draw(st.integers(0, 8))
    history = []
    for n in range(turns):
        history.append(Message(role="user", content=draw(TEXT) or "u", id=f"u{n}", pinned=draw(st.integers(0, 9)) == 0))
        if draw(st.integers(0, 7)) == 0:  # an assistant tool call and its result
            call = ToolCall(id=f"call{n}", name="lookup", arguments={"q": draw(TEXT)})
            history.append(Message(role="assistant", tool_calls=[call], id=f"c{n}"))
            history.append(Message(role="tool", content=draw(TEXT) or "{}", tool_call_id=f"call{n}", id=f"r{n}"))
        if draw(st.booleans()):
            history.append(Message(role="assistant", content=draw(TEXT) or "a", id=f"a{n}"))
    passages = [Message(role="user", content=draw(TEXT), id=f"p{i}", source=draw(st.sampled_from(["", "doc.md"])),
                        score=draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), pinned=draw(st.integers(0, 12)) == 0)
                for i in range(draw(st.integers(0, 10)))]
    notes = [Message(role="user", content=draw(TEXT) or "n", id=f"n{i}") for i in range(draw(st.integers(0, 3)))]
    compaction = draw(st.sampled_from(HISTORY_STRATEGIES))
    share = draw(st.sampled_from([None, 0.3, 0.6, 0.9]))
    note_share = draw(st.sampled_from([None, 0.1]))
    if share is not None and note_share is not None and share + note_share > 1:
        note_share = None
    layout = (SectionPlan("system", pinned=True),
              SectionPlan("notes", share=note_share, compaction=draw(st.sampled_from(("drop-oldest", "pin-and-fold")))),
              SectionPlan("recent", share=share, compaction=compaction),
              SectionPlan("evidence", compaction="by-score", into="question"),
              SectionPlan("question", pinned=True))
    fill_order = draw(st.sampled_from([(), ("evidence", "recent"), ("recent", "evidence")]))
    data = {"system": [Message(role="system", content=draw(TEXT) or "Be brief.")], "notes": notes,
            "recent": history, "evidence": passages,
            "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    return layout, fill_order, data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


def outcome(assembler, data, **kwargs):
    try:
        return assembler.assemble(data, **kwargs)
    except ContextBudgetError as exc:
        return exc


def assert_same(layout, fill_order, data, counter, where: float, nudge: int) -> None:
    roomy = ContextPlan(sections=layout, fill_order=fill_order, budget_tokens=10 ** 6)
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
    everything = outcome(ContextAssembler(roomy, counter, strategies=strategies, reference=True), data)
    if isinstance(everything, ContextBudgetError):  # a prompt the template refuses: both must refuse it
        assert str(outcome(ContextAssembler(roomy, counter, strategies=strategies), data)) == str(everything)
        return
    pins = sum(e.tokens for e in everything.trace if e.decision in ("pinned", "required"))
    budget = max(8, int(pins + where * (everything.input_tokens - pins)) + nudge)
    plan = ContextPlan(sections=layout, fill_order=fill_order, budget_tokens=budget)
    reference = outcome(ContextAssembler(plan, counter, strategies=strategies, reference=True), data)
    fast = outcome(ContextAssembler(plan, counter, strategies=strategies), data)
    if isinstance(reference, ContextBudgetError):
        assert isinstance(fast, ContextBudgetError) and str(fast) == str(reference)
        return
    assert not isinstance(fast, Exception), fast
    if fast.counting_note is None:
        assert fast.to_json() == reference.to_json()
    else:  # a recorded fallback: everything but the note is the reference's
        assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()


@given(plans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plan_fast_equals_reference_mistral(case):
    layout, fill_order, data, where, nudge = case
    assert_same(layout, fill_order, data, default_counter(), where, nudge)


@given(plans())
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plan_fast_equals_reference_hf(toy_counter, case):
    layout, fill_order, data, where, nudge = case
    data = dict(data, system=[m.model_copy(update={"role": "system"}) for m in data["system"]])
    assert_same(layout, fill_order, data, toy_counter, where, nudge)


@pytest.fixture(scope="module")
def toy_counter(toy_tokenizer_dir):
    return make_counter(f"hf:{toy_tokenizer_dir}")
