"""One model call from a span's attributes (and events), whichever convention recorded it.

Read in this order, the first that carries input messages wins (the others are named in a warning):
OTel GenAI attributes (``gen_ai.input.messages`` with ``gen_ai.system_instructions``, as JSON text or
structured), the same on the ``gen_ai.client.inference.operation.details`` event, the pre-1.37
per-message events (``gen_ai.user.message``...), OpenLLMetry's flattened ``gen_ai.prompt.N.*``,
OpenInference's ``llm.input_messages.N.*``, the Vercel AI SDK's ``ai.prompt.messages`` and the
deprecated ``gen_ai.prompt`` JSON.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..contracts import ChatMessage, ToolDefinition
from .model import ImportedRequest, Recorded, SpanNode
from .normalise import (ROLES, Context, Draft, Malformed, as_int, drafts_from, finish, output_messages, parse_json_text,
                        read_parts, role_of, tool_call, tool_definition, tool_definitions, updated)

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
# Input tokens the provider read from its prompt cache, as each convention names them.
CACHED_INPUT_KEYS = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                     "gen_ai.usage.cached_input_tokens", "gen_ai.usage.cache_read_tokens",
                     "llm.token_count.prompt_details.cache_read", "ai.usage.cachedInputTokens")


@dataclass
class Event:
    """A span event or log record: its name, attributes and (for log records) body."""

    name: str
    attributes: dict[str, Any]
    body: Any = None
    place: str = ""


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
    return operation in MODEL_OPERATIONS or (isinstance(kind, str) and kind.upper() == "LLM")


def inside(place: str, key: str) -> str:
    """A place inside a span: ``spans[1] / gen_ai.input.messages[2]`` (just the key for a bare attributes file)."""
    return f"{place} / {key}" if place else key


def first(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def unflatten(attrs: dict[str, Any], prefix: str) -> Any:
    """Nested values from dotted keys under ``prefix`` (``llm.input_messages.0.message.role``); numeric
    levels become lists in index order. A structured value stored at ``prefix`` itself is returned as is."""
    if prefix in attrs and not isinstance(attrs[prefix], str):
        return attrs[prefix]
    root: dict[str, Any] = {}
    dot = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(dot):
            continue
        node = root
        parts = key[len(dot):].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _lists(root) if root else None


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(re.fullmatch(r"\d+", k) for k in node):
        size = max(int(k) for k in node) + 1
        return [_lists(node.get(str(i))) for i in range(size)]  # a gap stays None: reported by the reader
    return {k: _lists(v) for k, v in node.items()}


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
        found.append(("gen_ai", lambda ctx: _semconv(a, place, ctx)))
    if details is not None and ("gen_ai.input.messages" in details.attributes
                                or "gen_ai.system_instructions" in details.attributes):
        found.append(("gen_ai-event", lambda ctx: _semconv(details.attributes, details.place, ctx)))
    if any(e.name in MESSAGE_EVENTS for e in span.events):
        found.append(("gen_ai-message-events", lambda ctx: _message_events(span.events, ctx)))
    prefix = next((p for p in ("gen_ai.prompt", "llm.prompts") if any(k.startswith(p + ".") for k in a)), None)
    if prefix is not None:
        found.append(("openllmetry", lambda ctx: _openllmetry(a, prefix, place, ctx)))
    if any(k.startswith("llm.input_messages") for k in a):
        found.append(("openinference", lambda ctx: _openinference(a, place, ctx)))
    if "ai.prompt.messages" in a:
        found.append(("vercel-ai", lambda ctx: _chat_list(a["ai.prompt.messages"], inside(place, "ai.prompt.messages"),
                                                          ctx)))
    if isinstance(a.get("gen_ai.prompt"), str):  # deprecated: the whole prompt as JSON text
        found.append(("gen_ai.prompt", lambda ctx: _chat_list(a["gen_ai.prompt"], inside(place, "gen_ai.prompt"), ctx)))
    return found


def _decoded(value: Any, place: str) -> Any:
    decoded = parse_json_text(value)
    if isinstance(decoded, str):
        raise Malformed(place, "expected JSON (or a structured value), found text that is not JSON")
    return decoded


def _semconv(attrs: dict[str, Any], place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    if "gen_ai.system_instructions" in attrs:
        where = inside(place, "gen_ai.system_instructions")
        parts = read_parts(_decoded(attrs["gen_ai.system_instructions"], where), where, ctx)
        drafts.append(Draft("system", parts.text() or "", where))
    where = inside(place, "gen_ai.input.messages")
    messages = _decoded(attrs.get("gen_ai.input.messages", []), where)
    if not isinstance(messages, list):
        raise Malformed(where, f"expected a list of messages, found {type(messages).__name__}")
    for i, message in enumerate(messages):
        at = f"{where}[{i}]"
        if not isinstance(message, dict):
            raise Malformed(at, f"a message must be an object, found {type(message).__name__}")
        role = role_of(message.get("role"), f"{at}.role")
        parts = message.get("parts", message.get("content"))
        new = drafts_from(role, read_parts(parts, f"{at}.parts", ctx), at, ctx)
        if role == "system" and drafts and drafts[0].role == "system" and i == 0 \
                and new and new[0].content == drafts[0].content:
            continue  # the same system prompt recorded both ways (Langfuse and Phoenix prepend it)
        drafts += new
    return drafts


def _chat_list(value: Any, place: str, ctx: Context) -> list[Draft]:
    """Messages in OpenAI / Vercel AI SDK / Anthropic shape: ``{role, content}`` with string or parts."""
    messages = _decoded(value, place)
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise Malformed(place, f"expected a list of messages, found {type(messages).__name__}")
    return chat_messages(messages, place, ctx)


def chat_messages(messages: list[Any], place: str, ctx: Context) -> list[Draft]:
    """A list of chat messages of any framework's shape, in order (see ``chat_message``)."""
    drafts: list[Draft] = []
    for i, message in enumerate(messages):
        at = f"{place}[{i}]"
        if not isinstance(message, dict):
            raise Malformed(at, f"a message must be an object, found {type(message).__name__}")
        drafts += chat_message(message, at, ctx, earlier=drafts)
    return drafts


def _named_result(role: Any, earlier: list[Draft]) -> str | None:
    """The id of the latest call of tool ``role``: LangChain JS writes a tool result with the tool's
    name as its role (and no ``tool_call_id``)."""
    if not isinstance(role, str) or role.lower() in ROLES:
        return None
    for draft in reversed(earlier):
        for call in draft.tool_calls:
            if call.name == role:
                return call.id
    return None


def chat_message(message: dict[str, Any], at: str, ctx: Context, earlier: list[Draft] | None = None) -> list[Draft]:
    """One ``{role, content, tool_calls?, tool_call_id?}`` message: OpenAI's shape, LangChain's
    (``tool_calls`` with ``args``), OTel GenAI's (``parts``), or the Responses API's ``function_call`` /
    ``function_call_output`` items, which carry no role. ``earlier`` is what came before it in the
    same request (to pair a LangChain tool result that names its tool instead of its role)."""
    if message.get("type") in ("function_call", "function_call_output") and "role" not in message:
        parts = read_parts([message], at, ctx)
        return drafts_from("assistant" if message["type"] == "function_call" else "tool", parts, at, ctx)
    raw_role = message.get("role")
    named = _named_result(raw_role, earlier or [])
    if named is not None:
        ctx.warn(f"{at}.role", f"role {raw_role!r} is the name of the tool called as {named!r}: read as its result "
                               "(LangChain writes tool results so)")
        role = "tool"
    else:
        role = role_of(raw_role, f"{at}.role")
    content = message.get("content") if message.get("content") is not None else message.get("parts")
    parts = read_parts(content, f"{at}.content" if "content" in message else f"{at}.parts", ctx)
    calls = parse_json_text(message.get("tool_calls")) or []  # events record them as JSON text
    if not isinstance(calls, list):
        raise Malformed(f"{at}.tool_calls", f"expected a list of tool calls, found {type(calls).__name__}")
    seen = {c.id for c in parts.calls}  # LangChain keeps Anthropic's tool_use blocks in content too
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            raise Malformed(f"{at}.tool_calls[{j}]", f"a tool call must be an object, found {type(call).__name__}")
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        args = next((fn[k] for k in ("arguments", "args", "input") if k in fn), None)
        if call.get("id") in seen and call.get("id") is not None:
            continue
        parts.calls.append(tool_call(call.get("id"), fn.get("name"), args, f"{at}.tool_calls[{j}]", ctx))
    tool_call_id = message.get("tool_call_id") or (message.get("id") if role == "tool" else None) or named
    return drafts_from(role, parts, at, ctx, tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None)


def _message_events(events: list[Event], ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for event in events:
        role = MESSAGE_EVENTS.get(event.name)
        if role is None:
            continue
        body = event.body if isinstance(event.body, dict) else None
        if body is None:
            content = event.attributes.get("gen_ai.event.content", event.attributes.get("body"))
            body = parse_json_text(content) if content is not None else dict(event.attributes)
        if not isinstance(body, dict):
            body = {"content": body}
        body = dict(body, role=body.get("role") or role)
        drafts += chat_message(body, event.place, ctx)
    return drafts


def _indexed(items: Any, place: str, ctx: Context) -> list[tuple[int, Any]]:
    """Items of a flattened list; a missing index is reported (an attribute limit drops keys silently)."""
    if not isinstance(items, list):
        return []
    out = []
    for i, item in enumerate(items):
        if item is None:
            ctx.warn(f"{place}.{i}", "this index is missing (dropped by an attribute limit?)")
            continue
        out.append((i, item))
    return out


def _openllmetry(attrs: dict[str, Any], prefix: str, place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for i, item in _indexed(unflatten(attrs, prefix), inside(place, prefix), ctx):
        at = inside(place, f"{prefix}.{i}")
        if not isinstance(item, dict):
            raise Malformed(at, "expected role and content keys")
        content = item.get("content")
        decoded = parse_json_text(content)  # multimodal content is recorded as a JSON list of parts
        if isinstance(decoded, list) and all(isinstance(p, dict) and "type" in p for p in decoded):
            content = decoded
        calls = [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
                 for _, c in _indexed(item.get("tool_calls"), f"{at}.tool_calls", ctx) if isinstance(c, dict)]
        drafts += chat_message({"role": item.get("role"), "content": content, "tool_calls": calls,
                                "tool_call_id": item.get("tool_call_id")}, at, ctx)
    return drafts


def _openinference(attrs: dict[str, Any], place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for i, item in _indexed(unflatten(attrs, "llm.input_messages"), inside(place, "llm.input_messages"), ctx):
        at = inside(place, f"llm.input_messages.{i}")
        drafts += _oi_message(item, at, ctx)
    return drafts


def _oi_message(item: Any, at: str, ctx: Context) -> list[Draft]:
    message = item.get("message") if isinstance(item, dict) else None
    if not isinstance(message, dict):
        raise Malformed(at, "expected a message.role key")
    content: Any = message.get("content")
    if content is None and message.get("contents") is not None:
        content = []
        for j, c in _indexed(message["contents"], f"{at}.message.contents", ctx):
            part = c.get("message_content") if isinstance(c, dict) else None
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image":
                image = part.get("image", {}).get("image", {}) if isinstance(part.get("image"), dict) else {}
                content.append({"type": "image_url", "image_url": {"url": image.get("url")}})
            else:
                content.append({"type": part.get("type") or "text", "text": part.get("text", "")})
    calls = []
    for j, c in _indexed(message.get("tool_calls"), f"{at}.message.tool_calls", ctx):
        call = c.get("tool_call") if isinstance(c, dict) else None
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            calls.append({"id": call.get("id"), "function": {"name": fn.get("name"),
                                                               "arguments": fn.get("arguments")}})
    return chat_message({"role": message.get("role"), "content": content, "tool_calls": calls,
                         "tool_call_id": message.get("tool_call_id")}, at, ctx)


# ------------------------------------------------------------------------------------------


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
        for i, item in _indexed(items, inside(place, prefix), ctx):
            value = item.get(key) if key and isinstance(item, dict) else item
            if key and isinstance(value, dict):
                value = value.get("json_schema", value)
            tool = tool_definition(value, inside(place, f"{prefix}.{i}"), ctx)
            if tool is not None:
                tools.append(tool)
        return tools
    if "ai.prompt.tools" in a:
        return tool_definitions(a["ai.prompt.tools"], inside(place, "ai.prompt.tools"), ctx)
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
        return output_messages(_oi_message(items[0], inside(span.place, "llm.output_messages.0"), ctx)), None
    choices = [e for e in span.events if e.name == "gen_ai.choice"]
    if choices:
        body = choices[0].body if isinstance(choices[0].body, dict) else parse_json_text(
            choices[0].attributes.get("gen_ai.event.content", choices[0].attributes.get("body")))
        if isinstance(body, dict) and isinstance(body.get("message"), dict):
            drafts = chat_message(dict(body["message"], role=body["message"].get("role", "assistant")),
                                  choices[0].place, ctx)
            return output_messages(drafts), body.get("finish_reason")
    return [], None
