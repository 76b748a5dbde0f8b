"""Replays and long plans equal the reference (issue 15): a replay after any limit edit, on the counter that
recorded (its caches warm), gives the bytes a fresh reference assembly gives at that limit; and a plan
whose strategies evict many entries one after another (where the fast counts resume one list's walk from
the last) gives the reference's result. Bounded to a few seconds each."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import base_request, passage
from test_plan_fast_counting import HISTORY_STRATEGIES, TEXT, Fixed

from core import (ContextAssembler, ContextBudgetError, ContextPlan, Message, RequiredContextTooLarge, SectionPlan,
                  SummariseSpan, assemble, make_counter, parse_request)
from core.plans import parse_plan_request
from core.replay import Edits, edited_request, replay, source_of

WORDS = st.sampled_from(["plan", "the", "route", "ok.", "Yes!", "12", "é", "\n", "  ", "[INST]", "—", "..."])
SHORT = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


def _same(a, b) -> bool:
    return a.model_copy(update={"counting_note": None}).to_json() == b.model_copy(update={"counting_note": None}).to_json()


def _outcome(fn):
    try:
        return fn()
    except (RequiredContextTooLarge, ContextBudgetError) as exc:
        return exc


@st.composite
def requests_and_edits(draw):
    history = []
    for n in range(draw(st.integers(0, 7))):
        history.append({"role": "user", "content": draw(SHORT), "id": f"t{n}"})
        if draw(st.integers(0, 4)):  # now and then two user messages in a row, or a trailing newline
            history.append({"role": "assistant", "content": draw(SHORT) + draw(st.sampled_from(["", "\n", " "]))})
    evidence = [passage(f"p{i}", draw(st.sampled_from([0.1, 0.5, 0.9])), text=draw(SHORT))
                for i in range(draw(st.integers(0, 8)))]
    data = base_request(history=history, evidence=evidence, context_limit=2048)
    edits = draw(st.lists(st.integers(300, 2048), min_size=1, max_size=6))  # down, up, anywhere
    return data, edits


@given(requests_and_edits())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_replay_after_any_limit_edit_is_the_reference_assembly_at_that_limit(case):
    data, limits = case
    counter = make_counter()
    request = parse_request(data)
    recorded = _outcome(lambda: assemble(request, counter))
    if isinstance(recorded, Exception):
        return
    for limit in limits:
        replayed = _outcome(lambda: replay(recorded, edits=Edits(context_limit=limit), counter=counter))
        fresh = _outcome(lambda: assemble(edited_request(source_of(request), Edits(context_limit=limit)),
                                          make_counter(), reference=True))
        if isinstance(fresh, Exception):
            assert type(replayed) is type(fresh) and str(replayed) == str(fresh)
        else:
            assert not isinstance(replayed, Exception) and _same(replayed, fresh)


@st.composite
def long_plans(draw):
    """A system section, then a long history (up to 60 entries: runs of one role, pins now and then) under one
    of the four history strategies, then the question; budgets that make the strategy evict most of it."""
    history = []
    for n in range(draw(st.integers(10, 60))):
        role = draw(st.sampled_from(["user", "assistant", "assistant"]))
        history.append(Message(role=role, content=draw(TEXT) or draw(SHORT), id=f"m{n}",
                               pinned=draw(st.integers(0, 25)) == 0))
    layout = (SectionPlan("system", pinned=True),
              SectionPlan("recent", share=draw(st.sampled_from([None, 0.5, 0.9])),
                          compaction=draw(st.sampled_from(HISTORY_STRATEGIES))),
              SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content=draw(SHORT))], "recent": history,
            "question": [Message(role="user", content=draw(SHORT), id="q")]}
    return layout, data, draw(st.floats(0.05, 0.6))


@given(long_plans())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_long_plan_that_evicts_one_entry_after_another_is_the_reference(case):
    layout, data, fraction = case
    counter = make_counter()
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
    roomy = _outcome(lambda: ContextAssembler(ContextPlan(sections=layout, budget_tokens=10 ** 6), counter,
                                              strategies=strategies, reference=True).assemble(data))
    if isinstance(roomy, Exception):
        return
    budget = max(16, int(roomy.input_tokens * fraction))
    plan = ContextPlan(sections=layout, budget_tokens=budget)
    reference = _outcome(lambda: ContextAssembler(plan, make_counter(), strategies=strategies,
                                                  reference=True).assemble(data))
    fast = _outcome(lambda: ContextAssembler(plan, counter, strategies=strategies).assemble(data))
    if isinstance(reference, Exception):
        assert type(fast) is type(reference) and str(fast) == str(reference)
    else:
        assert not isinstance(fast, Exception) and _same(fast, reference)


@given(long_plans(), st.lists(st.floats(0.05, 1.2), min_size=1, max_size=4))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_plan_replayed_at_new_budgets_is_the_reference_at_each(case, fractions):
    layout, data, fraction = case
    if any(s.compaction == "summarise-span" for s in layout):  # a recorded plan replays its recorded summaries
        return
    plan = ContextPlan(sections=layout, budget_tokens=4096)
    request = parse_plan_request({"kind": "plan", "plan": plan.model_dump(mode="json"),
                                  "sections": {k: [m.model_dump(mode="json") for m in v] for k, v in data.items()}})
    counter = make_counter()
    recorded = _outcome(lambda: replay(request, counter=counter))
    if isinstance(recorded, Exception):
        return
    for f in fractions:
        budget = max(16, int(recorded.input_tokens * f))
        replayed = _outcome(lambda: replay(recorded, edits=Edits(context_limit=budget), counter=counter))
        edited = edited_request(request, Edits(context_limit=budget))
        fresh = _outcome(lambda: ContextAssembler(edited.plan, make_counter(), reference=True).assemble(edited.sections))
        if isinstance(fresh, Exception):
            assert type(replayed) is type(fresh) and str(replayed) == str(fresh)
        else:
            assert not isinstance(replayed, Exception)
            # the replay also carries the plan request it came from; the decisions and bytes are the reference's
            assert _same(replayed.model_copy(update={"plan_request": None, "request_id": None}),
                         fresh.model_copy(update={"plan_request": None, "request_id": None}))
