"""Chat templates rendered from their compiled form (core.counters.hf_direct): the text is transformers' own
``apply_chat_template(..., tokenize=False)`` for every real template here, on conversations with tool calls (their
arguments nested, numeric, null, non-ASCII), tool results, system prompts, reasoning, with and without tools and a
generation prompt; a refusal is the same refusal; a template that writes otherwise the direct way turns it off."""
from __future__ import annotations

import pytest
import tokenizer_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_hf import real

from core import TemplateRefused, make_counter
from core.contracts import ChatMessage, ToolCall, ToolDefinition
from core.counters.hf import HFCounter
from core.counters.hf_direct import DirectRender

TOOLS = [ToolDefinition(name="get_weather", description="Weather for a city.",
                        parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                    "required": ["city"]}),
         ToolDefinition(name="search", description="Search the docs.", parameters={"type": "object", "properties": {
             "query": {"type": "string"}, "limit": {"type": "integer"}, "tags": {"type": "array", "items": {
                 "type": "string"}}}})]

TEXT = st.lists(st.sampled_from(list("ab Zé字\n\t.{}<>|\"'") + ["<|im_start|>", "[INST]", "<think>", "</think>"]),
                max_size=24).map("".join)
JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=6)


@st.composite
def conversations(draw):
    messages = []
    if draw(st.booleans()):
        messages.append(ChatMessage(role="system", content=draw(TEXT)))
    for t in range(draw(st.integers(1, 3))):
        messages.append(ChatMessage(role="user", content=draw(TEXT) or "hi"))
        for c in range(draw(st.integers(0, 2))):
            call = ToolCall(id=f"call{t}x{c}", name=draw(st.sampled_from(["get_weather", "search"])),
                            arguments=draw(st.dictionaries(st.sampled_from(["city", "query", "limit", "tags", "é"]),
                                                           JSON, max_size=3)))
            messages.append(ChatMessage(role="assistant", content=draw(st.sampled_from([None, "", "Checking."])),
                                        tool_calls=[call]))
            messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=draw(TEXT) or "{}"))
        reply = draw(TEXT) or "ok"
        if draw(st.booleans()):
            reply = f"<think>\n{draw(TEXT)}\n</think>\n\n{reply}"
        messages.append(ChatMessage(role="assistant", content=reply))
    if draw(st.booleans()):
        messages.append(ChatMessage(role="user", content=draw(TEXT) or "and now?"))
    return messages, draw(st.booleans()), draw(st.booleans())


def transformers_text(counter: HFCounter, messages, tools, generation: bool):
    try:
        return counter._tokenizer.apply_chat_template(
            HFCounter.conversation(messages), tools=HFCounter.tool_schemas(tools), add_generation_prompt=generation,
            tokenize=False, return_dict=False, **counter.chat_template_kwargs)
    except Exception as exc:  # noqa: BLE001 - compared with the counter's refusal
        return exc


def ours(counter: HFCounter, messages, tools, generation: bool):
    try:
        return counter.render_prompt(messages, tools, generation=generation)
    except TemplateRefused as exc:
        return exc


def agree(counter: HFCounter, messages, tools, generation: bool) -> None:
    """Rendered twice (the first render of an outline is the check, the second the direct way): both as transformers
    renders it, or both refused with transformers' words."""
    expected = transformers_text(counter, messages, tools, generation)
    for _ in range(2):
        got = ours(counter, messages, tools, generation)
        if isinstance(expected, Exception):
            assert isinstance(got, TemplateRefused) and str(expected).splitlines()[0] in str(got)
        else:
            assert got == expected
    assert counter._direct().on, "a check found the direct render different"


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "phi35", "mistral-nemo"])
@given(case=conversations())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_real_tokenizers_render_as_transformers_does(name, case):
    messages, with_tools, generation = case
    agree(real(name), messages, TOOLS if with_tools else [], generation)


# a short tool-call conversation every real-world template is rendered with
WEATHER = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Weather in Oslo?"),
           ChatMessage(role="assistant", content=None, tool_calls=[
               ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo", "days": [1, 2], "x": None})]),
           ChatMessage(role="tool", tool_call_id="c1", content='{"temp": 3}'),
           ChatMessage(role="assistant", content="3 degrees."), ChatMessage(role="user", content="Thanks")]


def real_world_counter(tmp_path, key: str):
    """An ``hf:`` counter of a real-world template of ``tokenizer_factory.REAL_TEMPLATES`` (skipped when absent)."""
    if not tokenizer_factory.REAL_TEMPLATES[key].path.is_file():
        pytest.skip(f"{tokenizer_factory.REAL_TEMPLATES[key].path} is absent")
    return make_counter(f"hf:{tokenizer_factory.build_real_tokenizer_dir(tmp_path / key, key)}")


@pytest.mark.parametrize("key", sorted(tokenizer_factory.REAL_TEMPLATES))
def test_real_world_templates_render_as_transformers_does(tmp_path, key):
    counter, messages = real_world_counter(tmp_path, key), WEATHER
    for tools in ([], TOOLS):
        for generation in (True, False):
            agree(counter, messages, tools, generation)
            agree(counter, messages[:2], tools, generation)


def test_the_direct_way_is_taken_once_an_outline_is_checked(tmp_path, monkeypatch):
    counter = make_counter(f"hf:{tokenizer_factory.build_toy_tokenizer_dir(tmp_path / 'tok')}")
    messages = [ChatMessage(role="user", content="hello"), ChatMessage(role="assistant", content="hi")]
    slow_calls = []
    real_slow = counter._slow_render
    monkeypatch.setattr(counter, "_slow_render", lambda *a: slow_calls.append(1) or real_slow(*a))
    counter._direct().slow = counter._slow_render
    first = counter.render_text(messages, [])
    assert len(slow_calls) == 1  # the check
    second = counter.render_text(messages + [ChatMessage(role="user", content="more")], [])
    assert len(slow_calls) == 1 and second.startswith(first[:first.index("hi")])  # the same outline: direct
    counter.render_text(messages, TOOLS)
    assert len(slow_calls) == 2  # tools given: another outline, checked


def test_a_difference_turns_the_direct_way_off(tmp_path, monkeypatch):
    counter = make_counter(f"hf:{tokenizer_factory.build_toy_tokenizer_dir(tmp_path / 'tok')}")
    messages = [ChatMessage(role="user", content="hello")]
    expected = transformers_text(counter, messages, [], True)
    monkeypatch.setattr(DirectRender, "_direct", lambda self, *a: "something else")
    assert counter.render_text(messages, []) == expected
    assert not counter._direct().on
    assert counter.render_text(messages, []) == expected  # from transformers from now on
    assert counter.count(messages, []) == len(counter._tokenizer.apply_chat_template(
        HFCounter.conversation(messages), add_generation_prompt=True, tokenize=True, return_dict=False))


def test_a_refusal_is_the_same_refusal_both_ways(tmp_path):
    template = ("{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tool results here') }}"
                "{% endif %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
    counter = make_counter(f"hf:{tokenizer_factory.build_toy_tokenizer_dir(tmp_path / 'tok', chat_template=template)}")
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"})
    refused = [ChatMessage(role="user", content="Weather?"), ChatMessage(role="assistant", content=None,
                                                                        tool_calls=[call]),
               ChatMessage(role="tool", tool_call_id="c1", content="3 C")]
    for _ in range(3):
        with pytest.raises(TemplateRefused, match="no tool results here"):
            counter.render_text(refused, TOOLS)
    agree(counter, refused[:2], TOOLS, True)  # the outline without the result: checked, then direct
    with pytest.raises(TemplateRefused, match="no tool results here"):
        counter.render_text(refused, TOOLS)  # still refused once the direct way is on


def test_tools_that_differ_only_in_a_number_type_render_as_their_own(tmp_path):
    """A review's find: the converted tool schemas were kept by value, and ``1 == 1.0 == True`` rendered the last tools'
    text for the next ones. They are kept for the very same tool objects now."""
    counter = real("qwen3")
    messages = [ChatMessage(role="user", content="hi")]
    for value in (1, 1.0, True, 1):
        tools = [ToolDefinition(name="f", parameters={"type": "object", "properties": {
            "n": {"type": "integer", "minimum": value}}})]
        agree(counter, messages, tools, True)
        assert counter.count(messages, tools) == len(counter._tokenizer.apply_chat_template(
            HFCounter.conversation(messages), tools=HFCounter.tool_schemas(tools), add_generation_prompt=True,
            tokenize=True, return_dict=False))


def test_a_runaway_template_is_stopped_once_not_again_on_the_whole(tmp_path, monkeypatch):
    """A review's find: the check of a new outline on the first messages took the time limit's error for a refusal
    of those messages and ran the template again on the whole conversation (twice the limit)."""
    from core import CounterError
    from core.counters import template_limits

    monkeypatch.setattr(template_limits, "MAX_RENDER_SECONDS", 0.3)
    template = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    counter = make_counter(f"hf:{tokenizer_factory.build_toy_tokenizer_dir(tmp_path / 'tok', chat_template=template)}")
    renders = []
    slow = counter._slow_render
    counter._direct().slow = lambda *a: renders.append(len(a[0])) or slow(*a)
    messages = [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="b"),
                ChatMessage(role="user", content="c")]
    with pytest.raises(CounterError, match="limit"):
        counter.render_text(messages, [])
    assert renders == [1]  # the first message alone (its outline), stopped there
