"""Exports of a result: our JSON, an OpenAI body, an OTLP span with GenAI attributes and counts, and a
one-file HTML report; round trips through the importers; redaction keeps counts and ids only."""
from __future__ import annotations

import html
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FIXTURES, base_request, default_counter, fixture_request, turn

from core import (SECTION_COLOURS, SECTION_ORDER, ChatMessage, ToolCall, assemble, audit, load_result, naive_truncate,
                  parse_request, parse_result, result_segments, section_title)
from core.export import (EXPORT_KINDS, export_text, html_report, openai_body, otlp_trace, result_json,
                         span_attributes)
from core.formats import count_imported, import_data, import_file

NAMES = ["tool_exchange", "demo", "rag_literal_boundary", "trip_conversation", "rag_tight"]


def assembled(name: str):
    return assemble(fixture_request(name), default_counter())


def otlp_span(trace: dict) -> dict:
    (resource,) = trace["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    (span,) = scope["spans"]
    return span


def span_attrs(span: dict) -> dict:
    out = {}
    for kv in span["attributes"]:
        value = kv["value"]
        out[kv["key"]] = int(value["intValue"]) if "intValue" in value else value.get("stringValue", value)
    return out


def contents(result) -> list[str]:
    texts = [m.content for m in result.messages if m.content and len(m.content) >= 8]
    texts += [json.dumps(c.arguments) for m in result.messages for c in m.tool_calls if c.arguments]
    return texts


# ------------------------------------------------------------------------------------------


def test_openai_body_is_what_would_be_sent():
    result = assembled("tool_exchange")
    body = openai_body(result, model="gpt-4o")
    assert set(body) == {"model", "messages", "tools"} and body["model"] == "gpt-4o"
    assistant = next(m for m in body["messages"] if m.get("tool_calls"))
    call = assistant["tool_calls"][0]
    assert call["type"] == "function" and isinstance(call["function"]["arguments"], str)
    assert json.loads(call["function"]["arguments"]) == result.messages[2].tool_calls[0].arguments
    assert assistant["content"] is None
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert tool["tool_call_id"] == call["id"]
    assert body["tools"][0] == {"type": "function", "function": {
        "name": result.tools[0].name, "description": result.tools[0].description,
        "parameters": result.tools[0].parameters}}
    assert not assembled("rag_tight").tools
    assert "tools" not in openai_body(assembled("rag_tight"))  # the API refuses an empty list


def test_invalid_arguments_are_exported_as_recorded():
    imported = import_file(FIXTURES / "formats" / "openai_broken_body.json").requests[0]
    body = openai_body(count_imported(imported, default_counter()))
    call = body["messages"][3]["tool_calls"][0]
    assert call["function"]["arguments"] == '{"street": "Quay Street", "time": "06:00"'
    assert body["model"] == "gpt-4o-mini"  # the imported request's own model


@pytest.mark.parametrize("name", NAMES)
def test_result_to_openai_body_and_back_gives_the_same_messages(name):
    result = assembled(name)
    (imported,) = import_data(openai_body(result)).requests
    assert imported.messages == result.messages
    assert imported.tools == result.tools


@pytest.mark.parametrize("name", NAMES)
def test_result_to_otlp_and_back_gives_the_same_counts_and_ids(name):
    result = assembled(name)
    trace = otlp_trace(result)
    span = otlp_span(trace)
    (imported,) = import_data(trace).requests
    assert imported.messages == result.messages and imported.tools == result.tools
    assert (imported.recorded.trace_id, imported.recorded.span_id) == (span["traceId"], span["spanId"])
    assert imported.recorded.input_tokens == result.input_tokens
    assert imported.recorded.max_output_tokens == result.max_new_tokens
    recounted = count_imported(imported, default_counter())
    assert recounted.input_tokens == result.input_tokens
    assert recounted.model_extra["count_drift"] == 0
    call_ids = [c.id for m in result.messages for c in m.tool_calls]
    assert [c.id for m in imported.messages for c in m.tool_calls] == call_ids
    attrs = span_attrs(span)
    for key, value in span_attributes(result).items():
        assert attrs[key] == value


def test_an_imported_result_keeps_its_trace_and_span_ids():
    imported = import_file(FIXTURES / "formats" / "otlp_traces.json").requests[0]
    span = otlp_span(otlp_trace(count_imported(imported, default_counter())))
    assert (span["traceId"], span["spanId"]) == ("a1" * 16, "1000000000000002")
    attrs = span_attrs(span)
    assert attrs["gen_ai.provider.name"] == "openai" and attrs["context_inspector.provider_input_tokens"] == 240


def test_otlp_span_shape_and_determinism():
    result = assembled("tool_exchange")
    trace = otlp_trace(result, time_unix_nano=1717000000000000000)
    span = otlp_span(trace)
    assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"]) and re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
    assert span["kind"] == 3 and span["startTimeUnixNano"] == "1717000000000000000"
    attrs = span_attrs(span)
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.usage.input_tokens"] == result.input_tokens
    assert json.loads(attrs["gen_ai.system_instructions"]) == [{"type": "text", "content": result.messages[0].content}]
    assert isinstance(attrs["gen_ai.input.messages"], str) and isinstance(attrs["gen_ai.tool.definitions"], str)
    assert json.dumps(otlp_trace(result)) == json.dumps(otlp_trace(result))
    assert len(span["attributes"]) <= 128  # the default SDK attribute limit


def test_span_attributes_are_counts_never_content():
    result = assembled("demo")
    attrs = span_attributes(result)
    assert all(isinstance(v, (int, str)) for v in attrs.values())
    texts = " ".join(str(v) for v in attrs.values())
    for text in contents(result):
        assert text not in texts
    p = "context_inspector."
    assert attrs[f"{p}counter"] == "mistral:tekken_240911"
    assert (attrs[f"{p}input_tokens"], attrs[f"{p}input_budget"], attrs[f"{p}context_limit"]) == (
        result.input_tokens, result.input_budget, result.context_limit)
    for decision in ("kept", "dropped", "required"):
        assert attrs[f"{p}entries.{decision}"] == sum(e.decision == decision for e in result.trace)
    for section, tokens in result.sent_tokens_by_section().items():
        assert attrs[f"{p}section.{section}.tokens"] == tokens
    for section, tokens in result.section_tokens("dropped").items():
        assert attrs[f"{p}section.{section}.dropped_tokens"] == tokens
    assert attrs[f"{p}dropped_turns"] == result.dropped_turns > 0


@pytest.mark.parametrize("kind", ["json", "openai", "otlp", "html"])
def test_redaction_keeps_counts_and_ids_only(kind):
    result = assembled("tool_exchange")
    text = export_text(result, kind, redact=True, findings=audit(result, default_counter()))
    for secret in contents(result):
        assert secret not in text
    first = result.messages[0].content
    assert f"[redacted: {len(first)} chars]" in text
    for call_id in (c.id for m in result.messages for c in m.tool_calls):
        assert call_id in text
    if kind != "openai":  # a request body carries no counts
        assert str(result.input_tokens) in text


def test_redacted_exports_still_import_with_the_same_structure():
    result = assembled("tool_exchange")
    for data in (openai_body(result, redact=True), otlp_trace(result, redact=True)):
        (imported,) = import_data(data).requests
        assert [(m.role, m.tool_call_id, [c.id for c in m.tool_calls]) for m in imported.messages] == \
            [(m.role, m.tool_call_id, [c.id for c in m.tool_calls]) for m in result.messages]
    again = parse_result(json.loads(result_json(result, redact=True)))
    assert again.input_tokens == result.input_tokens and again.trace == result.trace and again.request is None


def test_html_report_is_self_contained_and_escaped():
    result = naive_truncate(fixture_request("rag_literal_boundary"), default_counter())
    findings = audit(result, default_counter())
    assert findings
    page = html_report(result, findings)
    assert page.startswith("<!DOCTYPE html>") and page == html_report(result, findings)
    lowered = page.lower()
    for forbidden in ("http://", "https://", "<script", "<link", "src=", "@import", "<iframe", "<object"):
        assert forbidden not in lowered
    assert page.count("<svg") == 2  # the bar fit to the input, and the whole window
    # passage text carrying literal evidence tags is shown escaped, never as markup
    assert "<evidence" not in page and "&lt;evidence" in page
    for entry in result.trace:
        assert f"<td>{html.escape(entry.id)}</td><td>{entry.decision}</td><td class=\"n\">{entry.tokens}</td>" in page
    for finding in findings:
        assert finding.rule in page


def test_html_budget_bar_shows_dropped_items_ghosted():
    result = assembled("demo")
    assert result.dropped_turns and result.dropped_evidence
    page = html_report(result, [])
    svg = page[page.index("<svg"):page.index("</svg>")]
    drops = [s for s in result_segments(result, view="fit") if s.kind == "dropped"]
    assert svg.count('fill-opacity="0.35"') == len(drops)
    assert "No findings." in page
    assert f"allowance {result.input_budget:,}" in page and f"context limit {result.context_limit:,}" in page


def test_html_report_uses_the_apps_section_names_order_and_colours():
    result = assembled("demo")
    page = html_report(result, [])
    legend = page[page.index("</svg>", page.index("</svg>") + 1):page.index("<h2>Composition")]
    titles = [section_title(s) for s in SECTION_ORDER if any(e.section == s for e in result.trace)]
    assert [t for t in titles if t in legend] == titles
    assert sorted(titles, key=legend.index) == titles  # prompt order
    for section in SECTION_ORDER:
        if any(e.section == section for e in result.trace):
            assert f'background:{SECTION_COLOURS[section]}"></span>{section_title(section)}' in legend
    # the bar carries numbers: each sent section's label with its tokens, and the limit
    svg = page[page.index("<svg"):page.index("</svg>")]
    for section, tokens in result.sent_tokens_by_section().items():
        assert f"{section_title(section)}: {tokens:,} tokens sent" in svg
    assert ">Evidence 314<" in svg and ">Tools 221<" in svg
    assert f"context limit {result.context_limit:,}" in svg


def test_html_report_composition_adds_up_and_folds_many_drops():
    history = [m for n in range(60) for m in turn(n, words=6)]
    result = assemble(parse_request(base_request(history=history, context_limit=900, max_new_tokens=100)),
                      default_counter())
    dropped = [e for e in result.trace if e.decision == "dropped"]
    page = html_report(result, [])
    assert f"History: {len(dropped)} dropped, {sum(e.tokens for e in dropped):,} tokens" in page
    table = page[page.index("<h2>Composition"):page.index("<h2>Items")]
    assert f'<td>context limit (total)</td><td class="n">{result.context_limit:,}</td><td class="n">100.0%</td>' \
        in table


def test_html_report_of_a_plan_shows_each_sections_share_and_allowance():
    result = load_result(FIXTURES / "trip_plan_drop_oldest.result.json")
    table = html_report(result)[:]
    table = table[table.index("<h2>Composition"):table.index("<h2>Items")]
    assert "<th>share</th><th>allowance</th>" in table
    assert '>Recent</td><td class="n">' in table and '<td class="n">85%</td><td class="n">214</td>' in table


def test_html_messages_with_urls_and_markup_are_text():
    result = assembled("demo")
    tricky = result.model_copy(update={"messages": result.messages + [
        ChatMessage(role="user", content='see https://example.com/x?a=1&b=<b>bold</b> "quoted"')]})
    page = html_report(tricky)
    assert "https://" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page and "&amp;b=" in page
    assert "The audit was not run" in page
    assert "[redacted:" in html_report(tricky, redact=True) and "example.com" not in html_report(tricky, redact=True)


def test_export_text_kinds():
    result = assembled("tool_exchange")
    assert set(EXPORT_KINDS) == {"json", "openai", "otlp", "html"}
    assert export_text(result, "json") == result.to_json()
    assert json.loads(export_text(result, "openai"))["messages"]
    assert json.loads(export_text(result, "otlp"))["resourceSpans"]
    with pytest.raises(ValueError, match="unknown export kind"):
        export_text(result, "pdf")


printable = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=40)


@settings(max_examples=40, deadline=None)
@given(turns=st.lists(st.tuples(printable, printable), min_size=1, max_size=4), arguments=st.dictionaries(
    st.text(min_size=1, max_size=8), st.one_of(st.integers(), printable), max_size=3))
def test_openai_round_trip_keeps_any_text(turns, arguments):
    messages = [ChatMessage(role="system", content="rules")]
    for user, answer in turns:
        messages += [ChatMessage(role="user", content=user), ChatMessage(role="assistant", content=answer)]
    messages += [ChatMessage(role="assistant", tool_calls=[ToolCall(id="call_1", name="f", arguments=arguments)]),
                 ChatMessage(role="tool", tool_call_id="call_1", content=turns[-1][0])]
    result = assembled("demo").model_copy(update={"messages": messages})
    (imported,) = import_data(openai_body(result)).requests
    assert imported.messages == messages


def test_a_plan_result_holding_a_lone_surrogate_exports_to_otlp(tmp_path):
    """Found in session 16: a plan message may hold a lone surrogate (plan messages are not strict strings), and the
    OTLP export's default trace and span ids (a hash of the result's JSON) raised ``UnicodeEncodeError``. Now the
    ids are made; writing the JSON out names the text that is not UTF-8 (``core.outputs.write_output``)."""
    from core import ContextAssembler, ContextPlan, Message, SectionPlan, make_counter
    from core.errors import RequestError
    from core.export import otlp_trace
    from core.outputs import write_output

    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent")), budget_tokens=400)
    data = {"system": [Message(role="system", content="Be brief.")],
            "recent": [Message(role="user", content="x \ud800 y", id="m0")]}
    result = ContextAssembler(plan, make_counter()).assemble(data)
    span = otlp_trace(result)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16
    with pytest.raises(RequestError, match="not UTF-8"):
        write_output(json.dumps(otlp_trace(result), ensure_ascii=False), str(tmp_path / "otlp.json"), [])
    assert not (tmp_path / "otlp.json").exists()
