"""By score over passages (the evidence of a plan): the default weighs each candidate from the sums of the blocks
it keeps (``PassageCosts._passage_fits`` in ``ByScore.fill``) instead of summing the list anew each time, and
gives the reference's bytes with pinned passages anywhere in the ranking, ties, several passage sections written
into one message (the others' blocks before and after it), and budgets that the passages fill exactly or miss
by a token or two (the checks near the limit)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter
from test_plan_fast_counting import TEXT, assert_same

from core import ContextAssembler, ContextPlan, Message, SectionPlan, make_counter
from core.plans import counts
from core.plans.strategies import ByScore


def same_with_no_mismatch(layout, fill_order, data, counter, where, nudge) -> None:
    """``assert_same``, and no prediction on the way disagreed with a complete count (a fallback to the reference
    would hide a wrong sum: the bytes are the reference's either way)."""
    mismatches = []
    raised = counts.PredictionMismatch.__init__

    def noted(self, *args):
        mismatches.append(args)
        raised(self, *args)

    counts.PredictionMismatch.__init__ = noted
    try:
        assert_same(layout, fill_order, data, counter, where, nudge)
    finally:
        counts.PredictionMismatch.__init__ = raised
    assert not mismatches, mismatches


@st.composite
def passage_plans(draw):
    def passages(prefix: str, n: int) -> list[Message]:
        return [Message(role="user", content=draw(TEXT) or "p", id=f"{prefix}{i}",
                        source=draw(st.sampled_from(["", "doc.md"])), score=draw(st.sampled_from([0.0, 0.5, 1.0])),
                        pinned=draw(st.integers(0, 6)) == 0) for i in range(n)]

    before = draw(st.sampled_from([None, "pinned", "by-score"]))  # another passage section into the same message
    after = draw(st.booleans())
    layout = [SectionPlan("system", pinned=True)]
    data = {"system": [Message(role="system", content="Answer from the passages.")],
            "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    if before is not None:
        layout.append(SectionPlan("background", pinned=before == "pinned", compaction="by-score", into="question",
                                  share=draw(st.sampled_from([None, 0.2]))))
        data["background"] = passages("b", draw(st.integers(1, 4)))
    layout.append(SectionPlan("evidence", compaction="by-score", into="question"))
    data["evidence"] = passages("p", draw(st.integers(0, 14)))
    if after:
        layout.append(SectionPlan("appendix", compaction="by-score", into="question"))
        data["appendix"] = passages("x", draw(st.integers(1, 3)))
    layout.append(SectionPlan("question", pinned=True))
    if draw(st.booleans()):  # a history before the question, so its user message is not the prompt's only one
        layout.insert(1, SectionPlan("recent", compaction="drop-oldest"))
        data["recent"] = [Message(role="user", content="Earlier question.", id="u0"),
                          Message(role="assistant", content="Earlier answer.", id="a0")]
    fill_order = draw(st.sampled_from([(), ("evidence",), ("appendix", "evidence") if after else ("evidence",)]))
    return tuple(layout), fill_order, data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


@given(passage_plans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_by_score_from_kept_sums_gives_the_reference_bytes(case):
    layout, fill_order, data, where, nudge = case
    same_with_no_mismatch(layout, fill_order, data, default_counter(), where, nudge)


@given(passage_plans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_by_score_from_kept_sums_gives_the_reference_bytes_hf(toy_counter, case):
    layout, fill_order, data, where, nudge = case
    same_with_no_mismatch(layout, fill_order, data, toy_counter, where, nudge)


@pytest.fixture(scope="module")
def toy_counter(toy_tokenizer_dir):
    return make_counter(f"hf:{toy_tokenizer_dir}")


def test_fill_is_the_selection_compact_makes():
    entries = [Message(role="user", content="x" * n, id=f"p{n}", score=s, pinned=n == 3)
               for n, s in ((5, 1.0), (3, 0.2), (8, 1.0), (2, 0.5), (4, 0.0))]

    def count(kept):
        return sum(len(m.content) for m in kept)

    for budget in range(0, 25):
        compacted = ByScore().compact(entries, budget_tokens=budget, count=count)
        asked = []

        def fits(kept, at, m):
            asked.append(len(kept))
            return count(kept[:at] + [m] + kept[at:]) <= budget

        assert ByScore.fill(entries, fits) == compacted
        assert asked == sorted(asked)  # kept only ever grows, by the entries it answered yes for


def test_many_passages_are_weighed_without_counting_each_whole():
    passages = [Message(role="user", content=f"Passage {i} says the train leaves at {i % 12} o'clock.", id=f"p{i}",
                        score=(i % 7) / 7, source="timetable.md") for i in range(200)]
    layout = (SectionPlan("evidence", compaction="by-score", into="question"), SectionPlan("question", pinned=True))
    data = {"evidence": passages, "question": [Message(role="user", content="When does it leave?", id="q")]}
    plan = ContextPlan(sections=layout, budget_tokens=1500)
    stats: dict = {}
    fast = ContextAssembler(plan, make_counter()).assemble(data, stats=stats)
    reference = ContextAssembler(plan, make_counter(), reference=True).assemble(data)
    assert fast.to_json() == reference.to_json()
    assert 0 < sum(e.decision == "kept" for e in fast.trace if e.section == "evidence") < 200
    assert stats["full_counts"] <= 6 and stats["predicted"] >= 200  # each candidate weighed, few counted whole
