"""The embedded counter equals mistral-common's own encoding of the same request."""
from __future__ import annotations

import json

import pytest
from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
from support import FIXTURES, default_counter, fixture_request

from core import CounterError, TemplateRefused, assemble, bundled_mistral_tokenizers, make_counter
from core.counting import mistral_data_dir, mistral_tool_call_id


def mistral_common_request(result) -> ChatCompletionRequest:
    """Written independently of core.counting: the request as mistral-common's own types."""
    messages = []
    for m in result.messages:
        if m.role == "system":
            messages.append(SystemMessage(content=m.content))
        elif m.role == "user":
            messages.append(UserMessage(content=m.content))
        elif m.role == "assistant":
            calls = [ToolCall(id=c.id, function=FunctionCall(name=c.name, arguments=json.dumps(c.arguments)))
                     for c in m.tool_calls] or None
            messages.append(AssistantMessage(content=m.content, tool_calls=calls))
        else:
            messages.append(ToolMessage(content=m.content, tool_call_id=m.tool_call_id))
    tools = [Tool(function=Function(name=t.name, description=t.description, parameters=t.parameters))
             for t in result.tools] or None
    return ChatCompletionRequest(messages=messages, tools=tools)


@pytest.mark.parametrize("name", ["rag_roomy", "rag_tight", "rag_empty", "rag_literal_boundary",
                                  "trip_conversation", "tool_exchange", "demo"])
def test_counter_equals_mistral_common_encoding_on_fixtures(name):
    counter = default_counter()
    result = assemble(fixture_request(name), counter)
    reference = MistralTokenizer.from_file(str(mistral_data_dir() / "tekken_240911.json"))
    encoded = reference.encode_chat_completion(mistral_common_request(result))
    assert result.input_tokens == len(encoded.tokens)
    assert counter.token_ids(result.messages, result.tools) == list(encoded.tokens)
    assert counter.render_text(result.messages, result.tools) == reference.decode(
        encoded.tokens, special_token_policy=SpecialTokenPolicy.KEEP)


def test_tools_are_counted():
    counter = default_counter()
    result = assemble(fixture_request("tool_exchange"), counter)
    without = counter.count(result.messages, [])
    assert result.input_tokens > without
    assert "[AVAILABLE_TOOLS]" in counter.render_text(result.messages, result.tools)


def test_bundled_tokenizers_are_listed_and_load_offline():
    names = bundled_mistral_tokenizers()
    assert "tekken_240911" in names and "tekken_240718" in names
    other = make_counter("mistral:tekken_240718")
    assert other.identity.name == "mistral:tekken_240718"
    assert other.identity.files["tekken_240718.json"] != default_counter().identity.files["tekken_240911.json"]


def test_unknown_tokenizer_names_the_bundled_ones():
    with pytest.raises(CounterError, match="bundled: .*tekken_240911"):
        make_counter("mistral:no-such-tokenizer")


def test_a_file_that_is_not_a_tokenizer(tmp_path):
    bogus = tmp_path / "tok.json"
    bogus.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(CounterError, match="not a mistral-common tokenizer file"):
        make_counter(f"mistral:{bogus}")


def test_template_refusal_is_a_clear_error():
    from core import ChatMessage, ToolCall as CoreCall

    messages = [ChatMessage(role="user", content="hi"),
                ChatMessage(role="assistant", content="text", tool_calls=[CoreCall(id="abcdefgh1", name="f")])]
    with pytest.raises(TemplateRefused, match="refused the request"):
        default_counter().count(messages, [])


def test_foreign_tool_call_ids_map_to_stable_mistral_ids():
    assert mistral_tool_call_id("abcDEF123") == "abcDEF123"
    mapped = mistral_tool_call_id("call_abc")
    assert len(mapped) == 9 and mapped.isalnum() and mapped == mistral_tool_call_id("call_abc")
    assert mapped != mistral_tool_call_id("call_abd")


def test_fixture_dir_exists():
    assert (FIXTURES / "demo.request.json").is_file()
