"""OTLP JSON: ``TracesData`` (``resourceSpans``) and ``LogsData`` (``resourceLogs``), one object or JSON
Lines of them. Every model-call span becomes one request with its trace and span ids; other spans
(agents, tools, HTTP) are skipped and named in one warning. Log records that carry GenAI events are
grouped by the span they belong to."""
from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Iterator

from .genai import Event, SpanView, is_model_call, request_from_span, span_node
from .model import ImportNote
from .normalise import Malformed, Outcome, as_int, shown_names
from .timing import unix_seconds


def is_otlp(data: Any) -> bool:
    return isinstance(data, dict) and ("resourceSpans" in data or "resourceLogs" in data
                                       or "resource_spans" in data or "resource_logs" in data)


def decode_any(value: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (camelCase or snake_case keys, ints as decimal strings)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            number = as_int(value[key])
            return number if number is not None else value[key]
    for key in ("doubleValue", "double_value"):
        if key in value:
            number = value[key]
            return float(number) if isinstance(number, (int, float, str)) else number
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    for key in ("arrayValue", "array_value"):
        if key in value:
            inner = value[key] or {}
            return [decode_any(v) for v in (inner.get("values") or [])]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            inner = value[key] or {}
            return {kv.get("key"): decode_any(kv.get("value")) for kv in (inner.get("values") or [])
                    if isinstance(kv, dict)}
    return None  # an empty AnyValue


def attributes(kvs: Any, place: str) -> dict[str, Any]:
    if kvs is None:
        return {}
    if isinstance(kvs, dict):  # already a map (some exporters write attributes that way)
        return dict(kvs)
    if not isinstance(kvs, list):
        raise Malformed(place, f"attributes must be a list of key/value pairs, found {type(kvs).__name__}")
    out: dict[str, Any] = {}
    for i, kv in enumerate(kvs):
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise Malformed(f"{place}[{i}]", "an attribute needs a string 'key'")
        out[kv["key"]] = decode_any(kv.get("value"))
    return out


def _get(obj: dict[str, Any], camel: str) -> Any:
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return obj.get(camel, obj.get(snake))


def _list(obj: dict[str, Any], key: str, place: str) -> list[Any]:
    value = _get(obj, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(f"{place}.{key}", f"expected a list, found {type(value).__name__}")
    return value


def hex_id(value: Any, size: int) -> str | None:
    """A trace or span id as lowercase hex; OTLP/JSON writes hex, protobuf's generic JSON mapping base64."""
    if not isinstance(value, str) or not value:
        return None
    if re.fullmatch(r"[0-9A-Fa-f]+", value) and len(value) == size * 2:
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


def _spans(data: dict[str, Any], place: str) -> Iterator[SpanView]:
    for r, resource_spans in enumerate(_list(data, "resourceSpans", place)):
        rplace = f"{place}resourceSpans[{r}]"
        if not isinstance(resource_spans, dict):
            raise Malformed(rplace, "expected an object")
        scopes = _list(resource_spans, "scopeSpans", rplace) or _list(resource_spans, "instrumentationLibrarySpans",
                                                                       rplace)
        for s, scope_spans in enumerate(scopes):
            splace = f"{rplace}.scopeSpans[{s}]"
            if not isinstance(scope_spans, dict):
                raise Malformed(splace, "expected an object")
            for k, span in enumerate(_list(scope_spans, "spans", splace)):
                yield _span_view(span, f"{splace}.spans[{k}]")


def _span_view(span: Any, place: str) -> SpanView:
    if not isinstance(span, dict):
        raise Malformed(place, f"a span must be an object, found {type(span).__name__}")
    events = []
    dropped = as_int(_get(span, "droppedAttributesCount")) or 0
    for e, event in enumerate(_list(span, "events", place)):
        eplace = f"{place}.events[{e}]"
        if not isinstance(event, dict):
            raise Malformed(eplace, "an event must be an object")
        events.append(Event(str(event.get("name") or ""), attributes(event.get("attributes"), f"{eplace}.attributes"),
                            place=eplace))
        dropped += as_int(_get(event, "droppedAttributesCount")) or 0
    view = SpanView(attributes=attributes(span.get("attributes"), f"{place}.attributes"), place=place,
                    name=span.get("name") if isinstance(span.get("name"), str) else None,
                    trace_id=hex_id(_get(span, "traceId"), 16), span_id=hex_id(_get(span, "spanId"), 8),
                    events=events, dropped_attributes=dropped,
                    dropped_events=as_int(_get(span, "droppedEventsCount")) or 0,
                    parent_id=hex_id(_get(span, "parentSpanId"), 8),
                    start_time=unix_seconds(_get(span, "startTimeUnixNano")),
                    end_time=unix_seconds(_get(span, "endTimeUnixNano")))
    return view


def _log_spans(data: dict[str, Any], place: str) -> Iterator[SpanView]:
    """GenAI events recorded as log records, gathered per (trace, span) in the order they appear."""
    groups: dict[tuple[str | None, str | None], SpanView] = {}
    for r, resource_logs in enumerate(_list(data, "resourceLogs", place)):
        rplace = f"{place}resourceLogs[{r}]"
        if not isinstance(resource_logs, dict):
            raise Malformed(rplace, "expected an object")
        for s, scope_logs in enumerate(_list(resource_logs, "scopeLogs", rplace)):
            splace = f"{rplace}.scopeLogs[{s}]"
            if not isinstance(scope_logs, dict):
                raise Malformed(splace, "expected an object")
            for k, record in enumerate(_list(scope_logs, "logRecords", splace)):
                lplace = f"{splace}.logRecords[{k}]"
                if not isinstance(record, dict):
                    raise Malformed(lplace, "a log record must be an object")
                attrs = attributes(record.get("attributes"), f"{lplace}.attributes")
                name = _get(record, "eventName") or attrs.get("event.name") or ""
                trace_id, span_id = hex_id(_get(record, "traceId"), 16), hex_id(_get(record, "spanId"), 8)
                view = groups.get((trace_id, span_id))
                if view is None:
                    view = groups[(trace_id, span_id)] = SpanView({}, lplace, name=None, trace_id=trace_id,
                                                                  span_id=span_id)
                view.events.append(Event(str(name), attrs, body=decode_any(record.get("body")), place=lplace))
                view.dropped_attributes += as_int(_get(record, "droppedAttributesCount")) or 0
    for view in groups.values():
        details = next((e for e in view.events if e.name == "gen_ai.client.inference.operation.details"), None)
        if details is not None:
            view.name = details.attributes.get("gen_ai.operation.name")
        yield view


def import_records(records: list[tuple[int | None, Any]], file_format: str) -> Outcome:
    """Requests of every record (one TracesData/LogsData each). A span whose messages cannot be read
    is skipped with a warning naming it; a broken envelope raises ``Malformed``."""
    out = Outcome()
    skipped: list[str] = []
    for line, data in records:
        prefix = f"line {line}: " if line is not None else ""
        if not isinstance(data, dict) or not is_otlp(data):
            raise Malformed(prefix.rstrip(": ") or "top level", "expected a TracesData object with resourceSpans")
        spans = list(_spans(data, prefix))
        out.spans += [span_node(view, is_model_call(view)) for view in spans if view.span_id]
        for view in spans + list(_log_spans(data, prefix)):
            if not is_model_call(view):
                skipped.append(view.name or view.span_id or view.place)
                continue
            label = f"{view.name or 'model call'} (span {view.span_id or '?'})"
            try:
                out.requests.append(request_from_span(view, label, file_format))
            except Malformed as exc:
                out.fail(exc, "span", label)
    if skipped:
        out.warnings.append(ImportNote("", f"{len(skipped)} span(s) are not model calls and were skipped: "
                                              f"{shown_names(skipped)}"))
    return out
