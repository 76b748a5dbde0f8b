"""Exports of observability and eval platforms: a Langfuse trace (with its observations), a Phoenix
span list, a promptfoo eval export. Each model call they hold (a Langfuse GENERATION, a Phoenix LLM
span, a promptfoo result) becomes one request."""
from __future__ import annotations

import json
from typing import Any

from ..contracts import ChatMessage
from .genai import (CACHED_INPUT_KEYS, Event, SpanView, attribute_tools, chat_message, chat_messages, is_model_call, request_from_span,
                    span_node)
from .model import ImportedRequest, ImportNote, Recorded, SpanNode
from .normalise import (Context, Draft, Malformed, Outcome, as_int, finish, output_messages, parse_json_text,
                        read_parts, shown_names, tool_definitions, updated)
from .timing import unix_seconds

LANGFUSE = "langfuse-trace"
PHOENIX = "phoenix-spans"
PROMPTFOO = "promptfoo-export"


# ------------------------------------------------------------------------------------------
# Langfuse


def is_langfuse(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("trace"), dict) and (
            isinstance(data.get("observations"), list) or isinstance(data["trace"].get("observations"), list)):
        return True
    return isinstance(data, dict) and isinstance(data.get("observations"), list) and "projectId" in data


def import_langfuse(data: dict[str, Any]) -> Outcome:
    trace = data.get("trace") if isinstance(data.get("trace"), dict) else data
    observations = data.get("observations")
    key = "observations"
    if not isinstance(observations, list):
        observations, key = trace.get("observations"), "trace.observations"
    if not isinstance(observations, list):
        raise Malformed("observations", "a Langfuse export needs a list of observations")
    for i, obs in enumerate(observations):
        if not isinstance(obs, dict):
            raise Malformed(f"{key}[{i}]", f"an observation must be an object, found {type(obs).__name__}")
    generations = {o.get("id") for o in observations if o.get("type") == "GENERATION"}
    wrappers = {o.get("parentObservationId") for o in observations
                if o.get("type") == "GENERATION" and o.get("parentObservationId") in generations}
    out = Outcome()
    out.spans = [_observation_node(o, trace, o.get("id") in generations and o.get("id") not in wrappers)
                 for o in observations if o.get("id")]
    skipped: list[str] = []
    for i, obs in enumerate(observations):
        place = f"{key}[{i}]"
        name = str(obs.get("name") or obs.get("id") or place)
        if obs.get("type") != "GENERATION":
            skipped.append(f"{name} ({obs.get('type')})")
            continue
        if obs.get("id") in wrappers:
            out.warnings.append(ImportNote(place, f"generation {name!r} wraps another generation (the provider "
                                                     "call); only the inner call is imported"))
            continue
        try:
            out.requests.append(_generation(obs, trace, place))
        except Malformed as exc:
            out.fail(exc, "observation", f"{name} (observation {obs.get('id')})")
    if skipped:
        out.warnings.append(ImportNote(key, f"{len(skipped)} observation(s) are not generations and were "
                                               f"skipped: {shown_names(skipped)}"))
    return out


def _generation(obs: dict[str, Any], trace: dict[str, Any], place: str) -> ImportedRequest:
    metadata = parse_json_text(obs.get("metadata"))
    attrs = metadata.get("attributes") if isinstance(metadata, dict) else None
    attrs = dict(attrs) if isinstance(attrs, dict) else {}
    trace_id = obs.get("traceId") or trace.get("id")
    label = f"{obs.get('name') or 'generation'} (observation {obs.get('id')})"
    usage = obs.get("usageDetails") if isinstance(obs.get("usageDetails"), dict) else {}
    params = obs.get("modelParameters") if isinstance(obs.get("modelParameters"), dict) else {}
    view = SpanView(attributes=attrs, place=f"{place}.metadata.attributes", name=obs.get("name"),
                    trace_id=trace_id, span_id=obs.get("id"))
    if is_model_call(view) and any(k.startswith(("gen_ai.input", "gen_ai.prompt", "llm.input_messages",
                                                  "ai.prompt.messages")) for k in attrs):
        imported = request_from_span(view, label, LANGFUSE)
    else:
        imported = _from_input(obs, params, place, label, trace_id)
    if not imported.tools:  # a generation read from its input still offered the tools its attributes name
        ctx = Context()
        tools = obs.get("toolDefinitions")
        imported.tools = tool_definitions(tools, f"{place}.toolDefinitions", ctx) if tools else \
            attribute_tools(attrs, view.place, ctx)
        imported.warnings += ctx.warnings
    if not imported.output:
        imported.output = _langfuse_output(obs.get("output"))
    imported.recorded = updated(
        imported.recorded, start_time=unix_seconds(obs.get("startTime")), end_time=unix_seconds(obs.get("endTime")),
        parent_span_id=obs.get("parentObservationId"), cached_input_tokens=_langfuse_cached(usage, attrs),
        conversation_id=attrs.get("gen_ai.conversation.id") if isinstance(attrs.get("gen_ai.conversation.id"), str)
        else None,
        model=imported.recorded.model or obs.get("model"),
        max_output_tokens=imported.recorded.max_output_tokens or as_int(
            params.get("max_tokens") or params.get("max_completion_tokens") or params.get("max_output_tokens")),
        input_tokens=imported.recorded.input_tokens or as_int(usage.get("input")) or as_int(obs.get("inputUsage")),
        output_tokens=imported.recorded.output_tokens or as_int(usage.get("output")) or as_int(obs.get("outputUsage")),
        finish_reason=imported.recorded.finish_reason or params.get("finishReason"))
    return imported


# Langfuse's usage keys for input read from the provider's prompt cache (OpenAI, LangChain, Anthropic mappings).
_LANGFUSE_CACHED = ("input_cached_tokens", "input_cache_read", "prompt_details.cache_read", "cache_read_input_tokens",
                    "input_cache_read_tokens", "cached_tokens")


def _langfuse_cached(usage: dict[str, Any], attrs: dict[str, Any]) -> int | None:
    for key in _LANGFUSE_CACHED:
        if as_int(usage.get(key)) is not None:
            return as_int(usage.get(key))
    for key in CACHED_INPUT_KEYS:
        if as_int(attrs.get(key)) is not None:
            return as_int(attrs.get(key))
    return None


def _observation_node(obs: dict[str, Any], trace: dict[str, Any], model_call: bool) -> SpanNode:
    return SpanNode(span_id=str(obs["id"]), parent_id=obs.get("parentObservationId"), name=str(obs.get("name") or ""),
                    kind=str(obs.get("type") or ""), model_call=model_call,
                    trace_id=obs.get("traceId") or trace.get("id"), start_time=unix_seconds(obs.get("startTime")),
                    end_time=unix_seconds(obs.get("endTime")))


def _from_input(obs: dict[str, Any], params: dict[str, Any], place: str, label: str,
                trace_id: Any) -> ImportedRequest:
    """Messages from the observation's ``input``: a chat message list (OpenAI, Vercel AI SDK or
    Responses API items), ``{messages, system}``, or ``{prompt, system}``."""
    ctx = Context()
    where = f"{place}.input"
    value = parse_json_text(obs.get("input"))
    drafts: list[Draft] = []
    if isinstance(value, dict) and isinstance(value.get("system"), str):
        drafts.append(Draft("system", value["system"], f"{where}.system"))
    elif isinstance(params.get("instructions"), str):  # the Responses API sends its system prompt apart
        drafts.append(Draft("system", params["instructions"], f"{place}.modelParameters.instructions"))
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
        where += ".messages"
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        drafts.append(Draft("user", value["prompt"], f"{where}.prompt"))
    elif isinstance(value, str):
        drafts.append(Draft("user", value, where))
    elif isinstance(value, list):
        drafts += chat_messages(value, where, ctx)
    else:
        raise Malformed(where, "no input messages recorded")
    recorded = Recorded(format=f"{LANGFUSE}/input", name=obs.get("name"), trace_id=trace_id, span_id=obs.get("id"),
                        source_place=place, model=obs.get("model"), provider=params.get("system"))
    return finish(label, drafts, [], recorded, ctx, output=_langfuse_output(obs.get("output")))


def _langfuse_output(value: Any) -> list[ChatMessage]:
    """The recorded answer: text, a Responses API object, or a list of output items / tool calls."""
    value = parse_json_text(value)
    if isinstance(value, str):
        return [ChatMessage(role="assistant", content=value)]
    if isinstance(value, dict) and isinstance(value.get("output"), list):  # Responses API object
        value = value["output"]
    elif isinstance(value, dict) and isinstance(value.get("choices"), list) and value["choices"]:  # a completion
        value = value["choices"][0].get("message") if isinstance(value["choices"][0], dict) else None
    if isinstance(value, dict) and "role" in value:  # one chat message
        try:
            return output_messages(chat_message(value, "output", Context()))
        except Malformed:
            return []
    if not isinstance(value, list):
        return []
    parts: list[Any] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        if "toolCallId" in item and "type" not in item:  # Vercel AI SDK tool call
            item = {"type": "tool-call", **item}
        if item.get("type") == "message" and isinstance(item.get("content"), list):
            parts += item["content"]
        elif item.get("type") in ("function_call", "tool-call", "text", "output_text"):
            parts.append(item)
    try:
        read = read_parts(parts, "output", Context())
    except Malformed:  # the answer is shown for reference only; a shape we do not know is left out
        return []
    if not read.texts and not read.calls:
        return []
    return [ChatMessage(role="assistant", content=read.text(), tool_calls=read.calls)]


# ------------------------------------------------------------------------------------------
# Phoenix


def phoenix_spans(data: Any) -> list[Any] | None:
    """The span list of a Phoenix export (a list, ``{"data": [...]}``), or ``None`` if it is not one."""
    spans = data.get("data") if isinstance(data, dict) else data
    if isinstance(spans, list) and spans and all(isinstance(s, dict) for s in spans) and all(
            isinstance(s.get("context"), dict) and ("span_kind" in s or "attributes" in s) for s in spans):
        return spans
    return None


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Nested attribute objects to dotted keys; lists stay whole (the readers take both forms)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value


def import_phoenix(spans: list[Any], lines: list[int | None] | None = None) -> Outcome:
    out = Outcome()
    skipped: list[str] = []
    for i, span in enumerate(spans):
        place = f"line {lines[i]}" if lines and lines[i] is not None else f"[{i}]"
        if not isinstance(span, dict) or not isinstance(span.get("context"), dict):
            raise Malformed(place, "a Phoenix span needs a 'context' with trace_id and span_id")
        attrs: dict[str, Any] = {}
        _flatten(span.get("attributes") or {}, "", attrs)
        events = [Event(str(e.get("name") or ""), e.get("attributes") if isinstance(e.get("attributes"), dict) else {},
                        place=f"{place}.events[{j}]")
                  for j, e in enumerate(span.get("events") or []) if isinstance(e, dict)]
        view = SpanView(attributes=attrs, place=place, name=span.get("name"),
                        trace_id=span["context"].get("trace_id"), span_id=span["context"].get("span_id"),
                        events=events, kind_hint=span.get("span_kind"), parent_id=span.get("parent_id"),
                        start_time=unix_seconds(span.get("start_time")), end_time=unix_seconds(span.get("end_time")))
        out.spans.append(span_node(view, is_model_call(view)))
        if not is_model_call(view):
            skipped.append(f"{view.name} ({span.get('span_kind') or 'no kind'})")
            continue
        label = f"{view.name or 'llm'} (span {view.span_id})"
        try:
            out.requests.append(request_from_span(view, label, PHOENIX))
        except Malformed as exc:
            out.fail(exc, "span", label)
    if skipped:
        out.warnings.append(ImportNote("", f"{len(skipped)} span(s) are not LLM spans and were skipped: "
                                              f"{shown_names(skipped)}"))
    return out


# ------------------------------------------------------------------------------------------
# promptfoo


def is_promptfoo(data: Any) -> bool:
    return isinstance(data, dict) and "evalId" in data and "results" in data


def import_promptfoo(data: dict[str, Any]) -> Outcome:
    """Each eval result is one call: its rendered prompt (a chat message list when the prompt is one,
    else a single user message), the provider, and the usage promptfoo recorded."""
    results = data.get("results")
    results = results.get("results") if isinstance(results, dict) else results
    if not isinstance(results, list):
        raise Malformed("results.results", "a promptfoo export needs a list of results")
    out = Outcome()
    for i, result in enumerate(results):
        place = f"results.results[{i}]"
        if not isinstance(result, dict):
            raise Malformed(place, f"a result must be an object, found {type(result).__name__}")
        try:
            out.requests.append(_promptfoo_result(result, place, i))
        except Malformed as exc:
            out.fail(exc, "result", f"result {i + 1}")
    return out


def _promptfoo_result(result: dict[str, Any], place: str, index: int) -> ImportedRequest:
    prompt = result.get("prompt") if isinstance(result.get("prompt"), dict) else {}
    raw = prompt.get("raw")
    if not isinstance(raw, str):
        raise Malformed(f"{place}.prompt.raw", "no rendered prompt")
    ctx = Context()
    decoded = parse_json_text(raw)
    drafts: list[Draft] = []
    if isinstance(decoded, list) and decoded and all(isinstance(m, dict) and "role" in m for m in decoded):
        for j, message in enumerate(decoded):  # a chat prompt is rendered as a JSON message list
            drafts += chat_message(message, f"{place}.prompt.raw[{j}]", ctx)
    else:
        drafts.append(Draft("user", raw, f"{place}.prompt.raw"))
    provider = result.get("provider")
    provider_id = provider.get("id") if isinstance(provider, dict) else provider
    vendor, _, model = str(provider_id or "").partition(":")
    response = result.get("response") if isinstance(result.get("response"), dict) else {}
    usage = response.get("tokenUsage") if isinstance(response.get("tokenUsage"), dict) else {}
    output = response.get("output")
    recorded = Recorded(format=PROMPTFOO, model=model or None, provider=vendor or None, source_place=place,
                        input_tokens=as_int(usage.get("prompt")), output_tokens=as_int(usage.get("completion")),
                        finish_reason=response.get("finishReason"), name=result.get("id"))
    label = f"result {index + 1}: {provider_id} test {result.get('testIdx', '?')}"
    answer = [ChatMessage(role="assistant", content=output if isinstance(output, str) else json.dumps(output))] \
        if output is not None else []
    return finish(label, drafts, [], recorded, ctx, output=answer)
