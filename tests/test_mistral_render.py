"""The one-pass ``mistral:`` count (core.counters.mistral_render) gives exactly mistral-common's own
``encode_chat_completion`` token ids, request by request, and refuses exactly what it refuses, in its words."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mistral_requests import TOOLS, conversation, message
from support import FIXTURES, SHARED, default_counter, imported_requests

from core import TemplateRefused, make_counter
from core.contracts import ChatMessage, ToolCall, ToolDefinition


def stock(counter, messages, tools):
    """mistral-common's stock encoding, its own refusal as the counter words it."""
    try:
        return list(counter._tokenizer.encode_chat_completion(counter._request(messages, tools)).tokens)
    except Exception as exc:  # noqa: BLE001 - whatever mistral-common raises is a refusal
        return f"{type(exc).__name__}: {exc}"


def ours(counter, messages, tools):
    try:
        return counter.token_ids(messages, tools)
    except TemplateRefused as exc:
        return exc.template_message


def whole(counter, messages, tools):
    """The assembly's final count (``count_whole``: no id list where the one pass answers), or the refusal."""
    try:
        return counter.count_whole(messages, tools)[0]
    except TemplateRefused as exc:
        return exc.template_message


def one_pass(counter, messages, tools):
    """The one-pass renderer's own answer, or ``None`` where it leaves the request to mistral-common."""
    from core.counters.mistral_render import Unsure

    try:
        return counter._renderer().token_ids(messages, tools)
    except (Unsure, Exception):  # noqa: BLE001 - anything it is not sure of goes to mistral-common
        return None


def assert_same(counter, messages, tools=()):
    """The counter's ids (or refusal) are mistral-common's; where the one pass answered itself, mistral-common
    accepts the request with the same ids. Returns whether the one pass answered."""
    messages, tools = list(messages), list(tools)
    expected = stock(counter, messages, tools)
    assert ours(counter, messages, tools) == expected
    assert whole(counter, messages, tools) == (len(expected) if isinstance(expected, list) else expected)
    if isinstance(expected, list):  # the final count's text (mark_not_rendered) is the ids' decode
        assert counter.render_text(messages, tools) == counter.text_of_ids(expected)
        if tools:
            assert counter._tools_json(tools) == counter._tools_json_whole(tools)
    answered = one_pass(counter, messages, tools)
    if answered is not None:
        assert answered == expected
    return answered is not None


@pytest.fixture(scope="module", params=["tekken_240911", "tekken_240718"])
def counter(request):
    made = make_counter(f"mistral:{request.param}")
    assert made._renderer() is not None, "the bundled tekken files take the one-pass path"
    return made


@given(conversation(), TOOLS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_requests_give_mistral_commons_ids_or_its_refusal(messages, tools):
    answered = assert_same(default_counter(), messages, tools)
    event("answered by the one pass" if answered else "left to mistral-common")


@given(st.lists(message(), max_size=6), TOOLS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_messages_of_any_shape_and_order(messages, tools):
    answered = assert_same(default_counter(), messages, tools)
    event("answered by the one pass" if answered else "left to mistral-common")


def test_both_bundled_tekken_files_on_a_tool_exchange(counter):
    calls = [ToolCall(id="abcdefghi", name="search", arguments={"q": "ü"}),
             ToolCall(id="call-2", name="search", arguments={})]
    messages = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Hi  "),
                ChatMessage(role="assistant", content="Hello. "), ChatMessage(role="user", content="Look it up"),
                ChatMessage(role="system", content="Late system text."), ChatMessage(role="assistant", tool_calls=calls),
                ChatMessage(role="tool", tool_call_id="abcdefghi", content="{\"hits\": 3}"),
                ChatMessage(role="tool", tool_call_id="call-2", content="plain words"),
                ChatMessage(role="user", content="So?"), ChatMessage(role="user", content="And?")]
    tools = [ToolDefinition(name="search", description="Search.", parameters={"type": "object", "properties": {
        "q": {"type": "string"}}})]
    assert assert_same(counter, messages, tools)


@pytest.mark.parametrize("messages", [
    [],
    [ChatMessage(role="assistant", content="alone")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="ends here")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="tool", tool_call_id="abcdefghi", content="x")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content=""),
     ChatMessage(role="user", content="b")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="text",
                                                         tool_calls=[ToolCall(id="abcdefghi", name="f")]),
     ChatMessage(role="tool", tool_call_id="abcdefghi", content="x")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="text first"),
     ChatMessage(role="assistant", tool_calls=[ToolCall(id="abcdefghi", name="f")]),
     ChatMessage(role="tool", tool_call_id="abcdefghi", content="x")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", tool_calls=[ToolCall(id="abcdefghi",
                                                                                              name="bad name")]),
     ChatMessage(role="tool", tool_call_id="abcdefghi", content="x")],
    [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", tool_calls=[
        ToolCall(id="abcdefghi", name="f"), ToolCall(id="bcdefghij", name="f")]),
     ChatMessage(role="tool", tool_call_id="abcdefghi", content="x"), ChatMessage(role="assistant", content="b"),
     ChatMessage(role="user", content="c")],
], ids=["empty", "lone-assistant", "ends-assistant", "tool-after-user", "empty-assistant", "text-and-calls",
        "text-then-calls-run", "bad-function-name", "unanswered-call"])
def test_the_refusals_of_mistral_common_are_its_own(counter, messages):
    refusal = stock(counter, messages, [])
    assert isinstance(refusal, str), "mistral-common refuses this request"
    assert ours(counter, messages, []) == refusal


def test_tools_checked_one_by_one_refuse_as_the_whole_set_would():
    """Each tool is checked once per counter (mistral-common's check is tool by tool): a set holding a bad tool
    is refused in mistral-common's words (its first bad tool's), after and before its good tools passed."""
    made = make_counter("mistral:tekken_240911")
    good = ToolDefinition(name="search", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    bad = ToolDefinition(name="fetch", parameters={"type": "object", "properties": {"u": {"type": "nonsense"}}})
    worse = ToolDefinition(name="find", parameters={"type": "object", "required": "q"})
    messages = [ChatMessage(role="user", content="a")]
    for tools in ([good], [good, bad], [bad, worse], [worse, bad], [good, worse], [good]):
        expected = stock(made, messages, tools)
        assert ours(made, messages, tools) == expected
        assert whole(made, messages, tools) == (len(expected) if isinstance(expected, list) else expected)
    assert isinstance(stock(made, messages, [bad, worse]), str) and stock(made, messages, [bad, worse]) != stock(
        made, messages, [worse, bad]), "each order is refused for its first bad tool"


def test_a_tool_schema_mistral_common_refuses_is_refused_in_its_words():
    made = default_counter()
    bad = [ToolDefinition(name="search", parameters={"type": "object", "properties": {"q": {"type": "nonsense"}}})]
    messages = [ChatMessage(role="user", content="a")]
    assert isinstance(stock(made, messages, bad), str)
    for _ in range(2):  # refused every time, not remembered as passed
        assert ours(made, messages, bad) == stock(made, messages, bad)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.result.json")))
def test_every_result_fixture(name):
    data = json.loads((FIXTURES / name).read_text())
    messages = [ChatMessage.model_validate(m) for m in data["messages"]]
    tools = [ToolDefinition.model_validate(t) for t in data.get("tools", [])]
    assert assert_same(default_counter(), messages, tools)


def test_every_imported_request_of_the_fixtures_and_real_files():
    """Every request the importers read from the format fixtures and ../shared's real files, as recorded
    and with the adaptations the count makes, gives mistral-common's ids or its refusal."""
    if not (SHARED / "realworld").is_dir():
        pytest.skip("the shared real-world files are absent")
    made = default_counter()
    compared = accepted = 0
    for counted, tools in imported_requests(made):
        accepted += assert_same(made, counted, tools)
        compared += 1
    assert compared > 40 and accepted > 20, (compared, accepted)


def stock_text(counter, messages, tools):
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

    ids = stock(counter, messages, tools)
    return ids if isinstance(ids, str) else counter._tokenizer.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)


@given(conversation(), TOOLS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_rendered_text_is_mistral_commons_decode_with_control_tokens_kept(messages, tools):
    made = default_counter()
    try:
        text = made.render_text(messages, tools)
    except TemplateRefused as exc:
        text = exc.template_message
    assert text == stock_text(made, messages, tools)
