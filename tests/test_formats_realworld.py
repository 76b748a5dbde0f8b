"""Importers on real files from other projects (../shared/realworld) and on the format reference's
examples (../shared/reference/examples), read where they are. Skipped when ../shared is absent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import default_counter

from core.formats import UnsupportedFormat, count_imported, detect, import_data, import_file

SHARED = Path(__file__).resolve().parents[2] / "shared"
REALWORLD = SHARED / "realworld"
EXAMPLES = SHARED / "reference" / "examples"

pytestmark = pytest.mark.realworld


@pytest.fixture(autouse=True)
def _shared_present():
    if not REALWORLD.is_dir() or not EXAMPLES.is_dir():
        pytest.skip(f"the shared real-world files are absent ({SHARED} not found)")


def roles(request) -> list[str]:
    return [m.role for m in request.messages]


def call_result_pairs(request) -> list[tuple[str, str]]:
    """(assistant call id, tool result id) in message order, matched by id."""
    calls = [c.id for m in request.messages for c in m.tool_calls]
    results = [m.tool_call_id for m in request.messages if m.role == "tool"]
    return list(zip(calls, results))


def usage(request) -> tuple:
    r = request.recorded
    return r.input_tokens, r.output_tokens, r.finish_reason


def test_openllmetry_openai_tools_cassette():
    imported = import_file(REALWORLD / "openai-chat" / "openllmetry-test_chat_tools.yaml")
    assert imported.format.name == "vcr-cassette"
    (request,) = imported.requests
    assert roles(request) == ["user"]
    assert request.messages[0].content == "What's the weather like in San Francisco?"
    assert [t.name for t in request.tools] == ["get_current_weather"]
    assert request.tools[0].parameters["required"] == ["location"]
    assert usage(request) == (68, 16, "tool_calls")
    assert request.recorded.model == "gpt-3.5-turbo" and request.recorded.format == "vcr-cassette/openai-chat"
    assert request.output[0].tool_calls[0].arguments == {"location": "San Francisco"}


def test_openllmetry_openai_tool_calls_cassette():
    imported = import_file(REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml")
    assert len(imported.requests) == 3
    for request in imported.requests:
        assert roles(request) == ["assistant", "tool"]
        assert call_result_pairs(request) == [("1", "1")]
        assert request.messages[0].tool_calls[0].arguments == {"location": "San Francisco"}
        assert request.sections == ["tool_exchanges", "tool_exchanges"]  # there is no user question at all
    assert [usage(r) for r in imported.requests] == [(40, 12, "stop"), (40, 13, "stop"), (40, 13, "stop")]
    assert [(r.recorded.trace_id, r.recorded.span_id) for r in imported.requests] == [
        (None, None), ("a38b8d4e0008cb2b66e975df14610172", "a7a045179b32a692"),
        ("acc550d28773b99a1e1f2c80e3519891", "3cd348d8cc8d6b62")]  # from the traceparent header


def test_minja_chat_template_context():
    imported = import_file(REALWORLD / "openai-chat" / "minja-context-tool_use.json")
    assert imported.format.name == "openai-chat"
    (request,) = imported.requests
    assert roles(request) == ["user", "assistant", "tool", "assistant"] * 3
    assert call_result_pairs(request) == [("call_1___", "call_1___"), ("call_2___", "call_2___"),
                                          ("call_3___", "call_3___")]
    assert request.messages[1].tool_calls[0].arguments == {"code": "print('Hello, World!')"}
    assert [t.name for t in request.tools] == ["ipython", "brave_search", "wolfram_alpha", "test"]
    assert usage(request) == (None, None, None)
    assert request.sections[8] == "current" and request.sections[11] == "prefill"
    assert any("add_generation_prompt" in w.message for w in imported.warnings)  # template inputs, not a body


def test_openinference_anthropic_tool_use_with_blocks():
    imported = import_file(REALWORLD / "anthropic-messages" /
                           "openinference-test_anthropic_instrumentation_tool_use_in_input_with_blocks.yaml")
    (request,) = imported.requests
    assert request.recorded.format == "vcr-cassette/anthropic-messages"
    assert roles(request) == ["user", "assistant", "tool"]
    assistant = request.messages[1]
    assert assistant.content.startswith("Certainly! I can help you")  # text and tool_use in one message, kept
    assert assistant.tool_calls[0].arguments == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert call_result_pairs(request) == [("toolu_01KBqpqR73qWGsMaW3vBzEjz", "toolu_01KBqpqR73qWGsMaW3vBzEjz")]
    assert request.messages[2].content == '{"weather": "sunny", "temperature": "75"}'
    assert [t.name for t in request.tools] == ["get_weather"]
    assert usage(request) == (772, 47, "end_turn")


def test_openllmetry_anthropic_prompt_caching_counts_cached_input():
    imported = import_file(REALWORLD / "anthropic-messages" / "openllmetry-test_anthropic_prompt_caching_legacy.yaml")
    assert len(imported.requests) == 2
    for request in imported.requests:
        assert roles(request) == ["system", "user"]
        assert request.messages[0].content.startswith("You help generate concise summaries")
        assert request.recorded.model == "claude-3-5-sonnet-20240620"
    # 4 uncached + 1163 written to (first call) or read from (second call) the prompt cache
    assert [usage(r) for r in imported.requests] == [(1167, 187, "end_turn"), (1167, 202, "end_turn")]


def test_openllmetry_anthropic_tools_history():
    (request,) = import_file(REALWORLD / "anthropic-messages" /
                             "openllmetry-test_anthropic_tools_history_legacy.yaml").requests
    assert roles(request) == ["user", "assistant", "tool"]
    assert call_result_pairs(request) == [("call_1", "call_1")]
    assert request.messages[2].content == "Sunny and 65 degrees Fahrenheit"
    assert [t.name for t in request.tools] == ["get_weather", "get_time"]
    assert usage(request) == (568, 58, "tool_use")


def test_openinference_genai_span_attributes():
    path = REALWORLD / "otlp-genai" / "openinference-genai-otel_genai_client_span_tool_calls.json"
    assert detect(path).name == "genai-attributes"
    (request,) = import_file(path).requests
    assert roles(request) == ["user", "assistant", "tool"]
    assert request.messages[1].content == "Absolutely! Let me check the weather for you."
    assert call_result_pairs(request) == [("1234", "1234")]
    assert request.messages[2].content == "rainy, 57°F"
    assert usage(request) == (97, 52, "stop")
    assert (request.recorded.model, request.recorded.provider) == ("gpt-4", "openai")
    assert request.output[0].content.startswith("The weather in Paris is currently rainy")


def test_otlp_proto_example_has_no_model_call():
    imported = import_file(REALWORLD / "otlp-genai" / "otlp-proto-example-trace.json")
    assert imported.format.name == "otlp-json" and imported.requests == []
    assert any("I'm a server span" in w.message for w in imported.warnings)


@pytest.mark.parametrize("name", ["semconv-gen-ai-input-messages.schema.json",
                                  "semconv-gen-ai-output-messages.schema.json",
                                  "semconv-gen-ai-system-instructions.schema.json",
                                  "semconv-gen-ai-tool-definitions.schema.json"])
def test_semconv_json_schemas_are_not_requests(name):
    path = REALWORLD / "otlp-genai" / name
    assert detect(path).name == "unknown"
    with pytest.raises(UnsupportedFormat, match="keys .*defs"):
        import_file(path)


def test_langfuse_openai_agents_trace():
    imported = import_file(REALWORLD / "platform-exports" / "langfuse-openai-agents-2025-09-30.trace.json")
    second_call, first_call = imported.requests  # file order: the later response is listed first
    assert second_call.recorded.format == "langfuse-trace/openinference"
    assert roles(second_call) == ["system", "user", "assistant", "tool"]
    assert call_result_pairs(second_call) == [("call_Kud0j0DxWSmLzv9W5m6qVqXn", "call_Kud0j0DxWSmLzv9W5m6qVqXn")]
    assert second_call.messages[2].tool_calls[0].arguments == {"city": "Tokyo"}
    assert roles(first_call) == ["system", "user"]
    for request in imported.requests:
        assert [t.name for t in request.tools] == ["get_weather"]
        assert request.recorded.trace_id == "fee618f96dc31e0ca38b2f7b26eb8b29"
    assert (second_call.recorded.span_id, first_call.recorded.span_id) == ("90d94774e8e3724d", "98870087af69bf06")
    assert [usage(r)[:2] for r in imported.requests] == [(85, 29), (55, 15)]
    assert any("Agent workflow (AGENT)" in w.message for w in imported.warnings)


def test_langfuse_vercel_ai_sdk_trace():
    imported = import_file(REALWORLD / "platform-exports" / "langfuse-vercel-aisdk-2025-11-17.trace.json")
    (request,) = imported.requests  # the ai.generateText wrapper is not a second call
    assert request.label.startswith("ai.generateText.doGenerate")
    assert roles(request) == ["user"]
    assert request.messages[0].content == "What is the weather like today in San Francisco?"
    assert [t.name for t in request.tools] == ["getWeather"]
    assert request.tools[0].parameters["required"] == ["location"]
    assert usage(request) == (62, 85, "tool-calls")
    assert request.output[0].tool_calls[0].arguments == {"location": "San Francisco"}
    assert any("wraps another generation" in w.message for w in imported.warnings)


def test_promptfoo_export():
    imported = import_file(REALWORLD / "platform-exports" / "promptfoo-sample-export.json")
    assert imported.format.name == "promptfoo-export"
    assert len(imported.requests) == 4
    for request in imported.requests:
        assert roles(request) == ["user"] and request.messages[0].content.startswith("Solve this riddle: ")
    assert [(r.recorded.provider, r.recorded.model) for r in imported.requests] == [
        ("openai", "gpt-5-mini"), ("openai", "gpt-5"), ("openai", "gpt-5-mini"), ("openai", "gpt-5")]
    assert [usage(r) for r in imported.requests] == [(37, 245, "stop"), (37, 204, "stop"), (41, 157, "stop"),
                                                     (41, 102, "stop")]


# ------------------------------------------------------------------------------------------
# the format reference's examples


def test_reference_openai_request_with_its_response():
    request_body = json.loads((EXAMPLES / "openai_chat_request.json").read_text())
    response = json.loads((EXAMPLES / "openai_chat_response.json").read_text())
    (request,) = import_data({"request": request_body, "response": response}).requests
    assert roles(request) == ["system", "user", "assistant", "tool", "tool"]
    assert call_result_pairs(request) == [("call_abc", "call_abc"), ("call_def", "call_def")]
    assert request.messages[4].content == "sunny, 22C"
    assert request.tools[0].parameters["additionalProperties"] is False
    assert usage(request) == (120, 18, "stop")
    assert request.output[0].content == "Paris: rainy, 14C. Tokyo: sunny, 22C."
    assert import_file(EXAMPLES / "openai_chat_request.json").requests[0].messages == request.messages


def test_reference_openai_response_alone_is_not_a_request():
    assert "response" in detect(EXAMPLES / "openai_chat_response.json").detail
    with pytest.raises(UnsupportedFormat, match="holds the answer, not the request"):
        import_file(EXAMPLES / "openai_chat_response.json")


@pytest.mark.parametrize("name, fmt", [("otlp_trace_example.json", "otlp-json"),
                                       ("otlp_trace_example.jsonl", "otlp-jsonl")])
def test_reference_otlp_trace_example(name, fmt):
    imported = import_file(EXAMPLES / name)
    assert imported.format.name == fmt
    (request,) = imported.requests  # the agent and execute_tool spans are skipped
    assert roles(request) == ["system", "user", "assistant", "tool"]
    assert call_result_pairs(request) == [("call_abc", "call_abc")]
    assert usage(request) == (120, 18, "stop")
    assert (request.recorded.trace_id, request.recorded.span_id) == ("4bf92f3577b34da6a3ce929d0e0e4736",
                                                                     "a1b2c3d4e5f60718")
    assert request.recorded.max_output_tokens == 512
    assert any("2 span(s) are not model calls" in w.message for w in imported.warnings)


def test_reference_genai_fragments_match_the_otlp_example():
    (from_trace,) = import_file(EXAMPLES / "otlp_trace_example.json").requests
    messages = import_file(EXAMPLES / "otel_genai_input_messages.json")
    assert messages.format.name == "genai-messages"
    assert messages.requests[0].messages == from_trace.messages[1:]
    instructions = json.loads((EXAMPLES / "otel_genai_system_instructions.json").read_text())
    assert from_trace.messages[0].content == instructions[0]["content"]
    tools = json.loads((EXAMPLES / "otel_genai_tool_definitions.json").read_text())
    assert [(t.name, t.description, t.parameters) for t in from_trace.tools] == [
        (d["name"], d["description"], d["parameters"]) for d in tools]
    output = json.loads((EXAMPLES / "otel_genai_output_messages.json").read_text())
    assert from_trace.output[0].content == output[0]["parts"][0]["content"]
    for name, what in [("otel_genai_output_messages.json", "output messages"),
                       ("otel_genai_system_instructions.json", "system_instructions"),
                       ("otel_genai_tool_definitions.json", "tool definitions")]:
        info = detect(EXAMPLES / name)
        assert info.name == "unknown" and what in info.detail


def _every_request():
    files = [p for p in sorted(REALWORLD.glob("*/*")) if p.parent.name != "chat-templates"
             and not p.name.endswith((".md", ".schema.json"))]
    files += [EXAMPLES / "openai_chat_request.json", EXAMPLES / "otlp_trace_example.json"]
    for path in files:
        for request in import_file(path).requests:
            yield path.name, request


def test_every_real_request_counts_exactly_with_the_default_counter():
    """Per-message marginal tokens plus the template entry add up to the complete count, and the drift
    against the provider's own figure is recorded where the file has one."""
    if not REALWORLD.is_dir():
        pytest.skip("the shared real-world files are absent")
    counted = 0
    for name, request in _every_request():
        result = count_imported(request, default_counter())
        assert sum(e.tokens for e in result.trace) == result.input_tokens, name
        assert result.input_tokens <= result.input_budget, name
        indices = sorted(i for e in result.trace for i in e.message_indices)
        assert indices == list(range(len(request.messages))), name
        extra = result.model_extra
        if request.recorded.input_tokens is not None:
            assert extra["count_drift"] == result.input_tokens - request.recorded.input_tokens
        counted += 1
    assert counted == 19
