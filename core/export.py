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
import html
import json
from typing import Any, Iterable

from .audit import Finding
from .contracts import ChatMessage, ToolCall
from .result import SECTION_ORDER, SPAN_PREFIX, AssemblyResult

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
    digest = hashlib.sha256(result_json(result, redact=redact).encode("utf-8")).hexdigest()
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
# HTML report

# The inspector's section colours (Paul Tol's "bright" scheme), so the report reads like the app.
SECTION_COLOURS = {"template": "#9A9A9A", "instructions": "#4477AA", "tools": "#AA3377", "history": "#66CCEE",
                   "current": "#EE6677", "tool_exchanges": "#CCBB44", "evidence": "#228833"}
FALLBACK_COLOURS = ("#A0785A", "#7F6FBF", "#5F9E6E", "#D08C60", "#8C8C5A")
RESERVE_COLOURS = {"free": "#B8D8B8", "margin": "#C8A2C8", "reserve": "#7D8CA3"}

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;
vertical-align:top}th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}
.sw{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border:1px solid #0003}
.dropped{color:#777}.error{color:#C62828;font-weight:600}.warning{color:#B26A00;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:.5em;margin:.2em 0}
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em}dt{font-weight:600}
"""


def _esc(text: Any) -> str:
    """HTML-escaped text; ``://`` is written as an entity too, so no URL appears in the file even when a
    message quotes one (the page loads nothing and links nowhere)."""
    return html.escape(str(text), quote=True).replace("://", "&#58;//")


def _colour(section: str, others: list[str]) -> str:
    if section in SECTION_COLOURS:
        return SECTION_COLOURS[section]
    if section not in others:
        others.append(section)
    return FALLBACK_COLOURS[others.index(section) % len(FALLBACK_COLOURS)]


def budget_svg(result: AssemblyResult, *, width: int = 960) -> str:
    """The budget bar: each section's sent tokens in its colour, free room, margin and output reserve up to
    the context limit; below it, from the allowance line on, what was dropped, ghosted and hatched."""
    others: list[str] = []
    sent = result.sent_tokens_by_section()
    dropped = result.section_tokens("dropped")
    order = [s for s in SECTION_ORDER if sent.get(s)] + sorted(set(sent) - set(SECTION_ORDER))
    dropped_total = sum(dropped.values())
    scale_to = max(result.context_limit, result.input_tokens, result.input_budget + dropped_total, 1)
    unit = (width - 2) / scale_to
    lane, gap = 34, 10
    shapes: list[str] = []
    x = 1.0

    def rect(x0: float, tokens: int, y: int, fill: str, label: str, extra: str = "") -> float:
        w = max(tokens * unit, 0.0)
        if w > 0:
            shapes.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{lane}" fill="{fill}" '
                          f'stroke="#fff" stroke-width="1"{extra}><title>{_esc(label)}</title></rect>')
        return x0 + w

    for section in order:
        x = rect(x, sent[section], 1, _colour(section, others), f"{section}: {sent[section]} tokens sent")
    free = max(result.input_budget - result.input_tokens, 0)
    x = rect(x, free, 1, RESERVE_COLOURS["free"], f"free: {free} tokens of the input allowance unused")
    x = rect(x, result.margin, 1, RESERVE_COLOURS["margin"], f"margin: {result.margin} tokens")
    rect(x, result.max_new_tokens, 1, RESERVE_COLOURS["reserve"], f"output reserve: {result.max_new_tokens} tokens")
    allowance_x = 1 + result.input_budget * unit
    x = allowance_x
    y2 = 1 + lane + gap
    for section in [s for s in SECTION_ORDER if dropped.get(s)] + sorted(set(dropped) - set(SECTION_ORDER)):
        x = rect(x, dropped[section], y2, _colour(section, others), f"{section}: {dropped[section]} tokens dropped",
                 ' fill-opacity="0.35" stroke-dasharray="4 2"')
        shapes.append(f'<rect x="{x - dropped[section] * unit:.2f}" y="{y2}" width="{dropped[section] * unit:.2f}" '
                      f'height="{lane}" fill="url(#hatch)" pointer-events="none"/>')
    height = y2 + lane + 18
    limit_x = 1 + result.context_limit * unit
    marks = (f'<line x1="{allowance_x:.2f}" x2="{allowance_x:.2f}" y1="0" y2="{height - 16}" stroke="#222" '
             f'stroke-width="2"><title>input allowance: {result.input_budget} tokens</title></line>'
             f'<line x1="{limit_x:.2f}" x2="{limit_x:.2f}" y1="0" y2="{height - 16}" stroke="#222" '
             f'stroke-dasharray="3 3"><title>context limit: {result.context_limit} tokens</title></line>'
             f'<text x="{min(allowance_x, width - 160):.2f}" y="{height - 3}" font-size="12">allowance '
             f'{result.input_budget}</text>')
    defs = ('<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#0006" stroke-width="2"/>'
            '</pattern></defs>')
    return (f'<svg role="img" aria-label="token budget" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{defs}{"".join(shapes)}{marks}</svg>')


def _legend(result: AssemblyResult) -> str:
    others: list[str] = []
    sections = [s for s in SECTION_ORDER if any(e.section == s for e in result.trace)]
    sections += sorted({e.section for e in result.trace} - set(sections))
    items = [f'<span class="sw" style="background:{_colour(s, others)}"></span>{_esc(s)}' for s in sections]
    items += [f'<span class="sw" style="background:{c}"></span>{k}' for k, c in RESERVE_COLOURS.items()]
    return "<p>" + " &nbsp; ".join(items) + "</p>"


def html_report(result: AssemblyResult, findings: list[Finding] | None = None, *, title: str | None = None,
                redact: bool = False) -> str:
    """One HTML file: the budget bar (inline SVG), the section table and the audit findings; the
    messages too, unless redacted. Loads nothing, runs nothing."""
    title = title or f"Context report: {result.request_id or result.strategy}"
    counter = result.counter.name if result.counter else "unknown counter"
    facts = [("strategy", result.strategy), ("counter", counter),
             ("input tokens", f"{result.input_tokens} of an allowance of {result.input_budget} "
                              f"({result.remaining_tokens} left)"),
             ("context limit", f"{result.context_limit} = allowance + output reserve {result.max_new_tokens} "
                               f"+ margin {result.margin}")]
    for key in ("source_format", "model", "provider_input_tokens", "count_drift", "finish_reason", "trace_id",
                "span_id", "context_limit_source", "count_basis"):
        if _extra(result, key) is not None:
            facts.append((key.replace("_", " "), _extra(result, key)))
    rows = []
    for e in result.trace:
        where = ", ".join(str(i) for i in e.message_indices)
        rows.append(f'<tr class="{_esc(e.decision)}"><td>{_esc(e.section)}</td><td>{_esc(e.id)}</td>'
                    f'<td>{_esc(e.decision)}</td><td class="n">{e.tokens}</td><td>{_esc(where)}</td>'
                    f'<td>{_esc(e.reason)}</td></tr>')
    sections = result.sent_tokens_by_section()
    summary = "".join(f"<tr><td>{_esc(s)}</td><td class='n'>{t}</td></tr>" for s, t in sections.items())
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{_esc(title)}</h1>",
           "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in facts) + "</dl>",
           "<h2>Budget</h2>", budget_svg(result), _legend(result),
           "<h2>Sections</h2><table><tr><th>section</th><th>tokens sent</th></tr>" + summary + "</table>",
           "<h2>Items</h2><table><tr><th>section</th><th>item</th><th>decision</th><th>tokens</th>"
           "<th>messages</th><th>reason</th></tr>" + "".join(rows) + "</table>",
           "<h2>Audit findings</h2>"]
    if findings is None:
        out.append("<p>The audit was not run for this report.</p>")
    elif not findings:
        out.append("<p>No findings.</p>")
    else:
        out.append("<table><tr><th>severity</th><th>rule</th><th>where</th><th>finding</th></tr>" + "".join(
            f'<tr><td class="{_esc(f.severity)}">{_esc(f.severity)}</td><td>{_esc(f.rule)}</td>'
            f"<td>{_esc(f.location())}</td><td>{_esc(f.message)}</td></tr>" for f in findings) + "</table>")
    out.append("<h2>Messages</h2>")
    for i, m in enumerate(_messages(result, redact)):
        calls = "".join(f"<pre>call {_esc(c.id)}: {_esc(c.name)}({_esc(_arguments_text(c))})</pre>"
                        for c in m.tool_calls)
        answered = f" (result of {_esc(m.tool_call_id)})" if m.tool_call_id else ""
        body = f"<pre>{_esc(m.content)}</pre>" if m.content is not None else ""
        out.append(f"<h3>{i}: {_esc(m.role)}{answered}</h3>{body}{calls}")
    out.append("</body></html>\n")
    return "\n".join(out)


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
