"""Texts a chat template writes otherwise by what they hold (``core.counters.template_rewrites``): Qwen3 leaves the
reasoning before ``</think>`` out of every reply before the last user message, Gemma 4 its thought channel. The
default assembly and the plans predict an item's cost from its text count, so such an item is counted in its
place: before, a reply with a long reasoning took the constant a short one had taught, and the default dropped a
turn the reference keeps (default against reference on the real tokenizers of ../shared/tokenizers/hf)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_hf import real
from test_plan_fast_counting import TEXT, assert_same, outcome

import core
from core import Message, SectionPlan
from core.counters.template_compare import _environment
from core.counters.template_rewrites import spellings

REASONINGS = ["ab", "cd", "a much longer line of reasoning about many things and more", "ef", "gh",
              "another long stretch of reasoning text, with commas, and clauses"]


def reply(name: str, reasoning: str, answer: str) -> str:
    if name == "gemma4":
        return f"<|channel>thought\n{reasoning}<channel|>{answer}"
    return f"<think>\n{reasoning}\n</think>\n\n{answer}"


def test_the_spellings_are_what_a_template_looks_for_inside_a_text_not_the_keys_it_asks_for():
    source = ("{% for m in messages %}{% if '</think>' in m.content %}{{ m.content.split('</think>')[-1] }}"
              "{% elif 'tool_calls' in m %}{{ m.content | replace('[X]', '') }}{% elif m.content.startswith"
              "(('<a>', '<b>')) %}{{ m.content.rstrip('\\n') }}{% endif %}{% endfor %}")
    assert spellings(source, _environment(source)) == {"</think>", "[X]", "<a>", "<b>"}
    assert spellings("{{ messages[0].content }}", _environment("x")) == frozenset()
    assert spellings("{% if %}", _environment("x")) is None
    reached = ("{% set end = '</think>' %}{% macro cut(t, mark) %}{{ t.split(mark)[-1] }}{% endmacro %}"
               "{% for m in messages %}{% if end in m.content %}{{ cut(m.content, '<|x|>') }}{% endif %}"
               "{% if m.content[:15] == '<tool_response>' %}{{ m.content | replace(old='<b>', new='') }}{% endif %}"
               "{% if '.' in m.name %}{% endif %}{% endfor %}")
    assert spellings(reached, _environment(reached)) == {"</think>", "<|x|>", "<tool_response>", "<b>"}


@pytest.mark.parametrize("name, spelled", [("qwen3", {"</think>", "<think>", "<tool_response>", "</tool_response>"}),
                                           ("gemma4", {"<|channel>", "<channel|>"}), ("phi35", set())])
def test_real_templates(name, spelled):
    counter = real(name)
    assert all(counter.rewritten_by_template(f"x {s} y") for s in spelled)
    assert not counter.rewritten_by_template("a plain reply, with <b>markup</b> and a response")


def test_the_embedded_counter_writes_every_text_as_it_is():
    assert not core.make_counter(None).rewritten_by_template("<think>\nx\n</think>\n\ny")


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
def test_history_with_reasoning_in_its_replies_is_assembled_as_the_reference_does(name):
    counter = real(name)
    history = []
    for i, reasoning in enumerate(REASONINGS):
        history += [{"role": "user", "content": f"question {i} please"},
                    {"role": "assistant", "content": reply(name, reasoning, f"answer {i}")}]
    for limit in (4000, 260, 230, 200, 180, 160, 150, 140, 130, 120):
        request = core.parse_request({"id": "x", "instructions": "Be brief.", "history": history,
                                      "current": "And now?", "context_limit": limit, "max_new_tokens": 50,
                                      "margin": 0})
        try:
            reference = core.assemble(request, counter, reference=True)
        except core.RequiredContextTooLarge:
            continue
        fast = core.assemble(request, counter)
        assert fast.to_json() == reference.to_json(), limit  # no fallback note either: counted in its place


@st.composite
def reasoning_plans(draw, name: str):
    history = []
    for n in range(draw(st.integers(1, 6))):
        history.append(Message(role="user", content=draw(TEXT) or "u", id=f"u{n}"))
        answer = draw(TEXT) or "a"
        if draw(st.booleans()):
            answer = reply(name, draw(st.sampled_from(REASONINGS)), answer)
        history.append(Message(role="assistant", content=answer, id=f"a{n}"))
    system = draw(st.booleans())
    layout = ((SectionPlan("system", pinned=True),) if system else ()) + (
        SectionPlan("recent", share=draw(st.sampled_from([None, 0.6])),
                    compaction=draw(st.sampled_from(["drop-oldest", "newest-turns", "pin-and-fold"]))),
        SectionPlan("question", pinned=True))
    data = {"recent": history, "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    if system:
        data["system"] = [Message(role="system", content="Be brief.")]
    return layout, (), data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
def test_plans_with_reasoning_in_their_replies_equal_the_reference(name):
    counter = real(name)

    @given(reasoning_plans(name))
    @settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    def check(case):
        layout, fill_order, data, where, nudge = case
        assert_same(layout, fill_order, data, counter, where, nudge)

    check()


def _same_at_every_budget(counter, layout, data):
    from core import ContextAssembler, ContextPlan

    roomy = ContextAssembler(ContextPlan(sections=layout, budget_tokens=10 ** 6), counter, reference=True).assemble(data)
    pins = sum(e.tokens for e in roomy.trace if e.decision in ("pinned", "required"))
    for budget in range(max(8, pins - 1), roomy.input_tokens + 2):
        plan = ContextPlan(sections=layout, budget_tokens=budget)
        fast, reference = (outcome(ContextAssembler(plan, counter, reference=r), data) for r in (False, True))
        if isinstance(reference, Exception):  # the pins alone over the budget: both say so
            assert str(fast) == str(reference), budget
            continue
        assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json(), budget


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
def test_what_the_question_adds_after_a_reply_with_reasoning_is_that_reply_s_own(name):
    """Without the question, a reply with reasoning ends the prompt after a user message and keeps its reasoning;
    with it, it does not: what the question adds depends on that reasoning's length. A constant learned beside
    one reply was taken beside another (found by the property above, after earlier examples had taught it)."""
    counter = real(name)
    layout = (SectionPlan("recent", compaction="drop-oldest"), SectionPlan("question", pinned=True))
    for reasoning in REASONINGS[:3]:
        recent = [Message(role="user", content="u", id="u0"), Message(role="assistant", content="a", id="a0"),
                  Message(role="user", content="more", id="u1"),
                  Message(role="assistant", content=reply(name, reasoning, "a"), id="a1")]
        _same_at_every_budget(counter, layout, {"recent": recent, "question": [Message(role="user", content="Why?",
                                                                                        id="q")]})


@pytest.mark.parametrize("question", ["<think>", "x </think> y", "<|channel>"])
def test_a_question_holding_a_spelling_costs_what_the_reference_says(question):
    """Such a question is counted from a small prompt of its own, which must hold the user message that opens the
    turn of the reply before it, as the item walk's do (``tests/test_plans_turn_context.py``)."""
    counter = real("qwen3")
    call = core.ToolCall(id="call0", name="lookup", arguments={"q": ""})
    recent = [Message(role="user", content="u", id="u0"), Message(role="assistant", tool_calls=[call], id="c0"),
              Message(role="tool", content="{}", tool_call_id="call0", id="r0"),
              Message(role="assistant", content="a", id="a0")]
    layout = (SectionPlan("recent", compaction="drop-oldest"), SectionPlan("question", pinned=True))
    _same_at_every_budget(counter, layout, {"recent": recent, "question": [Message(role="user", content=question,
                                                                                    id="q")]})
