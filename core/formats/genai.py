"""One model call from a span's attributes (and events), whichever convention recorded it.

Read in this order, the first that carries input messages wins (the others are named in a warning):
OTel GenAI attributes (``gen_ai.input.messages`` with ``gen_ai.system_instructions``, as JSON text or
structured), the same on the ``gen_ai.client.inference.operation.details`` event, the pre-1.37
per-message events (``gen_ai.user.message``...), OpenLLMetry's flattened ``gen_ai.prompt.N.*``,
OpenInference's ``llm.input_messages.N.*``, the Vercel AI SDK's ``ai.prompt.messages`` and the
deprecated ``gen_ai.prompt`` JSON.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..contracts import ChatMessage, ToolDefinition
from .model import ImportedRequest, Recorded, SpanNode
# chat_message(s) and Event are re-exported for the span importers (otlp, platforms, langfuse, otel_js).
from .genai_messages import (MESSAGE_EVENTS, Event, chat_list, chat_message, chat_messages, first, indexed,  # noqa: F401
                             inside, message_events, oi_message, openinference, openllmetry, semconv, unflatten)
from .normalise import (Context, Draft, Malformed, as_int, drafts_from, finish, output_messages, parse_json_text,
                        read_parts, tool_definition, tool_definitions, updated)

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
# Input tokens the provider read from its prompt cache, as each convention names them.
CACHED_INPUT_KEYS = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                     "gen_ai.usage.cached_input_tokens", "gen_ai.usage.cache_read_tokens",
                     "llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens")


def span_node(span: "SpanView", model_call: bool) -> SpanNode:
    """The span as a node of its trace's tree."""
    return SpanNode(span_id=span.span_id or span.place, parent_id=span.parent_id, name=span.name or "",
                    kind=str(span.kind_hint or span.attributes.get("openinference.span.kind")
                             or span.attributes.get("gen_ai.operation.name") or ""),
                    model_call=model_call, trace_id=span.trace_id, start_time=span.start_time,
                    end_time=span.end_time)


@dataclass
class SpanView:
    """What the mapper needs of a span, whatever exported it."""

    attributes: dict[str, Any]
    place: str
    name: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    events: list[Event] = field(default_factory=list)
    kind_hint: str | None = None  # e.g. Phoenix's span_kind column
    dropped_attributes: int = 0
    dropped_events: int = 0
    parent_id: str | None = None
    start_time: float | None = None  # Unix seconds
    end_time: float | None = None


def is_model_call(span: SpanView) -> bool:
    a = span.attributes
    if any(k in a for k in ("gen_ai.input.messages", "gen_ai.system_instructions", "ai.prompt.messages",
                            "gen_ai.prompt")):
        return True
    if any(k.startswith(("gen_ai.prompt.", "llm.input_messages", "llm.prompts.")) for k in a):
        return True
    if any(e.name == DETAILS_EVENT or e.name in MESSAGE_EVENTS for e in span.events):
        return True
    operation = a.get("gen_ai.operation.name")
    kind = span.kind_hint or a.get("openinference.span.kind")
    return (isinstance(operation, str) and operation in MODEL_OPERATIONS) or (isinstance(kind, str)
                                                                             and kind.upper() == "LLM")


# ------------------------------------------------------------------------------------------


def request_from_span(span: SpanView, label: str, file_format: str) -> ImportedRequest:
    """The request a model-call span recorded. Raises ``Malformed`` when its messages cannot be read."""
    ctx = Context()
    a = span.attributes
    if span.dropped_attributes:
        ctx.warn(span.place, f"{span.dropped_attributes} attribute(s) were dropped by the exporter's attribute "
                             "limit (droppedAttributesCount): messages or usage may be missing")
    if span.dropped_events:
        ctx.warn(span.place, f"{span.dropped_events} event(s) were dropped (droppedEventsCount): message events "
                             "may be missing")
    details = next((e for e in span.events if e.name == DETAILS_EVENT), None)
    sources = _sources(span, details)
    flavour, drafts = "none", []
    if sources:
        flavour, reader = sources[0]
        drafts = reader(ctx)
        if len(sources) > 1:
            ctx.warn(span.place, f"input messages read from {flavour}; also present and not read: "
                                 + ", ".join(name for name, _ in sources[1:]))
    else:
        ctx.warn(span.place, "a model call without input messages (content capture off?); only its figures are kept")
    tools = attribute_tools(a, span.place, ctx, details)
    recorded = _recorded(span, details, label, f"{file_format}/{flavour}" if flavour != "none" else file_format)
    output = _output(a, details, span, ctx)
    if recorded.finish_reason is None and output[1]:
        recorded = updated(recorded, finish_reason=output[1])
    return finish(label, drafts, tools, recorded, ctx, output=output[0])


def _sources(span: SpanView, details: Event | None) -> list[tuple[str, Callable[[Context], list[Draft]]]]:
    """Every convention present on the span that carries input messages, in reading order."""
    a = span.attributes
    place = span.place
    found: list[tuple[str, Callable[[Context], list[Draft]]]] = []
    if "gen_ai.input.messages" in a or "gen_ai.system_instructions" in a:
        found.append(("gen_ai", lambda ctx: semconv(a, place, ctx)))
    if details is not None and ("gen_ai.input.messages" in details.attributes
                                or "gen_ai.system_instructions" in details.attributes):
        found.append(("gen_ai-event", lambda ctx: semconv(details.attributes, details.place, ctx)))
    if any(e.name in MESSAGE_EVENTS for e in span.events):
        found.append(("gen_ai-message-events", lambda ctx: message_events(span.events, ctx)))
    prefix = next((p for p in ("gen_ai.prompt", "llm.prompts") if any(k.startswith(p + ".") for k in a)), None)
    if prefix is not None:
        found.append(("openllmetry", lambda ctx: openllmetry(a, prefix, place, ctx)))
    if any(k.startswith("llm.input_messages") for k in a):
        found.append(("openinference", lambda ctx: openinference(a, place, ctx)))
    if "ai.prompt.messages" in a:
        found.append(("vercel-ai", lambda ctx: chat_list(a["ai.prompt.messages"], inside(place, "ai.prompt.messages"),
                                                          ctx)))
    if isinstance(a.get("gen_ai.prompt"), str):  # deprecated: the whole prompt as JSON text
        found.append(("gen_ai.prompt", lambda ctx: chat_list(a["gen_ai.prompt"], inside(place, "gen_ai.prompt"), ctx)))
    return found


def attribute_tools(a: dict[str, Any], place: str, ctx: Context, details: Event | None = None) -> list[ToolDefinition]:
    """Tool definitions from whichever attribute convention carries them."""
    for attrs, where in ((a, place), (details.attributes if details else {}, details.place if details else place)):
        if "gen_ai.tool.definitions" in attrs:
            return tool_definitions(attrs["gen_ai.tool.definitions"], inside(where, "gen_ai.tool.definitions"), ctx)
    for prefix, key in (("llm.tools", "tool"), ("llm.request.functions", None)):
        items = unflatten(a, prefix)
        if items is None:
            continue
        tools = []
        for i, item in indexed(items, inside(place, prefix), ctx):
            value = item.get(key) if key and isinstance(item, dict) else item
            if key and isinstance(value, dict):
                value = value.get("json_schema", value)
            tool = tool_definition(value, inside(place, f"{prefix}.{i}"), ctx)
            if tool is not None:
                tools.append(tool)
        return tools
    if "ai.prompt.tools" in a:
        return tool_definitions(a["ai.prompt.tools"], inside(place, "ai.prompt.tools"), ctx)
    if "model_request_parameters" in a:  # pydantic-ai: its function tools and the output tools it also sends
        params = parse_json_text(a["model_request_parameters"])
        where = inside(place, "model_request_parameters")
        if not isinstance(params, dict):
            raise Malformed(where, f"expected an object, found {type(params).__name__}")
        return (tool_definitions(params.get("function_tools"), f"{where}.function_tools", ctx)
                + tool_definitions(params.get("output_tools"), f"{where}.output_tools", ctx))
    return []


def _recorded(span: SpanView, details: Event | None, label: str, fmt: str) -> Recorded:
    a = dict(details.attributes) if details else {}
    a.update(span.attributes)  # the span's own figures first
    invocation = parse_json_text(a.get("llm.invocation_parameters"))
    invocation = invocation if isinstance(invocation, dict) else {}
    finish_reasons = parse_json_text(first(a, "gen_ai.response.finish_reasons", "ai.response.finishReason"))
    if isinstance(finish_reasons, list):
        finish_reasons = finish_reasons[0] if finish_reasons else None
    return Recorded(
        format=fmt,
        model=first(a, "gen_ai.request.model", "gen_ai.response.model", "llm.model_name", "llm.request.model",
                    "ai.model.id"),
        provider=first(a, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider"),
        input_tokens=as_int(first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                                  "llm.token_count.prompt", "llm.usage.prompt_tokens", "ai.usage.inputTokens",
                                  "ai.usage.promptTokens")),
        output_tokens=as_int(first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                   "llm.token_count.completion", "llm.usage.completion_tokens",
                                   "ai.usage.outputTokens", "ai.usage.completionTokens")),
        finish_reason=(finish_reasons if isinstance(finish_reasons, str)
                       else first(a, "gen_ai.completion.0.finish_reason")),
        trace_id=span.trace_id, span_id=span.span_id, name=span.name or label, source_place=span.place,
        max_output_tokens=as_int(first(a, "gen_ai.request.max_tokens", "llm.request.max_tokens")
                                 or invocation.get("max_completion_tokens") or invocation.get("max_tokens")),
        start_time=span.start_time, end_time=span.end_time, parent_span_id=span.parent_id,
        cached_input_tokens=as_int(first(a, *CACHED_INPUT_KEYS)), conversation_id=_text(a.get("gen_ai.conversation.id")))


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


def _output(a: dict[str, Any], details: Event | None, span: SpanView,
            ctx: Context) -> tuple[list[ChatMessage], str | None]:
    """The recorded answer (for the person reading the trace; it is not part of the request)."""
    for attrs, where in ((a, span.place), (details.attributes if details else {}, details.place if details else "")):
        if "gen_ai.output.messages" in attrs:
            at = inside(where, "gen_ai.output.messages")
            messages = parse_json_text(attrs["gen_ai.output.messages"])
            if not isinstance(messages, list):
                ctx.warn(at, "not a list of messages; the recorded answer is not read")
                return [], None
            drafts: list[Draft] = []
            reason = None
            for i, m in enumerate(messages):
                if isinstance(m, dict):
                    reason = reason or m.get("finish_reason")
                    drafts += drafts_from("assistant", read_parts(m.get("parts"), f"{at}[{i}].parts", ctx), at, ctx)
            return output_messages(drafts), reason
    for prefix in ("gen_ai.completion", "llm.completions"):
        items = unflatten(a, prefix)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            item = items[0]
            calls = [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
                     for c in (item.get("tool_calls") or []) if isinstance(c, dict)]
            drafts = chat_message({"role": "assistant", "content": item.get("content"), "tool_calls": calls},
                                  inside(span.place, f"{prefix}.0"), ctx)
            return output_messages(drafts), item.get("finish_reason")
    items = unflatten(a, "llm.output_messages")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return output_messages(oi_message(items[0], inside(span.place, "llm.output_messages.0"), ctx)), None
    choices = [e for e in span.events if e.name == "gen_ai.choice"]
    if choices:
        body = choices[0].body if isinstance(choices[0].body, dict) else parse_json_text(
            choices[0].attributes.get("gen_ai.event.content", choices[0].attributes.get("body")))
        if isinstance(body, dict) and isinstance(body.get("message"), dict):
            drafts = chat_message(dict(body["message"], role=body["message"].get("role", "assistant")),
                                  choices[0].place, ctx)
            return output_messages(drafts), body.get("finish_reason")
    return [], None
