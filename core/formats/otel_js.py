"""OpenTelemetry JS spans saved as a JSON list (or JSON Lines): what the JS SDK's console exporter
prints (``traceId``, ``id``, ``parentId``, ``timestamp`` in microseconds), what ``JSON.stringify`` of a
``ReadableSpan`` gives (``_spanContext``, ``parentSpanId``, ``startTime`` as ``[seconds, nanos]``), and
the span arrays test suites of the Vercel AI SDK and others keep. Attributes are a plain map.

Each model-call span (the Vercel AI SDK's ``ai.*.doGenerate`` / ``doStream`` with ``ai.prompt.messages``,
or any span with GenAI attributes) becomes one request, read by the span mapper in ``genai``.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .genai import Event, SpanView, is_model_call, request_from_span
from .model import ImportNote
from .normalise import Malformed, Outcome, as_int, shown_names, updated

FORMAT = "otel-js-spans"
_ID_HOLDERS = ("spanContext", "_spanContext", "context")


def _span_like(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("name"), str) and isinstance(value.get("attributes"), dict)
            and any(k in value for k in ("traceId", "id", "spanId", "parentId", "parentSpanId", "startTime",
                                         "timestamp", *_ID_HOLDERS)))


def is_js_spans(values: Any) -> bool:
    """A list of spans with plain attribute maps, at least one with GenAI or AI SDK attributes."""
    return isinstance(values, list) and bool(values) and all(_span_like(v) for v in values) and any(
        any(str(k).startswith(("ai.", "gen_ai.", "llm.")) for k in v["attributes"]) for v in values)


def _ids(span: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    holder = next((span[k] for k in _ID_HOLDERS if isinstance(span.get(k), dict)), {})
    trace = span.get("traceId") or holder.get("traceId") or holder.get("trace_id")
    ident = span.get("id") or span.get("spanId") or holder.get("spanId") or holder.get("span_id")
    parent = span.get("parentId") or span.get("parentSpanId")
    if parent is None and isinstance(span.get("parentSpanContext"), dict):
        parent = span["parentSpanContext"].get("spanId")
    return tuple(v if isinstance(v, str) else None for v in (trace, ident, parent))  # type: ignore[return-value]


def _start(span: dict[str, Any]) -> str | None:
    """ISO time of the span's start: ``startTime`` as hrtime ``[s, ns]``, an ISO string or ms; or the
    console exporter's ``timestamp`` in microseconds."""
    value = span.get("startTime")
    seconds: float | None = None
    if isinstance(value, list) and len(value) == 2 and all(as_int(v) is not None for v in value):
        seconds = as_int(value[0]) + as_int(value[1]) / 1e9  # type: ignore[operator]
    elif isinstance(value, str):
        return value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1e3
    elif isinstance(span.get("timestamp"), (int, float)) and not isinstance(span.get("timestamp"), bool):
        seconds = span["timestamp"] / 1e6
    if seconds is None:
        return None
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def import_js_spans(spans: list[Any], lines: list[int | None] | None = None) -> Outcome:
    out = Outcome()
    skipped: list[str] = []
    for i, span in enumerate(spans):
        place = f"line {lines[i]}" if lines and lines[i] is not None else f"[{i}]"
        if not isinstance(span, dict) or not isinstance(span.get("attributes"), dict):
            raise Malformed(place, "a span must be an object with an attributes map")
        trace, ident, parent = _ids(span)
        events = []
        raw_events = span.get("events") if isinstance(span.get("events"), list) else []
        for j, event in enumerate(raw_events):
            if isinstance(event, dict):
                attrs = event.get("attributes") if isinstance(event.get("attributes"), dict) else {}
                events.append(Event(str(event.get("name") or ""), dict(attrs), place=f"{place}.events[{j}]"))
        view = SpanView(attributes=dict(span["attributes"]), place=f"{place}.attributes", name=span.get("name"),
                        trace_id=trace, span_id=ident, events=events)
        if not is_model_call(view):
            skipped.append(view.name or place)
            continue
        try:
            request = request_from_span(view, f"{view.name} (span {ident or '?'})", FORMAT)
        except Malformed as exc:
            out.fail(exc, "span")
            continue
        attrs = view.attributes
        request.recorded = updated(request.recorded, started_at=_start(span), parent_id=parent,
                                   cached_input_tokens=as_int(attrs.get("ai.usage.cachedInputTokens",
                                                                        attrs.get("gen_ai.usage.cache_read.input_tokens"))))
        out.requests.append(request)
    if skipped:
        out.warnings.append(ImportNote("", f"{len(skipped)} span(s) are not model calls and were skipped: "
                                          f"{shown_names(skipped)}"))
    return out
