"""``import_file``: detect the format, run its importer, gather every warning in one list.

Structural problems of the file itself (a truncated JSON, ``resourceSpans`` that is not a list, a
body without ``messages``) raise ``FormatError`` naming format and place. A model call inside a
many-call file that cannot be read (a span whose ``gen_ai.input.messages`` is not JSON) is skipped
with a warning; when every call of the file is unreadable, the file is refused with the first one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import anthropic, openai
from .cassette import import_cassette
from .detect import chat_body, sniff
from .genai import SpanView, request_from_span
from .model import FormatError, ImportedFile, UnsupportedFormat
from .normalise import Malformed, Outcome
from .otlp import import_records
from .platforms import import_langfuse, import_phoenix, import_promptfoo, phoenix_spans
from .source import Parsed, parse_file


def _bodies(parsed: Parsed, name: str) -> Outcome:
    out = Outcome()
    items: list[tuple[str, Any]] = []
    for line, value in parsed.records:
        if parsed.kind != "jsonl" and isinstance(value, list):
            items += [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            items.append((f"line {line}" if line is not None else "", value))
    for place, value in items:
        found = chat_body(value)
        if found is None:
            raise Malformed(place or "top level", "expected a chat request body with 'messages'")
        body, response = found
        inner = place
        if body is not value:  # wrapped: {request, response} or a batch line {custom_id, body}
            key = "request" if value.get("request") is body else "body"
            inner = f"{place}.{key}" if place else key
        custom = value.get("custom_id") if isinstance(value, dict) else None
        label = str(custom) if isinstance(custom, str) else (f"request {place}" if place else "request body")
        module = anthropic if anthropic.has_markers(body) or name == "anthropic-messages" else openai
        out.requests.append(module.import_body(body, inner, label, response=response))
    return out


def _genai_attributes(parsed: Parsed, name: str) -> Outcome:
    attrs = parsed.single
    label = " ".join(str(attrs[k]) for k in ("gen_ai.operation.name", "gen_ai.request.model") if attrs.get(k)) \
        or "span attributes"
    return Outcome(requests=[request_from_span(SpanView(attributes=dict(attrs), place="", name=label), label, name)])


def _genai_messages(parsed: Parsed, name: str) -> Outcome:
    view = SpanView(attributes={"gen_ai.input.messages": parsed.single}, place="", name="gen_ai.input.messages")
    return Outcome(requests=[request_from_span(view, "gen_ai.input.messages", name)])


def _phoenix(parsed: Parsed, name: str) -> Outcome:
    if parsed.kind == "jsonl":
        return import_phoenix([v for _, v in parsed.records], [line for line, _ in parsed.records])
    spans = phoenix_spans(parsed.single)
    return import_phoenix(spans or [])


IMPORTERS: dict[str, Callable[[Parsed, str], Outcome]] = {
    "openai-chat": _bodies,
    "anthropic-messages": _bodies,
    "otlp-json": lambda parsed, name: import_records(parsed.records, name),
    "otlp-jsonl": lambda parsed, name: import_records(parsed.records, name),
    "genai-attributes": _genai_attributes,
    "genai-messages": _genai_messages,
    "vcr-cassette": lambda parsed, name: import_cassette(parsed.single),
    "langfuse-trace": lambda parsed, name: import_langfuse(parsed.single),
    "phoenix-spans": _phoenix,
    "promptfoo-export": lambda parsed, name: import_promptfoo(parsed.single),
}


def import_parsed(parsed: Parsed) -> ImportedFile:
    info = sniff(parsed)
    importer = IMPORTERS.get(info.name)
    if importer is None:
        raise UnsupportedFormat(parsed.path, info.name, "", info.detail + "; supported: " + ", ".join(IMPORTERS))
    try:
        outcome = importer(parsed, info.name)
    except Malformed as exc:
        raise FormatError(parsed.path, info.name, exc.place, exc.problem) from None
    if not outcome.requests and outcome.failures:
        first = outcome.failures[0]
        more = f" ({len(outcome.failures) - 1} more model calls failed too)" if len(outcome.failures) > 1 else ""
        raise FormatError(parsed.path, info.name, first.place, first.problem + more)
    warnings = list(parsed.notes) + outcome.warnings
    for request in outcome.requests:
        warnings += request.warnings
    return ImportedFile(path=parsed.path, format=info, requests=outcome.requests, warnings=warnings,
                        spans=outcome.spans)


def import_file(path: str | Path) -> ImportedFile:
    """Every model call recorded in ``path``, normalised, with the warnings of what was not mapped."""
    return import_parsed(parse_file(path))


def import_data(data: dict[str, Any] | list[Any], *, source: str = "<data>") -> ImportedFile:
    """The same for data already decoded (a request body, an OTLP object...)."""
    return import_parsed(Parsed(source, "json", [(None, data)]))
