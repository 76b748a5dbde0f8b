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
from .otel_js import import_js_spans
from .otlp import import_records
from .platforms import import_langfuse, import_phoenix, import_promptfoo, phoenix_spans
from .providers import PROVIDERS, import_request
from .providers.nock import import_nock
from .source import Parsed, parse_file
from .transcripts import lines_of
from .transcripts.claude_code import import_claude_code
from .transcripts.codex import import_codex


def _bodies(parsed: Parsed, name: str) -> Outcome:
    out = Outcome()
    items: list[tuple[str, Any]] = []
    for line, value in parsed.records:
        if parsed.kind != "jsonl" and isinstance(value, list):
            items += [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            items.append((f"line {line}" if line is not None else "", value))
    for place, value in items:
        custom = value.get("custom_id") if isinstance(value, dict) else None
        label = str(custom) if isinstance(custom, str) else (f"request {place}" if place else "request body")
        try:
            out.requests.append(_body(value, place, label, name))
        except Malformed as exc:
            if len(items) == 1:
                raise
            out.fail(exc, "request body", label)
    return out


def _body(value: Any, place: str, label: str, name: str):
    found = chat_body(value)
    if found is None:
        raise Malformed(place or "top level", "expected a chat request body with 'messages'")
    body, response = found
    inner = place
    if body is not value:  # wrapped: {request, response} or a batch line {custom_id, body}
        key = "request" if value.get("request") is body else "body"
        inner = f"{place}.{key}" if place else key
    module = anthropic if anthropic.has_markers(body) or name == "anthropic-messages" else openai
    return module.import_body(body, inner, label, response=response)


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


def _provider_body(parsed: Parsed, name: str) -> Outcome:
    provider = next(p for p in PROVIDERS if p.name == name)
    return Outcome(requests=[import_request(provider, parsed.single, "", "request body", file_format=name)])


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
    "openai-responses": _provider_body,
    "gemini-generate": _provider_body,
    "bedrock-converse": _provider_body,
    "nock-recording": lambda parsed, name: import_nock(parsed.single),
    "otel-js-spans": lambda parsed, name: (import_js_spans([v for _, v in parsed.records],
                                                            [line for line, _ in parsed.records])
                                           if parsed.kind == "jsonl" else import_js_spans(parsed.single)),
    "claude-code-transcript": lambda parsed, name: import_claude_code(lines_of(parsed)),
    "codex-rollout": lambda parsed, name: import_codex(lines_of(parsed)),
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
        raise FormatError(parsed.path, info.name, first.place, first.reason + more)
    warnings = list(parsed.notes) + outcome.warnings
    seen = set(warnings)
    for request in outcome.requests:  # a transcript's calls share their earlier notes: each listed once
        fresh = [w for w in request.warnings if w not in seen]
        seen.update(fresh)
        warnings += fresh
    return ImportedFile(path=parsed.path, format=info, requests=outcome.requests, warnings=warnings,
                        failed=outcome.failures, spans=outcome.spans)


def import_file(path: str | Path) -> ImportedFile:
    """Every model call recorded in ``path``, normalised, with the warnings of what was not mapped."""
    return import_parsed(parse_file(path))


def import_data(data: dict[str, Any] | list[Any], *, source: str = "<data>") -> ImportedFile:
    """The same for data already decoded (a request body, an OTLP object...)."""
    return import_parsed(Parsed(source, "json", [(None, data)]))
