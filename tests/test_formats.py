"""Importers on the project's synthetic fixtures (fixtures/formats/): the format is told by content,
each model call becomes one normalised request, broken structures are kept, and what cannot be
mapped is a warning with its place."""
from __future__ import annotations

import base64
import json
import shutil

import pytest
from support import FIXTURES

from core import InputFileError
from core.formats import FormatError, UnsupportedFormat, detect, import_data, import_file

FORMATS_DIR = FIXTURES / "formats"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

EXPECTED = [  # file, format, number of requests
    ("openai_request_response.json", "openai-chat", 1),
    ("openai_broken_body.json", "openai-chat", 1),
    ("anthropic_body.json", "anthropic-messages", 1),
    ("otlp_traces.json", "otlp-json", 4),
    ("otlp_traces.jsonl", "otlp-jsonl", 2),
    ("openllmetry_spans.json", "otlp-json", 2),
    ("openinference_spans.json", "otlp-json", 1),
    ("cassette_stream.yaml", "vcr-cassette", 2),
    ("langfuse_trace.json", "langfuse-trace", 2),
    ("phoenix_spans.json", "phoenix-spans", 1),
]


def roles(request) -> list[str]:
    return [m.role for m in request.messages]


def pairs(request) -> list[tuple[str, str]]:
    """(call id, the id its result answers) for every tool result, in order."""
    calls = {c.id for m in request.messages for c in m.tool_calls}
    return [(m.tool_call_id if m.tool_call_id in calls else "?", m.tool_call_id) for m in request.messages
            if m.role == "tool"]


@pytest.mark.parametrize("name, fmt, count", EXPECTED)
def test_every_fixture_is_detected_by_content_and_imports(name, fmt, count):
    assert detect(FORMATS_DIR / name).name == fmt
    imported = import_file(FORMATS_DIR / name)
    assert imported.format.name == fmt
    assert len(imported.requests) == count
    for request in imported.requests:
        assert len(request.sections) == len(request.messages) == len(request.places)
        assert request.recorded.format.startswith(fmt)


def test_detection_ignores_the_file_name(tmp_path):
    disguised = tmp_path / "notes.yaml"
    shutil.copy(FORMATS_DIR / "otlp_traces.json", disguised)
    assert detect(disguised).name == "otlp-json"
    disguised = tmp_path / "trace.json"
    shutil.copy(FORMATS_DIR / "cassette_stream.yaml", disguised)
    assert detect(disguised).name == "vcr-cassette"
    assert detect(json.loads((FORMATS_DIR / "anthropic_body.json").read_text())).name == "anthropic-messages"


def test_openai_body_with_response_usage():
    (request,) = import_file(FORMATS_DIR / "openai_request_response.json").requests
    assert roles(request) == ["system", "user", "assistant", "user", "assistant", "tool", "tool"]
    assert request.messages[0].content.startswith("You are the on-call assistant")  # developer -> system
    size = len(base64.b64decode(PNG_1PX))
    assert request.messages[3].content == ("Here is this morning's thermal camera shot. Compare it with the sensor "
                                           f"for B7 and B9.\n[image: image/png, {size} bytes]")
    calls = request.messages[4].tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("call_b7", "read_sensor", {"rack": "B7"}),
                                                            ("call_b9", "read_sensor", {"rack": "B9"})]
    assert pairs(request) == [("call_b7", "call_b7"), ("call_b9", "call_b9")]
    assert request.messages[6].content == '{"rack": "B9", "inlet_c": 24.0}'  # text parts of a tool message
    assert [t.name for t in request.tools] == ["read_sensor", "open_ticket"]
    assert request.sections == ["instructions", "history", "history", "current", "tool_exchanges", "tool_exchanges",
                                "tool_exchanges"]
    rec = request.recorded
    assert (rec.model, rec.provider, rec.input_tokens, rec.output_tokens, rec.finish_reason, rec.max_output_tokens) \
        == ("gpt-4o-mini", "openai", 412, 27, "stop", 300)
    assert request.output[0].content.startswith("B7 inlet is 33.5 C")


def test_placeholders_are_reported_not_silent():
    imported = import_file(FORMATS_DIR / "openai_request_response.json")
    assert any("placeholders (1 image)" in w.message for w in imported.warnings)


def test_a_broken_body_is_kept_as_it_is():
    imported = import_file(FORMATS_DIR / "openai_broken_body.json")
    (request,) = imported.requests
    assert roles(request) == ["system", "system", "user", "assistant", "tool", "tool"]
    route, stock = request.messages[3].tool_calls
    assert route.arguments == {} and route.raw_arguments == '{"street": "Quay Street", "time": "06:00"'
    assert stock.raw_arguments is None and stock.arguments == {"item": "croissant"}
    assert [m.tool_call_id for m in request.messages[4:]] == ["call_stock", "call_ghost"]  # the unknown id stays
    bad = [w for w in imported.warnings if w.place == "messages[3].tool_calls[0]"]
    assert bad and "not valid JSON" in bad[0].message


def test_anthropic_body():
    imported = import_file(FORMATS_DIR / "anthropic_body.json")
    (request,) = imported.requests
    assert roles(request) == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[0].content == "You are a travel desk assistant for Lumen Rail.\nQuote fares in euros."
    assistant = request.messages[2]
    assert assistant.content == "Let me look up Friday's fares."
    assert [(c.id, c.arguments) for c in assistant.tool_calls] == [
        ("toolu_fares_01", {"from": "Lyon", "to": "Turin", "day": "Friday"})]
    assert pairs(request) == [("toolu_fares_01", "toolu_fares_01")]
    assert request.messages[3].content.startswith('[{"train": "TGV 9241"')
    assert request.messages[4].content.startswith("Also, is this seat map")
    assert "[image: image/jpeg, " in request.messages[4].content
    assert [t.name for t in request.tools] == ["search_fares"]
    assert request.tools[0].parameters["required"] == ["from", "to", "day"]
    assert any(w.place == "tools[1]" and "web_search" in w.message for w in imported.warnings)
    assert (request.recorded.provider, request.recorded.max_output_tokens) == ("anthropic", 1024)


def test_otlp_json_spans_become_requests_with_their_ids():
    imported = import_file(FORMATS_DIR / "otlp_traces.json")
    semconv, structured, event, old_events = imported.requests
    assert [(r.recorded.trace_id, r.recorded.span_id) for r in imported.requests] == [
        ("a1" * 16, "1000000000000002"), ("a1" * 16, "1000000000000004"),
        ("b2" * 16, "2000000000000001"), ("b2" * 16, "2000000000000002")]
    assert [r.recorded.format for r in imported.requests] == [
        "otlp-json/gen_ai", "otlp-json/gen_ai", "otlp-json/gen_ai-event", "otlp-json/gen_ai-message-events"]
    # JSON-string attributes: system instructions first, then the messages
    assert roles(semconv) == ["system", "user", "assistant", "tool"]
    assert pairs(semconv) == [("call_8812", "call_8812")]
    assert semconv.messages[3].content == '{"status": "shipped", "carrier": "PostNord"}'
    assert [t.name for t in semconv.tools] == ["lookup_order"]
    assert (semconv.recorded.input_tokens, semconv.recorded.output_tokens, semconv.recorded.finish_reason) == \
        (240, 31, "stop")
    assert semconv.output[0].content == "Order 8812 has shipped with PostNord."
    # structured (kvlist) attributes, a blob part, a cut-off answer
    assert roles(structured) == ["system", "user"]
    assert structured.messages[1].content.endswith(f"[image: image/png, {len(base64.b64decode(PNG_1PX))} bytes]")
    assert structured.recorded.finish_reason == "length"
    # the details event and the pre-1.37 per-message events
    assert [m.content for m in event.messages] == ["You are a terse assistant.", "Name three Nordic capitals."]
    assert event.recorded.input_tokens == 21
    assert roles(old_events) == ["system", "user", "assistant", "tool"]
    assert old_events.messages[2].tool_calls[0].arguments == {"value": 3, "from": "m", "to": "ft"}
    assert pairs(old_events) == [("call_conv", "call_conv")]
    assert old_events.output[0].content == "3 metres is about 9.84 feet."


def test_otlp_non_model_spans_and_dropped_attributes_are_reported():
    imported = import_file(FORMATS_DIR / "otlp_traces.json")
    messages = [str(w) for w in imported.warnings]
    assert any("2 span(s) are not model calls" in m and "invoke_agent order-desk" in m
               and "execute_tool lookup_order" in m for m in messages)
    dropped = [w for w in imported.warnings if "droppedAttributesCount" in w.message]
    assert [w.place for w in dropped] == ["resourceSpans[0].scopeSpans[0].spans[3]"]
    assert dropped[0].message.startswith("3 attribute(s) were dropped")


def test_otlp_jsonl_places_name_the_line():
    imported = import_file(FORMATS_DIR / "otlp_traces.jsonl")
    first, second = imported.requests
    assert first.recorded.source_place.startswith("line 1: ")
    assert second.recorded.source_place.startswith("line 2: ")
    assert roles(second) == ["user"] and second.recorded.span_id == "4000000000000002"


def test_openllmetry_flattened_keys_and_a_dropped_index():
    imported = import_file(FORMATS_DIR / "openllmetry_spans.json")
    full, gappy = imported.requests
    assert full.recorded.format == "otlp-json/openllmetry"
    assert roles(full) == ["system", "user", "assistant", "tool"]
    assert full.messages[2].tool_calls[0].arguments == {"room": "Fika", "time": "10:00"}
    assert pairs(full) == [("call_book", "call_book")]
    assert [t.name for t in full.tools] == ["book_room"]
    assert (full.recorded.input_tokens, full.recorded.output_tokens, full.recorded.finish_reason) == (120, 9, "stop")
    assert full.output[0].content == "Room Fika is booked for 10:00."
    assert [m.content for m in gappy.messages] == ["You schedule meeting rooms.", "Which rooms are free at noon?",
                                                   "And at 14:00?"]
    places = [w.place for w in gappy.warnings]
    assert "resourceSpans[0].scopeSpans[0].spans[1] / gen_ai.prompt.2" in places
    assert any("2 attribute(s) were dropped" in w.message for w in gappy.warnings)


def test_openinference_flattened_keys():
    (request,) = import_file(FORMATS_DIR / "openinference_spans.json").requests
    assert request.recorded.format == "otlp-json/openinference"
    assert roles(request) == ["system", "user", "assistant", "tool"]
    assert request.messages[1].content == "Is this mug in stock in blue?\n[image: https://cdn.example.com/mug-0042.jpg]"
    assert request.messages[2].tool_calls[0].arguments == {"sku": "MUG-0042", "colour": "blue"}
    assert pairs(request) == [("call_stock42", "call_stock42")]
    assert [t.name for t in request.tools] == ["stock_level"]
    rec = request.recorded
    assert (rec.model, rec.input_tokens, rec.output_tokens, rec.max_output_tokens) == ("gpt-4.1-mini", 143, 10, 150)


def test_cassette_gzip_binary_body_and_streamed_response():
    imported = import_file(FORMATS_DIR / "cassette_stream.yaml")
    streamed, anthropic = imported.requests
    assert streamed.recorded.format == "vcr-cassette/openai-chat"
    assert [m.content for m in streamed.messages] == ["You write haiku about the weather.",
                                                      "A haiku about fog over the harbour, please."]
    assert (streamed.recorded.input_tokens, streamed.recorded.output_tokens, streamed.recorded.finish_reason) == \
        (29, 17, "stop")
    assert (streamed.recorded.trace_id, streamed.recorded.span_id) == ("c3" * 16, "d4" * 8)
    assert streamed.output[0].content == "Grey breath on the quay / masts fade into milk / a horn answers"
    assert anthropic.recorded.format == "vcr-cassette/anthropic-messages"
    assert roles(anthropic) == ["system", "user"]
    assert anthropic.recorded.input_tokens == 214  # 14 + 200 read from the prompt cache
    assert any("GET /v1/models" in w.message for w in imported.warnings)


def test_langfuse_generations_from_input_and_from_attributes():
    imported = import_file(FORMATS_DIR / "langfuse_trace.json")
    classify, reply = imported.requests
    assert classify.recorded.format == "langfuse-trace/input"
    assert roles(classify) == ["system", "user"]
    assert (classify.recorded.input_tokens, classify.recorded.output_tokens) == (31, 1)
    assert classify.output[0].content == "billing"
    assert reply.recorded.format == "langfuse-trace/gen_ai"
    assert roles(reply) == ["system", "user", "assistant", "tool"]
    assert pairs(reply) == [("call_lookup", "call_lookup")]
    assert [t.name for t in reply.tools] == ["lookup_order"]
    assert (reply.recorded.trace_id, reply.recorded.span_id, reply.recorded.input_tokens) == ("a1" * 16, "obs-reply",
                                                                                              118)
    assert any("support-reply (SPAN)" in w.message for w in imported.warnings)


def test_phoenix_span_list():
    imported = import_file(FORMATS_DIR / "phoenix_spans.json")
    (request,) = imported.requests
    assert roles(request) == ["system", "user"]
    assert (request.recorded.trace_id, request.recorded.span_id) == ("e5" * 16, "7000000000000002")
    assert (request.recorded.input_tokens, request.recorded.output_tokens) == (38, 6)
    assert request.output[0].content == "30 days from delivery."
    assert any("rag.query (CHAIN)" in w.message for w in imported.warnings)


def test_phoenix_nested_attributes_and_jsonl(tmp_path):
    data = json.loads((FORMATS_DIR / "phoenix_spans.json").read_text())
    llm = data["data"][1]
    llm["attributes"] = {"llm": {"model_name": "gpt-4o-mini", "input_messages": [
        {"message": {"role": "user", "content": "Nested form?"}}], "token_count": {"prompt": 9}}}
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in data["data"]) + "\n")
    imported = import_file(path)
    assert imported.format.name == "phoenix-spans"
    (request,) = imported.requests
    assert [m.content for m in request.messages] == ["Nested form?"]
    assert (request.recorded.model, request.recorded.input_tokens) == ("gpt-4o-mini", 9)


def test_otlp_logs_with_the_details_event():
    logs = {"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{"scope": {"name": "genai"}, "logRecords": [
        {"timeUnixNano": "1", "eventName": "gen_ai.client.inference.operation.details",
         "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
         "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "17"}},
             {"key": "gen_ai.input.messages", "value": {"arrayValue": {"values": [{"kvlistValue": {"values": [
                 {"key": "role", "value": {"stringValue": "user"}},
                 {"key": "parts", "value": {"arrayValue": {"values": [{"kvlistValue": {"values": [
                     {"key": "type", "value": {"stringValue": "text"}},
                     {"key": "content", "value": {"stringValue": "Hi from a log record"}}]}}]}}}]}}]}}}]}]}]}]}
    (request,) = import_data(logs).requests
    assert [m.content for m in request.messages] == ["Hi from a log record"]
    assert (request.recorded.trace_id, request.recorded.span_id, request.recorded.input_tokens) == (
        "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 17)


def test_yaml_tags_are_read_as_plain_data_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    text = (FORMATS_DIR / "cassette_stream.yaml").read_text()
    text = text.replace("version: 1", f"version: !!python/object/apply:os.system ['touch {marker}']\n"
                                      "recorded_with: !!python/unicode 'vcrpy'")
    path = tmp_path / "tagged.yaml"
    path.write_text(text)
    imported = import_file(path)
    assert not marker.exists()
    assert len(imported.requests) == 2
    tags = [w for w in imported.warnings if "YAML tag" in w.message]
    assert len(tags) == 2 and "python/object/apply:os.system" in tags[0].message


def test_our_own_files_and_unknown_json_are_refused_clearly(tmp_path):
    assert detect(FIXTURES / "demo.result.json").name == "context-inspector"
    with pytest.raises(UnsupportedFormat, match="core.load_entries"):
        import_file(FIXTURES / "demo.result.json")
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}')
    with pytest.raises(UnsupportedFormat) as info:
        import_file(path)
    assert "keys hello" in str(info.value) and "supported: openai-chat" in str(info.value)
    assert isinstance(info.value, InputFileError)


# ------------------------------------------------------------------------------------------
# malformed or truncated files: one clear error naming the format and the place


def truncated(tmp_path, name: str, keep: float = 0.6):
    text = (FORMATS_DIR / name).read_text()
    path = tmp_path / f"cut-{name}"
    path.write_text(text[:int(len(text) * keep)])
    return path


@pytest.mark.parametrize("name, fmt", [
    ("openai_request_response.json", "openai-chat"), ("anthropic_body.json", "anthropic-messages"),
    ("otlp_traces.json", "otlp-json"), ("openllmetry_spans.json", "otlp-json"),
    ("openinference_spans.json", "otlp-json"), ("langfuse_trace.json", "langfuse-trace"),
    ("phoenix_spans.json", "phoenix-spans")])
def test_a_truncated_json_file_names_format_and_line(tmp_path, name, fmt):
    path = truncated(tmp_path, name)
    with pytest.raises(FormatError) as info:
        import_file(path)
    error = info.value
    assert error.format_name == fmt and error.line is not None
    assert str(error).startswith(f"{path}:{error.line}:") and fmt in str(error) and "truncated" in str(error)


def test_a_truncated_jsonl_line_names_its_line(tmp_path):
    lines = (FORMATS_DIR / "otlp_traces.jsonl").read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text(lines[0] + "\n" + lines[1][:len(lines[1]) // 2] + "\n")
    with pytest.raises(FormatError) as info:
        import_file(path)
    assert info.value.line == 2 and info.value.format_name == "otlp-json"


def test_a_truncated_cassette_names_the_yaml_line(tmp_path):
    text = (FORMATS_DIR / "cassette_stream.yaml").read_text()
    cut = text[:text.index("masts fade")]  # inside a quoted string
    path = tmp_path / "cut.yaml"
    path.write_text(cut)
    with pytest.raises(FormatError) as info:
        import_file(path)
    assert info.value.format_name == "vcr-cassette" and info.value.line is not None
    assert "malformed YAML" in str(info.value)


def write_json(tmp_path, data, name="broken.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1))  # several lines: a JSON file, not one JSON Lines record
    return path


def fixture_json(name):
    return json.loads((FORMATS_DIR / name).read_text())


def test_structurally_broken_bodies_name_the_place(tmp_path):
    body = fixture_json("openai_broken_body.json")
    body["messages"] = "hello"
    with pytest.raises(FormatError, match=r"openai-chat: messages: expected a list of messages"):
        import_file(write_json(tmp_path, body))
    body = fixture_json("anthropic_body.json")
    body["messages"][0]["content"] = 42
    with pytest.raises(FormatError, match=r"anthropic-messages: messages\[0\]\.content: content must be a string"):
        import_file(write_json(tmp_path, body))
    body = fixture_json("openai_broken_body.json")
    body["messages"][2]["role"] = "robot"
    with pytest.raises(FormatError, match=r"messages\[2\]\.role: unknown message role 'robot'"):
        import_file(write_json(tmp_path, body))


def test_a_broken_otlp_envelope_names_the_place(tmp_path):
    data = fixture_json("otlp_traces.json")
    data["resourceSpans"][0]["scopeSpans"] = "spans"
    with pytest.raises(FormatError, match=r"otlp-json: resourceSpans\[0\]\.scopeSpans: expected a list"):
        import_file(write_json(tmp_path, data))


def test_an_unreadable_span_is_skipped_unless_it_is_the_only_one(tmp_path):
    data = fixture_json("openllmetry_spans.json")
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for kv in spans[0]["attributes"]:
        if kv["key"] == "gen_ai.prompt.1.role":
            kv["value"] = {"stringValue": "robot"}
    imported = import_file(write_json(tmp_path, data))
    assert len(imported.requests) == 1
    skipped = [w for w in imported.warnings if "this span could not be read" in w.message]
    assert skipped[0].place == "resourceSpans[0].scopeSpans[0].spans[0] / gen_ai.prompt.1.role"
    (failed,) = imported.failed  # a row of its own, before the call that was read
    assert failed.position == 0 and "unknown message role 'robot'" in failed.reason
    assert [type(c).__name__ for c in imported.calls()] == ["FailedCall", "ImportedRequest"]
    del spans[1]
    with pytest.raises(FormatError, match=r"otlp-json: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\] / "
                                          r"gen_ai\.prompt\.1\.role: unknown message role 'robot'"):
        import_file(write_json(tmp_path, data))


def test_openinference_without_roles_and_genai_text_that_is_not_json(tmp_path):
    data = fixture_json("openinference_spans.json")
    attrs = data["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"]
    data["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"] = [
        kv for kv in attrs if kv["key"] != "llm.input_messages.0.message.role"]
    with pytest.raises(FormatError, match=r"llm\.input_messages\.0\.role: a message needs a role"):
        import_file(write_json(tmp_path, data))
    with pytest.raises(FormatError, match=r"genai-attributes: gen_ai\.input\.messages: expected JSON"):
        import_file(write_json(tmp_path, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[{oops"}))


def test_a_broken_cassette_body(tmp_path):
    text = (FORMATS_DIR / "cassette_stream.yaml").read_text()
    start = text.index("body: !!binary |\n") + len("body: !!binary |\n")
    end = text.index("    headers:", start)
    corrupt = base64.b64encode(b"\x1f\x8b\x08\x00 not gzip at all").decode()
    path = tmp_path / "corrupt.yaml"
    path.write_text(text[:start] + f"        {corrupt}\n" + text[end:])
    imported = import_file(path)
    assert len(imported.requests) == 1  # the Anthropic interaction still imports
    (skipped,) = [w for w in imported.warnings if "interaction could not be read" in w.message]
    assert skipped.place == "interactions[0].request.body" and "cannot be decompressed" in skipped.message
    data = {"interactions": [{"response": {}}]}
    with pytest.raises(FormatError, match=r"vcr-cassette: interactions\[0\]: an interaction needs a 'request'"):
        import_file(write_json(tmp_path, data))


def test_broken_platform_exports(tmp_path):
    data = fixture_json("langfuse_trace.json")
    for obs in data["observations"]:
        if obs["type"] == "GENERATION":
            obs["input"], obs["metadata"] = 42, "{}"
    with pytest.raises(FormatError, match=r"langfuse-trace: observations\[1\]\.input: no input messages"):
        import_file(write_json(tmp_path, data))
    data = fixture_json("phoenix_spans.json")
    data["data"][1]["attributes"]["llm.input_messages.1.message.role"] = "robot"
    with pytest.raises(FormatError, match=r"phoenix-spans: \[1\] / llm\.input_messages\.1\.role"):
        import_file(write_json(tmp_path, data))
    promptfoo = {"evalId": "eval-1", "results": {"version": 3, "results": "none"}}
    with pytest.raises(FormatError, match=r"promptfoo-export: results\.results: a promptfoo export needs a list"):
        import_file(write_json(tmp_path, promptfoo))


def test_a_json_cassette_in_ruby_vcr_shape(tmp_path):
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Ping?"}]}
    answer = {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                                                        "message": {"role": "assistant", "content": "Pong."}}],
              "usage": {"prompt_tokens": 8, "completion_tokens": 2}}
    cassette = {"http_interactions": [{
        "request": {"method": "post", "uri": "https://api.openai.com/v1/chat/completions",
                    "body": {"encoding": "UTF-8", "string": json.dumps(body)}, "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                     "body": {"encoding": "UTF-8", "string": json.dumps(answer)}}}], "recorded_with": "VCR 6.2.0"}
    path = write_json(tmp_path, cassette, "cassette.json")
    assert detect(path).detail.endswith("(1 interactions, JSON)")
    (request,) = import_file(path).requests
    assert request.label == "interaction 1: POST api.openai.com/v1/chat/completions"
    assert [m.content for m in request.messages] == ["Ping?"]
    assert (request.recorded.input_tokens, request.recorded.finish_reason, request.output[0].content) == (8, "stop",
                                                                                                          "Pong.")


def test_an_error_response_is_a_warning_not_usage(tmp_path):
    cassette = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages",
                    "body": json.dumps({"model": "claude-haiku-4-5", "max_tokens": 10,
                                        "messages": [{"role": "user", "content": "Hi"}]})},
        "response": {"status": {"code": 429, "message": "Too Many Requests"},
                     "body": {"string": json.dumps({"type": "error", "error": {"type": "rate_limit_error",
                                                                                "message": "slow down"}})}}}]}
    (request,) = import_file(write_json(tmp_path, cassette)).requests
    assert request.recorded.input_tokens is None
    messages = [w.message for w in request.warnings]
    assert "the provider answered with an error: slow down" in messages
    assert "the provider answered HTTP 429; no usage was recorded" in messages


def test_a_saved_genai_message_list_with_a_bad_role(tmp_path):
    path = write_json(tmp_path, [{"role": "narrator", "parts": [{"type": "text", "content": "Once"}]}])
    with pytest.raises(FormatError, match=r"genai-messages: gen_ai\.input\.messages\[0\]\.role: unknown message role"):
        import_file(path)


@pytest.mark.parametrize("part, text", [
    ({"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}, "[audio: wav, 3 bytes]"),
    ({"type": "file", "file": {"file_data": "data:application/pdf;base64,QUJD"}}, "[file: application/pdf, 3 bytes]"),
    ({"type": "file", "file": {"file_id": "file-123"}}, "[file: id file-123]"),
    ({"type": "image", "source": {"type": "url", "url": "https://x.test/y.png"}}, "[image: https://x.test/y.png]"),
    ({"type": "image", "image": "QUJDRA==", "mediaType": "image/png"}, "[image: image/png, 4 bytes]"),
    ({"type": "uri", "modality": "video", "mime_type": "video/mp4", "uri": "gs://b/v.mp4"},
     "[video: video/mp4, gs://b/v.mp4]"),
    ({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "QUJDRA=="}},
     "[document: application/pdf, 4 bytes]"),
    ({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain words"}},
     "plain words"),
    ({"type": "thinking", "thinking": "abcdef", "signature": "sig"}, "[thinking: 6 chars]"),
    ({"type": "hologram", "payload": 1}, '[hologram: 34 chars of JSON]'),
])
def test_non_text_parts_become_typed_placeholders_with_their_size(part, text):
    (request,) = import_data({"model": "m", "messages": [{"role": "user", "content": [part]}]}).requests
    assert request.messages[0].content == text
