"""VCR-style cassettes (vcrpy's ``interactions``, Ruby VCR's ``http_interactions``; YAML or JSON).

Each interaction whose request body is a chat request (OpenAI or Anthropic, told by the URL and the
body) becomes one request, with the usage, finish reason and answer of its recorded response.
Bodies may be text, parsed objects or bytes (``!!binary``, gzip-compressed or not); a streamed
response is server-sent-event text. A ``traceparent`` header gives the trace and span ids.
"""
from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from ..inputs import inflate
from . import anthropic, openai
from .model import ImportNote
from .normalise import Malformed, Outcome, as_int, shown_names, updated
from .otlp import import_records, is_otlp
from .providers import by_request, import_request

FORMAT = "vcr-cassette"


def is_cassette(data: Any) -> bool:
    return isinstance(data, dict) and (isinstance(data.get("interactions"), list)
                                       or isinstance(data.get("http_interactions"), list))


def body_text(body: Any, place: str, headers: Any = None) -> Any:
    """A recorded body as text (or the parsed object it was stored as); ``None`` when absent."""
    if isinstance(body, dict) and set(body) <= {"string", "encoding", "base64_string"} and body:
        body = body.get("string", body.get("base64_string"))
    if body is None:
        return None
    if isinstance(body, (dict, list)):
        return body
    if isinstance(body, bytes):
        kind = "gzip" if body[:2] == b"\x1f\x8b" else "deflate" if "deflate" in _header(headers, "content-encoding") \
            else None
        if kind is not None:  # bounded: a bomb is refused while it inflates (core.inputs)
            try:
                body = inflate(body, kind=kind)
            except ValueError as exc:
                raise Malformed(place, f"body: {exc}") from None
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Malformed(place, f"body is not UTF-8 text (byte 0x{body[exc.start]:02x} at {exc.start})") from None
    if isinstance(body, str):
        return body
    raise Malformed(place, f"unexpected body of type {type(body).__name__}")


def _header(headers: Any, name: str) -> str:
    if not isinstance(headers, dict):
        return ""
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            value = value[0] if isinstance(value, list) and value else value
            return str(value).lower() if value is not None else ""
    return ""


def sse_events(text: str) -> list[dict[str, Any]] | None:
    """The JSON ``data:`` payloads of a server-sent-event stream, or ``None`` if ``text`` is not one."""
    if not re.match(r"\s*(event|data|id|retry)\s*:", text) and not text.lstrip().startswith(":"):
        return None
    events = []
    data_lines: list[str] = []
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" "))
        elif not line.strip() and data_lines:
            payload = "\n".join(data_lines)
            data_lines = []
            if payload.strip() == "[DONE]":
                continue
            try:
                value = json.loads(payload)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                events.append(value)
    return events


def _decoded(text: Any) -> Any:
    if isinstance(text, str):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


def _trace_ids(headers: Any) -> tuple[str | None, str | None]:
    match = re.fullmatch(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}", _header(headers, "traceparent"))
    return (match.group(1), match.group(2)) if match else (None, None)


def import_cassette(data: dict[str, Any]) -> Outcome:
    key = "interactions" if "interactions" in data else "http_interactions"
    out = Outcome()
    skipped: list[str] = []
    for i, interaction in enumerate(data[key]):
        place = f"{key}[{i}]"
        if not isinstance(interaction, dict) or not isinstance(interaction.get("request"), dict):
            raise Malformed(place, "an interaction needs a 'request' object")
        try:
            found = _interaction(interaction, place, i)
        except Malformed as exc:
            out.fail(exc, "interaction", _label(interaction["request"], i))
            continue
        if found is None:
            request = interaction["request"]
            skipped.append(f"{str(request.get('method') or '').upper()} {urlsplit(str(request.get('uri') or '')).path}")
        else:
            out.add(found)
    if skipped:
        out.warnings.append(ImportNote(key, f"{len(skipped)} interaction(s) are not chat requests and were "
                                               f"skipped: {shown_names(skipped)}"))
    return out


def _interaction(interaction: dict[str, Any], place: str, index: int) -> Outcome | None:
    request = interaction["request"]
    response = interaction.get("response") if isinstance(interaction.get("response"), dict) else {}
    uri = str(request.get("uri") or "")
    parts = urlsplit(uri)
    label = _label(request, index)
    where = f"{place}.request.body"
    body = _decoded(body_text(_body(request), where, request.get("headers")))
    if is_otlp(body):  # a recorded OTLP export
        return import_records([(None, body)], FORMAT)
    if isinstance(body, str) and parts.path.endswith(CHAT_PATHS):
        raise Malformed(where, "the body of a chat request is not valid JSON")
    provider = by_request(parts.path, body)
    kind = _body_kind(parts.path, body) if provider is None else provider.name
    if kind is None:
        return None
    status = response.get("status")
    status = as_int(status.get("code")) if isinstance(status, dict) else as_int(status)
    answer_text = body_text(_body(response), f"{place}.response.body", response.get("headers"))
    events = sse_events(answer_text) if isinstance(answer_text, str) else None
    answer = None if events is not None else _decoded(answer_text)
    if provider is not None:
        imported = import_request(provider, body, where, label, file_format=FORMAT, path=parts.path, stream=events,
                                  response=answer if isinstance(answer, (dict, list)) else None)
    else:
        module = anthropic if kind == "anthropic" else openai
        imported = module.import_body(body, where, label, file_format=FORMAT,
                                      response=answer if isinstance(answer, dict) else None, stream=events)
    if status is not None and status >= 400:
        imported.warnings.append(ImportNote(f"{place}.response.status",
                                               f"the provider answered HTTP {status}; no usage was recorded"))
    elif answer is not None and not isinstance(answer, dict) and events is None:
        imported.warnings.append(ImportNote(f"{place}.response.body",
                                               "the recorded response is neither JSON nor an event stream"))
    trace_id, span_id = _trace_ids(request.get("headers"))
    imported.recorded = updated(imported.recorded, trace_id=trace_id, span_id=span_id)
    return Outcome(requests=[imported])


CHAT_PATHS = ("/chat/completions", "/v1/messages")


def _label(request: dict[str, Any], index: int) -> str:
    parts = urlsplit(str(request.get("uri") or ""))
    return f"interaction {index + 1}: {str(request.get('method') or '').upper()} {parts.netloc}{parts.path}".rstrip()


def _body(message: dict[str, Any]) -> Any:
    """The recorded body; pydantic-ai's cassettes keep a JSON body already parsed, as ``parsed_body``."""
    return message["body"] if "body" in message else message.get("parsed_body")


def _body_kind(path: str, body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    if path.endswith("/messages") or anthropic.has_markers(body):
        return "anthropic"
    return "openai"
