"""Plans whose section is one long run of user messages (issue 15's "turns that are a single user message"):
Mistral joins consecutive user messages into one turn and writes the system prompt at the start of the last
run, so a strategy's lists (the run with its oldest messages dropped) each start that run elsewhere. The
default takes the last list's costs over inside a run that lasts to the end of both lists. Same bytes as the
reference at every budget, hostile texts included."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter
from test_plan_fast_counting import TEXT, Fixed, outcome, same_as_reference

from core import ContextAssembler, ContextPlan, Message, SectionPlan, SummariseSpan

STRATEGIES = ("drop-oldest", "pin-and-fold", "newest-turns", "summarise-span")


def plan_for(compaction: str, budget: int, tail: bool) -> ContextPlan:
    sections = [SectionPlan("system", pinned=True), SectionPlan("recent", compaction=compaction)]
    if tail:
        sections.append(SectionPlan("question", pinned=True))
    return ContextPlan(sections=tuple(sections), budget_tokens=budget)


def same(compaction: str, budget: int, texts: list[str], tail: bool, pinned: int | None = None) -> None:
    recent = [Message(role="user", content=t or "x", id=f"u{i}", pinned=i == pinned) for i, t in enumerate(texts)]
    data = {"system": [Message(role="system", content="Be brief.")], "recent": recent}
    if tail:
        data["question"] = [Message(role="user", content="What now?", id="q")]
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=16)}
    counter = default_counter()
    plan = plan_for(compaction, budget, tail)
    same_as_reference(plan, counter, strategies, data)


@pytest.mark.parametrize("compaction", STRATEGIES)
@pytest.mark.parametrize("tail", [True, False])
def test_a_run_of_user_messages_equals_the_reference(compaction, tail):
    texts = [f"Message {i}: the {'cluster' if i % 3 else 'disk'} moved{'.' if i % 2 else ''}" for i in range(60)]
    for budget in range(120, 700, 37):
        same(compaction, budget, texts, tail)


@given(texts=st.lists(TEXT, min_size=2, max_size=24), compaction=st.sampled_from(STRATEGIES),
       budget=st.integers(20, 400), tail=st.booleans(), pinned=st.none() | st.integers(0, 23))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_run_of_user_messages_with_hostile_texts_equals_the_reference(texts, compaction, budget, tail, pinned):
    same(compaction, budget, texts, tail, pinned)


# texts of a few kinds (their first and last characters) around hostile middles: dropped entries of one kind take
# their kind's checked constant alone (``AloneCosts.alone_costs``), a user message alone moving the system text too
KINDED = st.tuples(st.sampled_from(["Cluster", "disk", "7 nodes", "é", "[note]"]), TEXT,
                   st.sampled_from([".", "?", "", " ok", "!\n"])).map(lambda t: f"{t[0]} {t[1]}{t[2]}")


@given(turns=st.lists(st.tuples(st.sampled_from(["user", "user", "assistant"]), KINDED), min_size=2, max_size=30),
       compaction=st.sampled_from(STRATEGIES), budget=st.integers(20, 400), tail=st.booleans(),
       system=st.sampled_from(["Be brief.", "Answer in French!", "Rules:\n", "é"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_dropped_messages_of_one_kind_cost_alone_as_the_reference_says(turns, compaction, budget, tail, system):
    recent = [Message(role=role, content=text, id=f"m{i}") for i, (role, text) in enumerate(turns)]
    data = {"system": [Message(role="system", content=system)], "recent": recent}
    if tail:
        data["question"] = [Message(role="user", content="What now?", id="q")]
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=16)}
    same_as_reference(plan_for(compaction, budget, tail), default_counter(), strategies, data)
