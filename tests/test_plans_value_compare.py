"""Plans under a chat template that compares messages by value (issue 15): Mistral Nemo's real template writes
the tool list beside every user message equal to the last one (``message == user_messages[-1]``), so in a plan
whose history repeats the question's text what one entry adds depends on another. The default plan assembly
must give the reference's bytes, per-item figures included, there too."""
from __future__ import annotations

import pytest
from support import SHARED

from core import ContextAssembler, ContextBudgetError, ContextPlan, Message, SectionPlan, SummariseSpan, ToolDefinition, make_counter

NEMO = SHARED / "tokenizers" / "hf" / "mistral-nemo"
TOOLS = [ToolDefinition(name="search", description="Search the docs.",
                        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})]
QUESTION = "When does the last bus leave the station?"


class Fixed:
    def summarise(self, span, *, cancel=None):
        return "the user asked about buses."


@pytest.fixture(scope="module")
def nemo():
    if not (NEMO / "tokenizer.json").exists():
        pytest.skip(f"{NEMO} is absent (the real Mistral Nemo tokenizer)")
    return make_counter(f"hf:{NEMO}")


def plan_data(compaction: str, budget: int, *, passages: bool) -> tuple[ContextPlan, dict]:
    history = []
    for t in range(6):  # every other turn asks the question again, word for word
        history.append(Message(role="user", content=QUESTION if t % 2 else f"Where is stop {t}?", id=f"u{t}"))
        history.append(Message(role="assistant", content=f"Stop {t} is by the river.", id=f"a{t}"))
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True),
                                 SectionPlan("recent", share=0.6, compaction=compaction),
                                 SectionPlan("evidence", compaction="by-score", into="question"),
                                 SectionPlan("question", pinned=True)), budget_tokens=budget)
    evidence = [Message(role="user", content=f"Timetable {i}: the bus leaves at {10 + i}.", id=f"p{i}",
                        source="timetable.md", score=i / 10) for i in range(4)] if passages else []
    return plan, {"system": [Message(role="system", content="Answer from the timetable.")], "recent": history,
                  "evidence": evidence, "question": [Message(role="user", content=QUESTION, id="q")]}


def outcome(assembler, data):
    try:
        return assembler.assemble(data, tools=TOOLS)
    except ContextBudgetError as exc:  # a budget too small, or a prompt the template refuses
        return exc


def both(nemo, plan, data):
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
    slow = outcome(ContextAssembler(plan, nemo, strategies=strategies, reference=True), data)
    fast = outcome(ContextAssembler(plan, nemo, strategies=strategies), data)
    return slow, fast


def assert_reference_figures(counter, compaction: str, passages: bool, marker: str, note: str | None) -> None:
    """At budgets from the pins to everything, the default gives the reference's bytes and per-item figures;
    ``marker`` is written beside each user message equal to the last (1 + the 3 repeats, or 1 with
    passages: the question's message then holds their blocks too, and no history turn equals it)."""
    roomy, data = plan_data(compaction, 10 ** 5, passages=passages)
    slow, _ = both(counter, roomy, data)
    assert counter.render_text(slow.messages, TOOLS).count(marker) == (1 if passages else 4)
    pins = sum(e.tokens for e in slow.trace if e.decision in ("pinned", "required"))
    checked = 0
    for budget in sorted({pins + k * (slow.input_tokens - pins) // 8 for k in range(9)} | {slow.input_tokens - 3}):
        plan, _ = plan_data(compaction, budget, passages=passages)
        slow, fast = both(counter, plan, data)
        if isinstance(slow, ContextBudgetError):  # both refuse it alike
            assert isinstance(fast, ContextBudgetError) and str(fast) == str(slow)
            continue
        checked += 1
        assert fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json()
        assert [(e.id, e.decision, e.tokens) for e in fast.trace] == [(e.id, e.decision, e.tokens) for e in slow.trace]
        if note is not None:
            assert note in fast.counting_note  # counted whole, and the result says why
    assert checked  # at least one budget assembles


@pytest.mark.parametrize("compaction", ["drop-oldest", "pin-and-fold", "newest-turns", "summarise-span"])
@pytest.mark.parametrize("passages", [False, True])
def test_a_history_that_repeats_the_question_under_nemo_gives_the_reference_figures(nemo, compaction, passages):
    # (Nemo demands alternating turns: plans are counted whole under it, their turns joined)
    assert_reference_figures(nemo, compaction, passages, "[AVAILABLE_TOOLS]", None)


# A template that compares messages by value as Nemo's does, without Nemo's demand that turns alternate (under
# which plans are counted whole anyway, their turns joined): here the default's item model is what answers.
VALUE_TEMPLATE = r"""
{%- set user_messages = messages | selectattr("role", "equalto", "user") | list -%}
{{- bos_token -}}
{%- for message in messages -%}
    {%- if message.role == 'user' and tools and message == user_messages[-1] -%}
        {{- '<|im_start|>system\n' + (tools | tojson) + '<|im_end|>\n' -}}
    {%- endif -%}
    {{- '<|im_start|>' + message.role + '\n' + (message.content or '') + '<|im_end|>\n' -}}
{%- endfor -%}
{{- '<|im_start|>assistant\n' -}}
"""


@pytest.fixture(scope="module")
def value_counter(tmp_path_factory):
    from tokenizer_factory import build_toy_tokenizer_dir

    return make_counter(f"hf:{build_toy_tokenizer_dir(tmp_path_factory.mktemp('value'), chat_template=VALUE_TEMPLATE)}")


@pytest.mark.parametrize("compaction", ["drop-oldest", "pin-and-fold", "newest-turns", "summarise-span"])
@pytest.mark.parametrize("passages", [False, True])
def test_a_history_that_repeats_the_question_under_a_value_comparing_template(value_counter, compaction, passages):
    assert_reference_figures(value_counter, compaction, passages, '"search"', "same text")
