"""Counting an imported request (the trace core makes for a provider body), re-assembling it as a
core request, and the audit's findings on imported requests."""
from __future__ import annotations

import dataclasses

import pytest
from support import FIXTURES, default_counter

from core import RULES, RequestError, TemplateRefused, assemble, audit, make_counter
from core.contracts import ChatMessage
from core.formats import CountRefused, count_imported, import_data, import_file, to_core_request

FORMATS_DIR = FIXTURES / "formats"
ALL_FIXTURE_REQUESTS = [(path.name, i) for path in sorted(FORMATS_DIR.iterdir())
                        for i in range(len(import_file(path).requests))]


def request_of(name: str, index: int = 0):
    return import_file(FORMATS_DIR / name).requests[index]


def body(messages, tools=None, **extra):
    data = {"model": "gpt-4o-mini", "messages": messages, **extra}
    if tools is not None:
        data["tools"] = tools
    return import_data(data).requests[0]


TOOL = {"type": "function", "function": {"name": "lookup", "description": "Look something up.",
                                         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}


@pytest.mark.parametrize("name, index", ALL_FIXTURE_REQUESTS)
def test_entries_add_up_to_the_complete_count(name, index):
    request = request_of(name, index)
    counter = default_counter()
    result = count_imported(request, counter)
    assert result.strategy == "imported"
    assert result.messages == request.messages and result.tools == request.tools
    assert result.trace[0].section == "template"
    assert sum(e.tokens for e in result.trace) == result.input_tokens
    if result.model_extra["count_basis"] == "as recorded":
        assert result.input_tokens == counter.count(request.messages, request.tools)
    covered = sorted(i for e in result.trace for i in e.message_indices)
    assert covered == list(range(len(request.messages)))  # every message, once
    assert [e.id for e in result.trace if e.section == "tools"] == [t.name for t in request.tools]
    assert all(e.decision == "kept" for e in result.trace)


def test_per_message_entries_name_role_and_method():
    result = count_imported(request_of("openai_request_response.json"), default_counter())
    by_id = {e.id: e for e in result.trace}
    assert by_id["message-0"].section == "instructions"
    assert by_id["message-0"].reason.startswith("system message, marginal by leave-one-out")
    assert by_id["message-1"].reason == "user message, marginal by prefix counts"
    assert by_id["message-3"].section == "current" and by_id["message-3"].message_indices == [3]
    exchange = by_id["call_b7+call_b9"]  # the template refuses to cut a call from its results
    assert exchange.section == "tool_exchanges" and exchange.message_indices == [4, 5, 6]
    assert "costed together" in exchange.reason and "assistant tool-call, tool result, tool result" in exchange.reason
    assert by_id["read_sensor"].reason.startswith("tool definition offered to the model, marginal by prefix")


def test_provider_figures_and_drift_are_kept_beside_ours():
    result = count_imported(request_of("openai_request_response.json"), default_counter())
    extra = result.model_extra
    assert extra["provider_input_tokens"] == 412 and extra["provider_output_tokens"] == 27
    assert extra["count_drift"] == result.input_tokens - 412
    assert (extra["source_format"], extra["model"], extra["finish_reason"]) == ("openai-chat", "gpt-4o-mini", "stop")
    span = count_imported(request_of("otlp_traces.json"), default_counter()).model_extra
    assert (span["trace_id"], span["span_id"]) == ("a1" * 16, "1000000000000002")
    assert "count_drift" not in count_imported(request_of("anthropic_body.json"), default_counter()).model_extra


def test_budget_fields_without_and_with_a_context_limit():
    request = request_of("openai_request_response.json")  # asks for max_completion_tokens 300
    known = count_imported(request, default_counter())  # gpt-4o-mini: its window from the model registry
    assert known.context_limit == 128000 and known.input_budget == 128000 - 300
    assert known.model_extra["context_limit_source"].startswith("model registry: gpt-4o-mini has a 128000-token")
    unnamed = dataclasses.replace(request, recorded=dataclasses.replace(request.recorded, model=None))
    assumed = count_imported(unnamed, default_counter())
    assert assumed.max_new_tokens == 300 and assumed.model_extra["max_new_tokens_source"].startswith("recorded")
    assert assumed.context_limit % 1024 == 0 and assumed.context_limit >= assumed.input_tokens + 300
    assert assumed.model_extra["context_limit_source"].startswith("assumed: no context limit was given")
    assert assumed.input_budget == assumed.context_limit - 300 and not assumed.over_budget
    given = count_imported(request, default_counter(), context_limit=8192, max_new_tokens=512)
    assert (given.context_limit, given.max_new_tokens, given.input_budget) == (8192, 512, 7680)
    assert given.remaining_tokens == 7680 - given.input_tokens
    assert given.model_extra["context_limit_source"] == "given"
    tight = count_imported(request, default_counter(), context_limit=400)
    assert tight.over_budget and any(f.rule == "over-budget" for f in audit(tight))
    with pytest.raises(RequestError, match="leaves no input room"):
        count_imported(request, default_counter(), context_limit=300)


def test_text_beside_tool_calls_is_counted_apart_when_the_template_refuses_both_in_one_message():
    request = request_of("anthropic_body.json")
    counter = default_counter()
    result = count_imported(request, counter)
    extra = result.model_extra
    assert extra["count_basis"] == "adapted"
    text = "Let me look up Friday's fares."
    tokens = counter.text_token_count(text)
    assert extra["count_adaptations"] == [f"message 2: its text (30 chars) is counted apart, as {tokens} tokens of "
                                          "plain text added to the message with its tool calls alone: "
                                          "mistral:tekken_240911 refuses text and tool calls in one assistant message"]
    entry = next(e for e in result.trace if 2 in e.message_indices)
    assert "its text (30 chars) is counted apart" in entry.reason
    assert result.messages[2].content == text  # the result keeps what was recorded
    without_text = [m if i != 2 else m.model_copy(update={"content": None}) for i, m in enumerate(request.messages)]
    assert result.input_tokens == counter.count(without_text, request.tools) + tokens  # what was sent, text included
    assert sum(e.tokens for e in result.trace) == result.input_tokens
    assert not any(f.rule == "count-mismatch" for f in audit(result, counter))


def test_a_tool_result_whose_call_is_not_in_the_request_is_counted_not_refused():
    request = body([{"role": "tool", "tool_call_id": "call_earlier", "content": "stormy, 23 C"}])
    result = count_imported(request, default_counter())
    (note,) = result.model_extra["count_adaptations"]
    assert note.startswith("message 0: a tool result whose call (call_earlier) is not in this request, counted as "
                           "a user message with its text")
    assert result.input_tokens == default_counter().count([ChatMessage(role="user", content="stormy, 23 C")], [])


def test_a_trailing_assistant_message_is_not_counted_and_says_so():
    request = body([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello! How can I"}])
    assert request.sections == ["instructions", "current", "prefill"]
    result = count_imported(request, default_counter())
    assert result.model_extra["uncounted_messages"] == [2]
    last = next(e for e in result.trace if e.message_indices == [2])
    assert last.tokens == 0 and last.section == "prefill"
    assert "not counted: mistral:tekken_240911 refuses a request that ends with an assistant message" in last.reason
    assert result.input_tokens == default_counter().count(request.messages[:2], [])


def test_a_request_the_template_cannot_count_raises_count_refused():
    request = body([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                    {"role": "system", "content": "Late instructions"}, {"role": "user", "content": "Well?"}])
    with pytest.raises(CountRefused) as info:
        count_imported(request, default_counter())
    error = info.value
    assert isinstance(error, TemplateRefused) and error.label == "request body"
    assert "message 2 is a system message after the conversation started" in str(error)
    assert "Unexpected role 'system' after role 'assistant'" in str(error)
    empty = import_data({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 12}).requests[0]
    assert empty.messages == [] and empty.recorded.input_tokens == 12  # content capture off: figures only
    with pytest.raises(CountRefused, match="it has no messages"):
        count_imported(empty, default_counter())


# ------------------------------------------------------------------------------------------
# re-assemble


def test_to_core_request_maps_the_sections_and_assembles():
    imported = request_of("openai_request_response.json")
    request = to_core_request(imported, context_limit=4096, max_new_tokens=300, margin=16)
    assert request.instructions.startswith("You are the on-call assistant")
    assert [(m.role, m.id) for m in request.history] == [("user", "message-1"), ("assistant", "message-2")]
    assert request.current == imported.messages[3].content
    (exchange,) = request.tool_exchanges
    assert [c.id for c in exchange.calls] == ["call_b7", "call_b9"]
    assert [r.tool_call_id for r in exchange.results] == ["call_b7", "call_b9"]
    assert [t.name for t in request.tools] == ["read_sensor", "open_ticket"]
    assert (request.context_limit, request.max_new_tokens, request.margin, request.id) == (4096, 300, 16,
                                                                                           "request body")
    result = assemble(request, default_counter())
    assert result.kept_turns == 1 and audit(result, default_counter()) == []


def test_to_core_request_names_what_cannot_be_represented():
    with pytest.raises(RequestError) as info:
        to_core_request(request_of("openai_broken_body.json"), context_limit=4096, max_new_tokens=256)
    problems = dict(info.value.problems)
    assert "not a JSON object" in problems["messages[3]"]
    assert "tool call 'call_route' has no result" in problems["tool_exchanges[0]"]
    bare = to_core_request(body([{"role": "user", "content": "Hi"}]), context_limit=1024, max_new_tokens=64)
    assert bare.instructions == "" and bare.current == "Hi"  # no system message: none is invented
    with pytest.raises(RequestError, match="prefill or the recorded answer"):
        to_core_request(body([{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"},
                              {"role": "assistant", "content": "Hello"}]), context_limit=1024, max_new_tokens=64)
    with pytest.raises(RequestError, match="no user message"):
        to_core_request(body([{"role": "system", "content": "S"}]), context_limit=1024, max_new_tokens=64)


# ------------------------------------------------------------------------------------------
# the audit on imported requests


def test_the_audit_reports_what_a_broken_body_holds():
    result = count_imported(request_of("openai_broken_body.json"), default_counter())
    findings = {(f.rule, f.message_index, f.severity) for f in audit(result, default_counter())}
    assert findings == {
        ("instructions-placement", 1, "error"),  # two system messages, and no result.request
        ("invalid-tool-arguments", 3, "error"),
        ("tool-call-without-result", 3, "error"),
        ("unknown-tool", 3, "warning"),  # plan_route was not offered
        ("tool-result-without-call", 5, "error"),
    }


def test_duplicate_ids_and_unknown_tools_only_when_tools_are_offered():
    call = {"id": "call_same", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    messages = [{"role": "user", "content": "Twice?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_same", "content": "1"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_same", "content": "2"}]
    offered = count_imported(body(messages, [TOOL]), default_counter())
    rules = {f.rule for f in audit(offered)}
    assert "duplicate-id" in rules and "unknown-tool" not in rules
    messages[1]["tool_calls"] = [{"id": "call_x", "type": "function", "function": {"name": "other", "arguments": "{}"}}]
    messages[2]["tool_call_id"] = "call_x"
    assert "unknown-tool" in {f.rule for f in audit(count_imported(body(messages, [TOOL]), default_counter()))}
    assert "unknown-tool" not in {f.rule for f in audit(count_imported(body(messages), default_counter()))}


def test_a_cut_off_answer_is_a_warning():
    result = count_imported(request_of("otlp_traces.json", 1), default_counter())
    (finding,) = [f for f in audit(result) if f.rule == "truncated-answer"]
    assert finding.severity == "warning" and "finish_reason 'length'" in finding.message
    assert not any(f.rule == "truncated-answer" for f in audit(count_imported(request_of("otlp_traces.json", 0),
                                                                              default_counter())))


def test_new_rules_are_listed():
    assert {"invalid-tool-arguments", "unknown-tool", "truncated-answer"} <= set(RULES)


PARALLEL = [{"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "content": "Checking both.", "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{\"c\": \"Paris\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "weather", "arguments": "{\"c\": \"Rome\"}"}}]},
            {"role": "tool", "tool_call_id": "call_b", "content": "sunny"},
            {"role": "tool", "tool_call_id": "call_a", "content": "rainy"}]
WEATHER = [{"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"c": {"type": "string"}}}}}]


@pytest.mark.realworld
def test_parallel_tool_calls_are_counted_one_at_a_time_where_the_template_takes_one(real_template_tokenizer_dir):
    counter = make_counter(f"hf:{real_template_tokenizer_dir('llama31')}")
    request = body(PARALLEL, WEATHER)
    result = count_imported(request, counter)
    (note,) = result.model_extra["count_adaptations"]  # Llama 3.1 takes text beside a call: only this step
    assert note.startswith("message 1: its 2 parallel tool calls are counted one at a time")
    assert "refuses several tool calls in one message" in note
    one_by_one = [request.messages[0],
                  request.messages[1].model_copy(update={"tool_calls": request.messages[1].tool_calls[:1]}),
                  request.messages[3],
                  request.messages[1].model_copy(update={"content": None,
                                                         "tool_calls": request.messages[1].tool_calls[1:]}),
                  request.messages[2]]
    assert result.input_tokens == counter.count(one_by_one, request.tools)
    assert [e.tokens for e in result.trace if e.message_indices in ([2], [3])] == [0, 0]
    assert "uncounted_messages" not in result.model_extra  # they are counted, inside message 1's entry
    assert sum(e.tokens for e in result.trace) == result.input_tokens


@pytest.mark.realworld
def test_a_template_without_a_tool_role_is_refused_with_the_request_facts(real_template_tokenizer_dir):
    counter = make_counter(f"hf:{real_template_tokenizer_dir('gemma2')}")
    with pytest.raises(CountRefused) as info:
        count_imported(body(PARALLEL, WEATHER), counter)
    assert "it holds tool calls or tool results (some templates have no tool role)" in str(info.value)
    assert "Conversation roles must alternate" in str(info.value)
