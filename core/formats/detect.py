"""Which format a file is, told by its content (never its extension), and what was seen."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..result import looks_like_request, looks_like_result
from . import anthropic, openai
from .cassette import is_cassette
from .model import FORMATS, FormatInfo
from .otel_js import is_js_spans
from .otlp import is_otlp
from .platforms import is_langfuse, is_promptfoo, phoenix_spans
from .providers import by_body
from .providers.nock import is_nock
from .source import Parsed, parse_file
from .transcripts import CLAUDE_CODE, CODEX, is_claude_code, is_codex


def chat_body(value: Any) -> tuple[dict[str, Any], Any] | None:
    """``(body, response)`` when ``value`` is a chat request body: bare, an OpenAI batch input line
    (``{custom_id, body}``) or a ``{request, response}`` pair as request loggers write them."""
    if not isinstance(value, dict):
        return None
    if _is_body(value):
        return value, None
    for key in ("request", "body"):
        inner = value.get(key)
        if isinstance(inner, dict) and _is_body(inner):
            return inner, value.get("response")
    return None


def _is_body(value: dict[str, Any]) -> bool:
    # A model beside "messages" makes it a request body even when its messages are broken (the
    # importer then names the place); without a model, the messages must at least be a list.
    return isinstance(value.get("messages"), list) or ("messages" in value and isinstance(value.get("model"), str))


def is_genai_attributes(value: Any) -> bool:
    return isinstance(value, dict) and any(isinstance(k, str) and k.startswith(
        ("gen_ai.input", "gen_ai.prompt", "gen_ai.system_instructions", "gen_ai.operation.name", "llm.input_messages",
         "openinference.span.kind")) for k in value)


def _ours(values: list[Any]) -> bool:
    return bool(values) and all(looks_like_result(v) or looks_like_request(v) for v in values)


def _body_detail(bodies: list[tuple[dict[str, Any], Any]], kind: str) -> str:
    messages = sum(len(b["messages"]) for b, _ in bodies if isinstance(b["messages"], list))
    tools = sum(len(b.get("tools") or []) for b, _ in bodies)
    answered = sum(1 for _, r in bodies if isinstance(r, dict))
    head = f"{len(bodies)} request bodies" if len(bodies) > 1 else "request body"
    text = f"{FORMATS[kind]} ({head}: {messages} messages, {tools} tool definitions"
    return text + (f"; {answered} with the provider's response)" if answered else ")")


def sniff(parsed: Parsed) -> FormatInfo:
    values = [v for _, v in parsed.records]
    if parsed.kind == "jsonl":
        first = values[0] if values else None
        if is_otlp(first):
            return FormatInfo("otlp-jsonl", f"{FORMATS['otlp-jsonl']}: {len(values)} lines")
        if phoenix_spans(values) is not None:
            return FormatInfo("phoenix-spans", f"{FORMATS['phoenix-spans']}: {len(values)} spans, one per line")
    if parsed.kind == "jsonl" and is_js_spans(values):
        return FormatInfo("otel-js-spans", f"{FORMATS['otel-js-spans']}: {len(values)} spans, one per line")
    if parsed.kind == "jsonl" or parsed.one_line:
        for name, test in ((CLAUDE_CODE, is_claude_code), (CODEX, is_codex)):
            if test(values):
                return FormatInfo(name, f"{FORMATS[name]}: {len(values)} lines")
    single = values[0] if len(values) == 1 and parsed.kind != "jsonl" else None
    provider = by_body(single)
    if provider is not None:  # before our own request: a Responses body also has instructions and tools
        return FormatInfo(provider.name, f"{FORMATS[provider.name]} (request body)")
    if _ours(values) or (isinstance(single, list) and _ours(single)):
        return FormatInfo("context-inspector", FORMATS["context-inspector"])
    if is_otlp(single):
        if parsed.one_line:  # what the OTLP file exporter writes, with a single line
            return FormatInfo("otlp-jsonl", f"{FORMATS['otlp-jsonl']}: 1 line")
        kinds = [k for k in ("resourceSpans", "resourceLogs") if k in single]
        return FormatInfo("otlp-json", f"{FORMATS['otlp-json']} ({', '.join(kinds) or 'snake_case keys'})")
    if is_cassette(single):
        key = "interactions" if "interactions" in single else "http_interactions"
        return FormatInfo("vcr-cassette", f"{FORMATS['vcr-cassette']} ({len(single[key])} interactions, "
                                          f"{parsed.kind.upper()})")
    if is_langfuse(single):
        observations = single.get("observations") or single.get("trace", {}).get("observations") or []
        return FormatInfo("langfuse-trace", f"{FORMATS['langfuse-trace']} ({len(observations)} observations)")
    if is_promptfoo(single):
        return FormatInfo("promptfoo-export", FORMATS["promptfoo-export"])
    spans = phoenix_spans(single)
    if spans is not None:
        return FormatInfo("phoenix-spans", f"{FORMATS['phoenix-spans']} ({len(spans)} spans)")
    if is_js_spans(single):
        return FormatInfo("otel-js-spans", f"{FORMATS['otel-js-spans']}: {len(single)} spans")
    if is_nock(single):
        return FormatInfo("nock-recording", f"{FORMATS['nock-recording']}: {len(single)} requests")
    candidates = single if isinstance(single, list) else values
    bodies = [chat_body(v) for v in candidates] if isinstance(candidates, list) else []
    found = [b for b in bodies if b is not None]
    if found and len(found) * 2 >= len(bodies):  # a few broken lines are reported one by one, not as the file
        kind = "anthropic-messages" if all(anthropic.has_markers(b) for b, _ in found) else "openai-chat"
        return FormatInfo(kind, _body_detail(found, kind))
    if is_genai_attributes(single):
        return FormatInfo("genai-attributes", FORMATS["genai-attributes"])
    if _genai_list(single, ("role", "parts")) and not _genai_list(single, ("finish_reason",)):
        return FormatInfo("genai-messages", f"{FORMATS['genai-messages']} ({len(single)} messages)")
    return FormatInfo("unknown", _unknown_detail(single if single is not None else values))


def _genai_list(value: Any, keys: tuple[str, ...]) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and all(k in v for k in keys)
                                                           for v in value)


def _unknown_detail(value: Any) -> str:
    if openai.is_response(value):
        return "an OpenAI Chat Completions response: it holds the answer, not the request that was sent"
    if isinstance(value, dict) and value.get("type") == "message" and "content" in value and "messages" not in value:
        return "an Anthropic Messages response: it holds the answer, not the request that was sent"
    if _genai_list(value, ("role", "parts", "finish_reason")):
        return "OTel GenAI output messages (gen_ai.output.messages): the answer, not the request that was sent"
    if _genai_list(value, ("type", "name")):
        return "OTel GenAI tool definitions (gen_ai.tool.definitions) alone: tools without any message"
    if _genai_list(value, ("type", "content")):
        return "OTel GenAI parts without roles (gen_ai.system_instructions) alone: instructions without any message"
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8])
        return f"a JSON object with keys {keys}: not a format Context Inspector imports"
    if isinstance(value, list):
        return f"a list of {len(value)} items that are not request bodies, spans or observations"
    return f"a {type(value).__name__}, not a format Context Inspector imports"


def detect(path_or_data: str | Path | dict[str, Any] | list[Any]) -> FormatInfo:
    """The format of a file (given its path) or of already decoded data, by content.

    Raises ``InputFileError`` (``FormatError``) when a file cannot be read or decoded at all."""
    if isinstance(path_or_data, (str, Path)):
        return sniff(parse_file(path_or_data))
    return sniff(Parsed("<data>", "json", [(None, path_or_data)]))
