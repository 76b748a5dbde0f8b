"""Saving a result for people and tools that do not run Context Inspector.

- ``result_json``: our own recorded-result JSON (what ``AssemblyResult.to_json`` writes);
- ``openai_body``: the OpenAI Chat Completions body that would be sent (string tool arguments);
- ``otlp_trace``: an OTLP JSON ``TracesData`` with one span carrying the OTel GenAI attributes and
  the assembly's counts (``span_attributes``, which never carries message content);
- ``html_report``: one self-contained HTML page: the budget as an inline SVG bar, the section table,
  the audit findings. No external resource, no script, every text escaped.

``redact=True`` replaces every message's content (and tool-call arguments) with
``[redacted: N chars]``, keeping the counts, ids and structure. Nothing here writes files or reaches
the network; the same result gives the same bytes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

from . import htmlreport
from .audit import Finding
from .contracts import ChatMessage, ToolCall
from .result import SPAN_PREFIX, AssemblyResult

ATTRIBUTE_PREFIX = SPAN_PREFIX
EXPORT_KINDS: dict[str, tuple[str, str]] = {  # kind -> (file suffix, what it is)
    "json": (".result.json", "Context Inspector result (JSON)"),
    "openai": (".openai.json", "OpenAI Chat Completions request body"),
    "otlp": (".otlp.json", "OTLP JSON trace (one span, OTel GenAI attributes)"),
    "html": (".html", "HTML report (one file, no external resources)"),
}


def redacted(text: str | None) -> str | None:
    return None if text is None else f"[redacted: {len(text)} chars]"


def _arguments_text(call: ToolCall) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments, ensure_ascii=False)


def redact_messages(messages: Iterable[ChatMessage]) -> list[ChatMessage]:
    """Messages with every content and tool-call argument replaced by its length; ids and roles kept."""
    out = []
    for m in messages:
        calls = [ToolCall(id=c.id, name=c.name, raw_arguments=redacted(_arguments_text(c))) for c in m.tool_calls]
        out.append(ChatMessage(role=m.role, content=redacted(m.content), tool_calls=calls, tool_call_id=m.tool_call_id))
    return out


def _messages(result: AssemblyResult, redact: bool) -> list[ChatMessage]:
    return redact_messages(result.messages) if redact else list(result.messages)


def _extra(result: AssemblyResult, key: str) -> Any:
    return (result.model_extra or {}).get(key)


def _model(result: AssemblyResult, model: str | None) -> str:
    return model or _extra(result, "model") or (result.counter.model if result.counter else None) or "unknown"


# ------------------------------------------------------------------------------------------
# our JSON and the OpenAI body


def result_json(result: AssemblyResult, *, redact: bool = False) -> str:
    """The recorded-result JSON; redacted, the messages lose their content and the request they were
    assembled from (all of it content) is left out."""
    if not redact:
        return result.to_json()
    data = json.loads(result.to_json())
    data["messages"] = [m.to_json() for m in redact_messages(result.messages)]
    data.pop("request", None)
    data.pop("import_warnings", None)  # warnings may quote content
    data["redacted"] = True
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def openai_body(result: AssemblyResult, *, model: str | None = None, redact: bool = False) -> dict[str, Any]:
    """What would be sent to OpenAI: ``{"model", "messages", "tools"}`` with tool arguments as strings."""
    messages = []
    for m in _messages(result, redact):
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": _arguments_text(c)}}
                                  for c in m.tool_calls]
        if m.role == "tool":
            item["tool_call_id"] = m.tool_call_id
        messages.append(item)
    body: dict[str, Any] = {"model": _model(result, model), "messages": messages}
    if result.tools:  # the API refuses an empty tools list
        body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                           "parameters": t.parameters}} for t in result.tools]
    return body


# ------------------------------------------------------------------------------------------
# OTLP


def span_attributes(result: AssemblyResult) -> dict[str, int | str]:
    """Counts for a trace span, never content (``AssemblyResult.span_attributes``)."""
    return result.span_attributes()


def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP/JSON writes 64-bit integers as decimal strings
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_any(v) for v in value]}}
    return {"stringValue": str(value)}


def _parts(m: ChatMessage) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_call_response", "id": m.tool_call_id, "response": m.content or ""}]
    parts: list[dict[str, Any]] = []
    if m.content is not None:
        parts.append({"type": "text", "content": m.content})
    for c in m.tool_calls:
        parts.append({"type": "tool_call", "id": c.id, "name": c.name,
                      "arguments": c.raw_arguments if c.raw_arguments is not None else c.arguments})
    return parts


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def otlp_trace(result: AssemblyResult, *, redact: bool = False, trace_id: str | None = None,
               span_id: str | None = None, model: str | None = None, service_name: str = "context-inspector",
               time_unix_nano: int = 0) -> dict[str, Any]:
    """An OTLP JSON ``TracesData`` with one client span: the GenAI attributes (message attributes as
    JSON strings, ``gen_ai.usage.input_tokens`` = our count) and ``span_attributes``. Ids default to the
    result's own (an imported request keeps its trace and span) or to a hash of its JSON."""
    messages = _messages(result, redact)
    # (a lone surrogate, which a plan's message may hold, is hashed as written: strict UTF-8 raised on it)
    digest = hashlib.sha256(result_json(result, redact=redact).encode("utf-8", "surrogatepass")).hexdigest()
    trace_id = trace_id or _extra(result, "trace_id") or digest[:32]
    span_id = span_id or _extra(result, "span_id") or digest[32:48]
    name = _model(result, model)
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": name}
    if _extra(result, "provider"):
        attrs["gen_ai.provider.name"] = _extra(result, "provider")
    if result.max_new_tokens:
        attrs["gen_ai.request.max_tokens"] = result.max_new_tokens
    rest = messages
    if messages and messages[0].role == "system":
        attrs["gen_ai.system_instructions"] = _compact(_parts(messages[0]))
        rest = messages[1:]
    attrs["gen_ai.input.messages"] = _compact([{"role": m.role, "parts": _parts(m)} for m in rest])
    if result.tools:
        attrs["gen_ai.tool.definitions"] = _compact([{"type": "function", "name": t.name,
                                                      "description": t.description, "parameters": t.parameters}
                                                     for t in result.tools])
    attrs["gen_ai.usage.input_tokens"] = result.input_tokens
    if _extra(result, "finish_reason"):
        attrs["gen_ai.response.finish_reasons"] = [str(_extra(result, "finish_reason"))]
    attrs.update(span_attributes(result))
    span = {"traceId": trace_id, "spanId": span_id, "name": f"chat {name}", "kind": 3,
            "startTimeUnixNano": str(time_unix_nano), "endTimeUnixNano": str(time_unix_nano),
            "attributes": [{"key": k, "value": _any(v)} for k, v in attrs.items()], "status": {"code": 0}}
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service_name}}]},
        "scopeSpans": [{"scope": {"name": "context-inspector"}, "spans": [span]}]}]}


# ------------------------------------------------------------------------------------------
# HTML report (core.htmlreport: the app's bar layout, section names, order and colours)


def html_report(result: AssemblyResult, findings: list[Finding] | None = None, *, title: str | None = None,
                redact: bool = False) -> str:
    """One HTML file: the budget bar (inline SVG, fit-to-input and whole-window), the composition table,
    the items and the audit findings; the messages too, unless redacted. Loads nothing, runs nothing."""
    return htmlreport.html_report(result, findings, title=title, redact=redact, messages=_messages,
                                  arguments=_arguments_text)


def export_text(result: AssemblyResult, kind: str, *, redact: bool = False, findings: list[Finding] | None = None,
                model: str | None = None) -> str:
    """The text of one export kind (a key of ``EXPORT_KINDS``), ready to be saved."""
    if kind == "json":
        return result_json(result, redact=redact)
    if kind == "openai":
        return json.dumps(openai_body(result, model=model, redact=redact), indent=2, ensure_ascii=False) + "\n"
    if kind == "otlp":
        return json.dumps(otlp_trace(result, redact=redact, model=model), indent=2, ensure_ascii=False) + "\n"
    if kind == "html":
        return html_report(result, findings, redact=redact)
    raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(EXPORT_KINDS)}")
