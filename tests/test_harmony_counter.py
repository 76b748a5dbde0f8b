"""``harmony:<model>``: gpt-oss counted with openai-harmony (its reference renderer), fed from the tiktoken
cache, never downloading."""
from __future__ import annotations

import os

import pytest

from core import ChatMessage, ToolCall, ToolDefinition, make_counter
from core.formats import count_imported, import_data

pytest.importorskip("openai_harmony", reason="the openai-harmony package is not installed")


def test_harmony_renders_the_gpt_oss_format_from_the_cache(tiktoken_cache, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    counter = make_counter("harmony:gpt-oss-20b")
    assert counter.identity.kind == "openai-harmony" and "o200k_harmony" in counter.identity.revision
    assert "TIKTOKEN_ENCODINGS_BASE" not in os.environ  # pointed at the cache only while loading
    weather = ToolDefinition(name="get_weather", description="Get the weather",
                             parameters={"type": "object", "properties": {"city": {"type": "string"}}})
    calls = [ToolCall(id="a", name="get_weather", arguments={"city": "Paris"}),
             ToolCall(id="b", name="get_weather", arguments={"city": "Oslo"})]
    messages = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Paris and Oslo?"),
                ChatMessage(role="assistant", tool_calls=calls),
                ChatMessage(role="tool", tool_call_id="a", content="rain"),
                ChatMessage(role="tool", tool_call_id="b", content="snow")]
    text = counter.render_text(messages, [weather])
    assert text.startswith("<|start|>system<|message|>") and "<|start|>developer<|message|># Instructions" in text
    assert "namespace functions" in text and "type get_weather" in text
    assert text.count("to=functions.get_weather") == 2 and "Oslo" in text  # both parallel calls are there
    assert "<|start|>functions.get_weather to=assistant" in text and text.endswith("<|start|>assistant")
    assert counter.count(messages, [weather]) == len(counter.token_ids(messages, [weather]))


def test_an_imported_gpt_oss_request_is_counted_with_harmony_by_auto(tiktoken_cache):
    body = {"model": "gpt-oss-120b", "messages": [{"role": "user", "content": "hello"}]}
    request = import_data(body).requests[0]
    counter = make_counter("auto", model=request.recorded.model)
    assert counter.name == "harmony:gpt-oss-120b"
    result = count_imported(request, counter)
    assert result.context_limit == 131072 and result.input_tokens == counter.count(request.messages, [])
