"""The OpenAI Responses API, Gemini generateContent and Bedrock Converse: our synthetic fixtures
(every part type), the real files in ../shared/realworld2 (read in place), bad input and fuzzing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats_fuzz import import_or_refuse, mutations
from hypothesis import HealthCheck, given, settings
from support import FIXTURES, default_counter

from core.formats import FormatError, count_imported, detect, import_data, import_file

FORMATS_DIR = FIXTURES / "formats"
REALWORLD2 = Path(__file__).resolve().parents[2] / "shared" / "realworld2"


def roles(request) -> str:
    return "".join(m.role[0] for m in request.messages)


def notes(request) -> str:
    return "\n".join(str(w) for w in request.warnings)


def fixture(name):
    return json.loads((FORMATS_DIR / name).read_text())


def real(relative: str) -> Path:
    path = REALWORLD2 / relative
    if not path.is_file():
        pytest.skip(f"the shared real-world files are absent ({path} not found)")
    return path


# ------------------------------------------------------------------------------------------
# OpenAI Responses API


def test_responses_body_every_item_type():
    imported = import_file(FORMATS_DIR / "responses_body.json")
    assert imported.format.name == "openai-responses"
    (request,) = imported.requests
    # instructions, developer, user, assistant (reasoning + 2 calls), 2 tool outputs, assistant text, user,
    # assistant (web search + custom call), tool (custom output), assistant (computer call), user
    # (computer output), user (item reference), user
    assert roles(request) == "ssuattauatauuu"
    m = request.messages
    assert m[0].content == "You are a travel assistant. Answer briefly." and m[1].content == "Prefer metric units."
    assert "[image: image/png, 70 bytes]" in m[2].content and "[file: id file-itin01]" in m[2].content
    assert "[reasoning: 32 chars of text, 126 chars encrypted]" in m[3].content
    assert [(c.id, c.arguments) for c in m[3].tool_calls] == [("call_oslo", {"city": "Oslo"}),
                                                             ("call_lima", {"city": "Lima"})]
    assert [(t.tool_call_id, t.content) for t in m[4:6]] == [("call_oslo", '{"temp_c": 4}'),
                                                             ("call_lima", '{"temp_c": 19}')]
    assert m[6].content == "Oslo is 4 °C, Lima 19 °C." and not m[6].tool_calls
    assert m[8].content.startswith("[web_search_call:") and m[8].tool_calls[0].arguments == {"input": "cheapest OSL-LIM"}
    assert (m[9].tool_call_id, m[9].content) == ("call_book", "booked: ref ABC123")
    assert m[10].content.startswith("[computer_call:") and m[11].content.startswith("[computer_call_output:")
    assert m[12].content == "[item_reference: id msg_stored_07]"
    assert [t.name for t in request.tools] == ["get_weather", "book"]
    text = notes(request)
    for expected in ("previous_response_id: the request continues an earlier response (resp_prev_0001)",
                     "tools[2]: built-in tool of type 'web_search_preview'", "tools[3]: built-in tool of type",
                     "input[2]: reasoning item kept as a placeholder", "input[9]: built-in tool call web_search_call",
                     "input[14]: item_reference", "input[13]: computer_call_output"):
        assert expected in text
    assert request.recorded.parent_id == "resp_prev_0001" and request.recorded.max_output_tokens == 800
    assert count_imported(request, default_counter()).input_tokens > 0


def test_responses_in_a_cassette_streamed_and_with_cached_tokens():
    imported = import_file(FORMATS_DIR / "cassette_providers.json")
    streamed, cached = imported.requests[:2]
    assert streamed.recorded.format == "vcr-cassette/openai-responses"
    assert (streamed.recorded.input_tokens, streamed.recorded.output_tokens) == (31, 3)
    assert streamed.output[0].content == "Hello there" and streamed.recorded.entry_id == "resp_s1"
    assert (cached.recorded.input_tokens, cached.recorded.cached_input_tokens) == (1200, 1024)
    assert "continues an earlier response (resp_s1)" in notes(cached)


def test_responses_real_cassettes():
    first, second = import_file(real("openai-responses/openllmetry-test_responses_with_input_history.yaml")).requests
    assert roles(first) == "u" and first.recorded.input_tokens == 21 and first.recorded.model == "gpt-4.1-nano"
    assert roles(second) == "uau" and second.messages[1].content == "Luminous" and second.recorded.input_tokens == 40
    first, second = import_file(real("openai-responses/pydantic-ai-test_openai_responses_thinking_with_tool_calls"
                                      ".yaml")).requests
    assert roles(first) == "su" and [t.name for t in first.tools] == ["update_plan"]
    assert first.recorded.input_tokens == 124
    assert roles(second) == "suat" and second.recorded.input_tokens == 2423
    call = second.messages[2]
    assert call.content.startswith("[reasoning:") and [c.id for c in call.tool_calls] == ["call_MZPoaCDhIYRyG4kUPSdtdINs"]
    assert (second.messages[3].tool_call_id, second.messages[3].content) == (call.tool_calls[0].id, "plan updated")
    assert "reasoning item kept as a placeholder" in notes(second)


# ------------------------------------------------------------------------------------------
# Gemini generateContent


def test_gemini_body_every_part_type():
    imported = import_file(FORMATS_DIR / "gemini_body.json")
    assert imported.format.name == "gemini-generate"
    (request,) = imported.requests
    assert roles(request) == "suattau"
    m = request.messages
    assert m[0].content == "You are a helpful weather assistant.\nUse tools when useful."
    assert "[image: image/png, 70 bytes]" in m[1].content and "[file: application/pdf, gs://bucket/notes.pdf]" in m[1].content
    assert m[2].content == "[reasoning: 23 chars]"
    assert [(c.id, c.arguments) for c in m[2].tool_calls] == [("gemini-call-1", {"city": "Paris"}),
                                                             ("gemini-call-2", {"city": "Rome"})]
    assert [(t.tool_call_id, t.content) for t in m[3:5]] == [("gemini-call-1", '{"temp_c": 12}'),
                                                             ("gemini-call-2", '{"temp_c": 18}')]
    assert m[5].content.startswith("Paris is 12 °C") and "[executableCode:" in m[5].content
    assert request.tools[0].parameters == {"type": "object", "properties": {"city": {"type": "string"}},
                                           "required": ["city"]}
    text = notes(request)
    for expected in ("contents[1].parts[1]: thoughtSignature", "2 functionCall part(s) carry no id",
                     "tools[1]: built-in tool(s) googleSearch", "codeExecutionResult"):
        assert expected in text
    assert request.recorded.max_output_tokens == 512


def test_gemini_in_a_cassette_usage_cache_and_stream():
    requests = import_file(FORMATS_DIR / "cassette_providers.json").requests
    cached, streamed = requests[2:4]
    assert cached.recorded.model == "gemini-2.5-flash" and cached.recorded.format == "vcr-cassette/gemini-generate"
    assert (cached.recorded.input_tokens, cached.recorded.cached_input_tokens) == (4100, 4096)
    assert "uses cached content cachedContents/abc123" in notes(cached)
    assert streamed.recorded.model == "gemini-2.0-flash"  # from the Vertex URL
    assert (streamed.recorded.input_tokens, streamed.recorded.finish_reason) == (5, "STOP")
    assert streamed.output[0].content == "One, two."


def test_gemini_real_cassettes():
    (request,) = import_file(real("gemini-generate/openinference-test_response_with_multiple_tool_calls[False]"
                                  ".yaml")).requests
    assert roles(request) == "su" and request.recorded.model == "gemini-2.0-flash"
    assert request.recorded.input_tokens == 64 and [t.name for t in request.tools] == ["get_weather"]
    assert request.tools[0].parameters["properties"]["unit"]["type"] == "string"
    assert [c.arguments for c in request.output[0].tool_calls] == [{"location": "Boston"}, {"location": "New Delhi"}]
    first, second = import_file(real("gemini-generate/pydantic-ai-test_google_model_thinking_part.yaml")).requests
    assert roles(first) == "su" and first.recorded.input_tokens == 29 and [t.name for t in first.tools] == ["dummy"]
    assert roles(second) == "suau" and second.recorded.input_tokens == 1280
    assert second.messages[2].content.startswith("[reasoning:") and "Crossing the street" in second.messages[2].content
    assert "thoughtSignature" in notes(second)


# ------------------------------------------------------------------------------------------
# Bedrock Converse


def test_bedrock_body_every_block_type():
    imported = import_file(FORMATS_DIR / "bedrock_body.json")
    assert imported.format.name == "bedrock-converse"
    (request,) = imported.requests
    assert roles(request) == "suattau"
    m = request.messages
    assert m[0].content == "You are a support agent for a bike shop."
    assert "[image: image/png, 70 bytes]" in m[1].content and "Order 42: one bell" in m[1].content
    assert m[2].content.startswith("[reasoning: 35 chars]") and "Let me check." in m[2].content
    assert [c.id for c in m[2].tool_calls] == ["tu_order", "tu_carrier"]
    assert [(t.tool_call_id, t.content) for t in m[3:5]] == [("tu_order", '{"status": "shipped"}'),
                                                             ("tu_carrier", "delayed one day")]
    assert m[6].content == "Thanks!"
    assert [t.name for t in request.tools] == ["lookup_order", "carrier_status"]
    r = request.recorded
    assert (r.model, r.max_output_tokens) == ("anthropic.claude-3-5-sonnet-20240620-v1:0", 300)
    assert "reasoningContent kept as a placeholder" in notes(request)


def test_bedrock_in_a_cassette_and_a_nock_recording():
    converse = import_file(FORMATS_DIR / "cassette_providers.json").requests[4]
    r = converse.recorded
    assert (r.model, r.input_tokens, r.cached_input_tokens, r.finish_reason) == ("amazon.nova-lite-v1:0", 12, 10,
                                                                                 "end_turn")
    imported = import_file(FORMATS_DIR / "nock_bedrock.json")
    assert imported.format.name == "nock-recording"
    (request,) = imported.requests
    assert roles(request) == "su" and request.recorded.input_tokens == 17
    assert request.recorded.model == "anthropic.claude-3-haiku-20240307-v1:0"
    assert any("not model calls and were skipped: POST /" in str(w) for w in imported.warnings)


def test_bedrock_real_files():
    first, second = import_file(real("bedrock-converse/pydantic-ai-test_bedrock_anthropic_tool_with_thinking.yaml"
                                     )).requests
    assert roles(first) == "u" and [t.name for t in first.tools] == ["get_user_country"]
    assert first.recorded.input_tokens == 397 and first.recorded.model == "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
    assert roles(second) == "uat" and second.recorded.input_tokens == 547
    assert [c.id for c in second.messages[1].tool_calls] == ["tooluse_4Lo0VS-FT5yev_-skOCQdw"]
    assert second.messages[2].content == "Mexico"
    (request,) = import_file(real("bedrock-converse/openinference-js-should-handle-system-prompt-with-multi-turn-"
                                  "conversation.json")).requests
    assert roles(request) == "suau" and request.recorded.input_tokens == 50
    assert request.messages[0].content == "You are a helpful assistant that tells jokes."
    assert request.recorded.max_output_tokens == 100


# ------------------------------------------------------------------------------------------
# bad input: one line naming the format and the place


@pytest.mark.parametrize("data, fmt, place", [
    ({"model": "m", "input": [{"role": "user", "content": 3}]}, "openai-responses", "input[0].content"),
    ({"model": "m", "input": [{"type": "message"}]}, "openai-responses", "input[0].role"),
    ({"model": "m", "input": ["hello"]}, "openai-responses", "input[0]"),
    ({"model": "m", "input": [{"role": "wizard", "content": "x"}]}, "openai-responses", "input[0].role"),
    ({"contents": [{"role": "user", "parts": "hi"}]}, "gemini-generate", "contents[0].parts"),
    ({"contents": [{"role": "user", "parts": [{"text": 5}]}]}, "gemini-generate", "contents[0].parts[0].text"),
    ({"contents": [{"role": "bot", "parts": []}]}, "gemini-generate", "contents[0].role"),
    ({"contents": [], "tools": [{"functionDeclarations": [{"description": "no name"}]}]}, "gemini-generate",
     "tools[0].functionDeclarations[0]"),
    ({"messages": [{"role": "user", "content": [{"toolUse": "x"}]}], "inferenceConfig": {}}, "bedrock-converse",
     "messages[0].content[0].toolUse"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}, 7]}], "inferenceConfig": {}}, "bedrock-converse",
     "messages[0].content[1]"),
    ({"messages": [{"role": "user", "content": [{"text": "a"}]}], "toolConfig": {"tools": "x"}}, "bedrock-converse",
     "toolConfig.tools"),
])
def test_bad_bodies_name_format_and_place(data, fmt, place):
    with pytest.raises(FormatError) as info:
        import_data(data)
    assert info.value.format_name == fmt and info.value.place == place
    assert "\n" not in str(info.value) and f"{fmt}: {place}: " in str(info.value)


@pytest.mark.parametrize("name, fmt", [("responses_body.json", "openai-responses"),
                                       ("gemini_body.json", "gemini-generate"),
                                       ("bedrock_body.json", "bedrock-converse"),
                                       ("nock_bedrock.json", "nock-recording")])
def test_truncated_bodies_name_format_and_line(tmp_path, name, fmt):
    text = (FORMATS_DIR / name).read_text()
    path = tmp_path / name
    path.write_text(text[:len(text) * 2 // 3])
    with pytest.raises(FormatError) as info:
        import_file(path)
    assert info.value.format_name == fmt and info.value.line is not None and "truncated" in str(info.value)


def test_detection_by_content_not_name(tmp_path):
    for name, fmt in (("responses_body.json", "openai-responses"), ("gemini_body.json", "gemini-generate"),
                      ("bedrock_body.json", "bedrock-converse")):
        path = tmp_path / "request.txt"
        path.write_text((FORMATS_DIR / name).read_text())
        assert detect(path).name == fmt


# ------------------------------------------------------------------------------------------
# fuzzing: a mutated body is read or refused with our error, never a crash


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(mutations(fixture("responses_body.json")))
def test_fuzzed_responses_bodies(data):
    import_or_refuse(data)


@FUZZ
@given(mutations(fixture("gemini_body.json")))
def test_fuzzed_gemini_bodies(data):
    import_or_refuse(data)


@FUZZ
@given(mutations(fixture("bedrock_body.json")))
def test_fuzzed_bedrock_bodies(data):
    import_or_refuse(data)


@FUZZ
@given(mutations(fixture("cassette_providers.json")))
def test_fuzzed_provider_cassettes(data):
    import_or_refuse(data)


@FUZZ
@given(mutations(fixture("nock_bedrock.json")))
def test_fuzzed_nock_recordings(data):
    import_or_refuse(data)
