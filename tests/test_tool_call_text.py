"""A template that writes the text beside a tool call only while no final reply follows it (session 19).

gpt-oss's template (the Jinja one its Hugging Face folder carries, under ``hf:``; the project's ``harmony:`` counter
renders otherwise) keeps an assistant message's text beside its tool call, as an analysis message, until a reply
without tool calls comes anywhere after it. What a history turn or plan entry adds then depends on the turns after
it: on the llama-cpp-python sdist's gpt-oss-120b template (a test tokenizer carrying its markers), 95 of 937 random
assemblies differed from the reference (one dropped a turn the reference keeps), 84 of 1,530 random plans, and 8 of
2,506 hf variant counts. Learned from two renders (``TokenCounter.tool_call_text_by_later_reply``); such requests and
plans, where a message has text beside its tool calls, are assembled with the reference method, with a note, and get
no variant counts. The template here is this project's own, written to show the behaviour."""
from __future__ import annotations

import pytest
from real_hf import HF
from test_plan_fast_counting import assert_same
from test_template_state import FIRST_CALL, _counter

from core import Message, SectionPlan, ToolCall, assemble, make_counter, parse_request
from core.formats.importing import import_data

CALL_TEXT = """{{ bos_token }}{%- for message in messages -%}
{%- if message.role == 'assistant' and message.tool_calls -%}
{%- set later = namespace(final=false) -%}
{%- for future in messages[loop.index:] -%}
{%- if future.role == 'assistant' and not future.tool_calls -%}{%- set later.final = true -%}{%- endif -%}
{%- endfor -%}
{%- if message.content and not later.final -%}{{ '<|s|>analysis\n' + message.content + '<|e|>' }}{%- endif -%}
{%- for call in message.tool_calls -%}
{{ '<|s|>assistant<|call|>' + call.function.name + ' ' + call.function.arguments | tojson + '<|e|>' }}
{%- endfor -%}
{%- else -%}{{ '<|s|>' + message.role + '\n' + (message.content or '') + '<|e|>' }}{%- endif -%}
{%- endfor -%}{%- if add_generation_prompt -%}{{ '<|s|>assistant\n' }}{%- endif -%}"""

TOOL = {"name": "lookup", "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


def _call(k: int, text: str | None) -> dict:
    return {"role": "assistant", "content": text, "tool_calls": [{"id": f"c{k}", "name": "lookup", "arguments": {"q": "x"}}]}


# (a random draw where the default differed: turn-3 ends on a tool result, so its call's text is written only while
# no final reply follows, and turn-4 has one; the reference prices turn-3 at 36 tokens, the default priced it 50)
HISTORY = [{"role": "user", "content": "42"}, {"role": "assistant", "content": "Let me look."},
           {"role": "user", "content": "ok"}, _call(7, "Let me look."), {"role": "tool", "tool_call_id": "c7", "content": "42"},
           {"role": "assistant", "content": "Why?"},
           {"role": "user", "content": "Hello there."}, _call(8, "Let me look."),
           {"role": "tool", "tool_call_id": "c8", "content": "Hello there."},
           {"role": "user", "content": "ok"}, _call(9, "Checking."), {"role": "tool", "tool_call_id": "c9", "content": "ok"},
           {"role": "assistant", "content": "42"}]


def _request(limit: int) -> dict:
    return {"id": "x", "instructions": "Be brief.", "current": "And now?", "history": HISTORY, "evidence": [],
            "tools": [TOOL], "context_limit": limit, "max_new_tokens": 8, "margin": 0}


@pytest.fixture
def call_text(tmp_path):
    return _counter(tmp_path, CALL_TEXT)


def test_the_rule_is_learned_from_renders(call_text, tmp_path):
    assert call_text.tool_call_text_by_later_reply()
    assert not _counter(tmp_path / "other", FIRST_CALL).tool_call_text_by_later_reply()


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "phi35", "mistral-nemo"])
def test_the_real_tokenizers_write_a_tool_calls_text_whatever_follows(name):
    if not (HF / name / "tokenizer.json").is_file():
        pytest.skip(f"{HF / name} is absent")
    assert not make_counter(f"hf:{HF / name}").tool_call_text_by_later_reply()


def test_its_requests_get_the_reference_result_with_a_note(call_text, tmp_path, monkeypatch):
    roomy = assemble(parse_request(_request(10 ** 6)), call_text, reference=True)
    limits = range(max(20, roomy.input_tokens - 90), roomy.input_tokens + 9)
    references = {}
    for limit in limits:
        request = parse_request(_request(limit))
        try:
            references[limit] = assemble(request, call_text, reference=True)
        except Exception:  # noqa: BLE001 - the required part alone is too large: both refuse it
            continue
        fast = assemble(request, call_text)
        assert "final reply" in (fast.counting_note or "")
        assert fast.model_copy(update={"counting_note": None}).to_json() == references[limit].to_json()
    # the default before, the item model trusted, on a counter of its own through the same limits: turn-3 at 50
    before = _counter(tmp_path / "before", CALL_TEXT)
    monkeypatch.setattr(type(before), "tool_call_text_by_later_reply", lambda self: False)
    differed = [limit for limit, expected in references.items()
                if assemble(parse_request(_request(limit)), before).to_json() != expected.to_json()]
    assert differed


def test_its_plans_get_the_reference_result(call_text):
    """A reply in a later section: whether it is kept decides whether the call's text before it is written."""
    layout = (SectionPlan("system", pinned=True), SectionPlan("recent", compaction="drop-oldest"),
              SectionPlan("later", compaction="drop-oldest"), SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content="Be brief.")],
            "recent": [Message(role="user", content="Why?", id="u0"),
                       Message(role="assistant", content="Let me look.", id="c1",
                               tool_calls=[ToolCall(id="call1", name="lookup", arguments={"q": "x"})]),
                       Message(role="tool", content="42", id="r1", tool_call_id="call1")],
            "later": [Message(role="assistant", content="It is 42.", id="a2")],
            "question": [Message(role="user", content="And now?", id="q")]}
    for where in (0.0, 0.2, 0.4, 0.6, 0.8, 0.99):
        for nudge in (-1, 0, 1):
            assert_same(layout, (), data, call_text, where, nudge)


def test_its_imports_get_no_variant_counts(call_text):
    body = {"model": "any", "tools": [{"type": "function", "function": TOOL}], "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"}, {"role": "assistant", "content": "It is 42."},
        {"role": "user", "content": "And now?"}]}
    request = import_data(body).requests[0]
    total = call_text.count(request.messages, request.tools)
    assert call_text.variant_counts(request.messages, request.tools, total) is None
    # leaving the final reply out writes the call's text: no count read off the whole render could say so
    without = request.messages[:4] + request.messages[5:]
    assert "Let me look." in call_text.render_text(without, request.tools)
    assert "Let me look." not in call_text.render_text(request.messages, request.tools)
