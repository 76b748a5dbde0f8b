"""Shared by every importer: content parts to text (non-text parts become typed placeholders with
their size), tool calls with their arguments (invalid JSON kept raw), tool definitions in any of
the shapes met in the wild, and the section each message belongs to.

The part vocabularies of OpenAI, Anthropic, OTel GenAI, the Vercel AI SDK and the OpenAI Responses
API do not collide (``text`` means the same everywhere), so one reader serves them all.
Structural problems raise ``Malformed`` with their place; the importer of the file decides whether
that refuses the file or only skips one request.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from ..contracts import ChatMessage, ToolCall, ToolDefinition
# The drafts module's names are re-exported: every importer takes its pieces from this module.
from .drafts import (ROLES, TOOL_NAME, Context, Draft, Malformed, Outcome, Parts, as_int, body_messages,  # noqa: F401
                     compact_json, join_place, parse_json_text)
from .model import ImportedRequest, Recorded


def b64_size(data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    data = "".join(data.split())
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def data_url(url: str) -> tuple[str, int] | None:
    """``(mime, bytes)`` of a ``data:`` URL."""
    match = re.match(r"data:([^;,]*)(;[^,]*)?,(.*)", url, re.DOTALL)
    if not match:
        return None
    mime = match.group(1) or "application/octet-stream"
    payload = match.group(3)
    size = b64_size(payload) if match.group(2) and "base64" in match.group(2) else len(payload.encode("utf-8"))
    return mime, size


def media(ctx: Context, kind: str, *, mime: str | None = None, data: str | None = None, url: str | None = None,
          file_id: str | None = None) -> str:
    """A typed placeholder for a non-text part: ``[image: image/png, 48213 bytes]``."""
    if url and url.startswith("data:"):
        found = data_url(url)
        if found:
            mime, size = found
            return ctx.placeholder(kind, f"{mime}, {size} bytes")
    if data is not None:
        return ctx.placeholder(kind, f"{mime or 'unknown type'}, {b64_size(data)} bytes")
    if url:
        return ctx.placeholder(kind, f"{mime + ', ' if mime else ''}{url}")
    if file_id:
        return ctx.placeholder(kind, f"{mime + ', ' if mime else ''}id {file_id}")
    return ctx.placeholder(kind, mime or "")


# ------------------------------------------------------------------------------------------
# tool calls and definitions


def arguments(value: Any, place: str, ctx: Context) -> tuple[dict[str, Any], str | None]:
    """Arguments as an object, or ``({}, raw)`` when the recorded text is not a JSON object."""
    if value is None or value == "":
        return {}, None
    if isinstance(value, dict):
        return value, None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError) as exc:
            ctx.warn(place, f"tool-call arguments are not valid JSON ({exc.msg} at char {exc.pos}); "
                            "kept as recorded in raw_arguments")
            return {}, value
        if isinstance(parsed, dict):
            return parsed, None
        ctx.warn(place, f"tool-call arguments are JSON but not an object ({type(parsed).__name__}); "
                        "kept as recorded in raw_arguments")
        return {}, value
    ctx.warn(place, f"tool-call arguments are a {type(value).__name__}, not an object; kept as JSON text in "
                    "raw_arguments")
    return {}, json.dumps(value, ensure_ascii=False)


def tool_call(call_id: Any, name: Any, args: Any, place: str, ctx: Context) -> ToolCall:
    if not isinstance(call_id, str) or not call_id:
        call_id = ctx.new_id("call")
        ctx.warn(place, f"tool call has no id; named {call_id!r} here")
    elif len(call_id) > 128:
        ctx.warn(place, f"tool call id is {len(call_id)} characters; cut to 128")
        call_id = call_id[:128]
    if not isinstance(name, str) or not name:
        ctx.warn(place, "tool call has no tool name; named 'unnamed' here")
        name = "unnamed"
    elif len(name) > 64:
        ctx.warn(place, f"tool name {name[:20]!r}... is {len(name)} characters; cut to 64")
        name = name[:64]
    parsed, raw = arguments(args, place, ctx)
    return ToolCall(id=call_id, name=name, arguments=parsed, raw_arguments=raw)


def tool_definition(value: Any, place: str, ctx: Context) -> ToolDefinition | None:
    """A tool definition from any common shape; ``None`` (with a warning) for tools that are not
    functions (a provider's built-in web search, say), which have no schema to count."""
    value = parse_json_text(value)
    if not isinstance(value, dict):
        raise Malformed(place, f"a tool definition must be an object, found {type(value).__name__}")
    spec = value
    if isinstance(value.get("function"), dict):  # OpenAI nested form (and OTel before 1.41)
        spec = value["function"]
    elif isinstance(value.get("custom"), dict):  # OpenAI custom (free-text) tools
        spec = value["custom"]
        ctx.warn(place, "custom (free-text input) tool: kept as a function without parameters")
    kind = value.get("type", "function")
    name = spec.get("name")
    if kind not in ("function", "custom", None) and not any(k in spec for k in ("parameters", "input_schema",
                                                                                  "inputSchema")):
        ctx.warn(place, f"built-in tool of type {kind!r} ({name or 'no name'}) has no schema to count; not kept")
        return None
    if not isinstance(name, str) or not name:
        raise Malformed(place, "a tool definition needs a name")
    schema = next((spec[k] for k in ("parameters", "input_schema", "inputSchema", "json_schema", "parameters_json_schema",
                                     "parametersJsonSchema") if k in spec), None)
    schema = parse_json_text(schema)
    if isinstance(schema, dict) and isinstance(schema.get("jsonSchema"), dict):  # Vercel's wrapped schema
        schema = schema["jsonSchema"]
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, dict) or (schema and str(schema.get("type", "object")).lower() != "object"):
        ctx.warn(place, f"tool {name!r}: parameters are not a JSON schema of type object; replaced by an empty one")
        schema = {"type": "object", "properties": {}}
    clean = name
    if not TOOL_NAME.match(name) or len(name) > 64:
        clean = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)[:64]
        ctx.warn(place, f"tool name {name!r} has characters a tool name cannot carry; named {clean!r} here")
    description = spec.get("description")
    if description is not None and not isinstance(description, str):
        description = compact_json(description)
    try:
        return ToolDefinition(name=clean, description=description or "", parameters=schema)
    except ValidationError as exc:
        raise Malformed(place, f"tool {name!r}: {exc.errors(include_url=False)[0]['msg']}") from None


def tool_definitions(values: Any, place: str, ctx: Context) -> list[ToolDefinition]:
    values = parse_json_text(values)
    if values is None:
        return []
    if isinstance(values, dict):  # Langfuse keeps a name -> definition map
        values = [dict(v, name=v.get("name", k)) if isinstance(v, dict) else v for k, v in values.items()]
    if not isinstance(values, list):
        raise Malformed(place, f"tool definitions must be a list, found {type(values).__name__}")
    tools = []
    for i, value in enumerate(values):
        tool = tool_definition(value, f"{place}[{i}]", ctx)
        if tool is not None:
            tools.append(tool)
    return tools


# ------------------------------------------------------------------------------------------
# content parts


def result_text(value: Any, place: str, ctx: Context) -> str:
    """A tool result as the text the model reads."""
    value_ = value
    if isinstance(value_, dict) and value_.get("type") in ("json", "text", "error-text", "error-json") \
            and "value" in value_:  # Vercel AI SDK tool output
        value_ = value_["value"]
    if isinstance(value_, str):
        return value_
    if isinstance(value_, list) and all(isinstance(p, dict) and "type" in p for p in value_):
        parts = read_parts(value_, place, ctx)
        return parts.text() or ""
    return compact_json(value_)


def read_parts(parts: Any, place: str, ctx: Context) -> Parts:
    """Read a content value (a string, ``None`` or a list of typed parts) of any supported format."""
    out = Parts()
    if parts is None:
        return out
    if isinstance(parts, str):
        out.texts.append(parts)
        return out
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        raise Malformed(place, f"content must be a string or a list of parts, found {type(parts).__name__}")
    for j, part in enumerate(parts):
        where = f"{place}[{j}]"
        if isinstance(part, str):
            out.texts.append(part)
            continue
        if not isinstance(part, dict):
            raise Malformed(where, f"a content part must be an object, found {type(part).__name__}")
        _read_part(part, where, ctx, out)
    return out


def _read_part(part: dict[str, Any], where: str, ctx: Context, out: Parts) -> None:
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text") or (kind is None and "text" in part):
        text = part.get("text", part.get("content"))
        if not isinstance(text, str):
            raise Malformed(where, "a text part needs text")
        out.texts.append(text)
    elif kind == "refusal":
        out.texts.append(str(part.get("refusal", "")))
    elif kind in ("tool_call", "tool_use", "tool-call", "function_call"):
        call_id = part.get("id") if kind != "tool-call" else part.get("toolCallId")
        if kind == "function_call":
            call_id = part.get("call_id") or part.get("id")
        name = part.get("toolName") if kind == "tool-call" else part.get("name")
        args = next((part[k] for k in ("arguments", "input", "args") if k in part), None)
        out.calls.append(tool_call(call_id, name, args, where, ctx))
    elif kind in ("tool_call_response", "tool_result", "tool-result", "function_call_output"):
        call_id = {"tool_result": part.get("tool_use_id"), "tool-result": part.get("toolCallId"),
                   "function_call_output": part.get("call_id")}.get(kind, part.get("id"))
        value = next((part[k] for k in ("response", "content", "output", "result") if k in part), "")
        if part.get("is_error"):
            ctx.warn(where, "tool result is marked is_error; the flag is not kept, the text is")
        out.results.append((call_id if isinstance(call_id, str) else None, result_text(value, where, ctx), where))
    elif kind in ("image_url", "input_image"):
        url = part.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        out.texts.append(media(ctx, "image", url=url if isinstance(url, str) else None, file_id=part.get("file_id")))
    elif kind in ("image", "document", "file", "input_file", "input_audio", "audio", "blob", "uri"):
        out.texts.append(_media_part(kind, part, where, ctx))
    elif kind in ("reasoning", "thinking", "redacted_thinking"):
        text = part.get("content") or part.get("thinking") or part.get("text") or part.get("data") or ""
        out.texts.append(ctx.placeholder(kind, f"{len(text) if isinstance(text, str) else 0} chars"))
        ctx.warn(where, f"{kind} part kept as a placeholder (whether a provider re-reads it varies)")
    else:
        ctx.warn(where, f"content part of type {kind!r} is not text; kept as a placeholder")
        out.texts.append(ctx.placeholder(str(kind), f"{len(compact_json(part))} chars of JSON"))


def _media_part(kind: str, part: dict[str, Any], where: str, ctx: Context) -> str:
    """A placeholder for an image, audio, file or document part, whichever format described it."""
    source = part.get("source") if isinstance(part.get("source"), dict) else {}  # Anthropic
    if kind == "document" and source.get("type") == "text" and isinstance(source.get("data"), str):
        return source["data"]  # a plain-text document is text the model reads
    audio = part.get("input_audio") if isinstance(part.get("input_audio"), dict) else {}  # OpenAI
    file_info = part.get("file") if isinstance(part.get("file"), dict) else {}  # OpenAI
    modality = part.get("modality")  # OTel blob / uri / file
    label = "audio" if "audio" in kind else ("file" if kind == "input_file" else kind)
    if kind in ("blob", "uri", "file") and isinstance(modality, str):
        label = modality
    mime = (part.get("mime_type") or part.get("mediaType") or part.get("mimeType") or part.get("media_type")
            or source.get("media_type") or audio.get("format"))
    candidates = [source.get("data") if source.get("type") == "base64" else None, audio.get("data"),
                  file_info.get("file_data"), part.get("file_data"),
                  part.get("content") if kind == "blob" else None,
                  part.get("image") if kind == "image" else None,  # Vercel AI SDK: base64 text or a URL
                  part.get("data") if kind == "file" else None]
    data = next((c for c in candidates if isinstance(c, str)), None)
    url = source.get("url") or part.get("uri") or part.get("url") or part.get("image_url")
    if data is not None and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", data):  # a URL (data: or remote), not base64
        url, data = data, None
    file_id = source.get("file_id") or part.get("file_id") or file_info.get("file_id")
    return media(ctx, label, mime=mime if isinstance(mime, str) else None, data=data,
                 url=url if isinstance(url, str) else None, file_id=file_id if isinstance(file_id, str) else None)


def role_of(raw: Any, place: str) -> str:
    role = ROLES.get(raw.lower()) if isinstance(raw, str) else None
    if role is None:
        raise Malformed(place, f"unknown message role {raw!r}" if raw is not None else "a message needs a role")
    return role


def drafts_from(role: str, parts: Parts, place: str, ctx: Context, *, tool_call_id: str | None = None) -> list[Draft]:
    """Messages for one recorded message: tool results become tool messages (before the text, the way
    Anthropic orders a user turn), calls stay on the assistant message."""
    drafts: list[Draft] = []
    for call_id, text, where in parts.results:
        if call_id is None:
            ctx.warn(where, "tool result without a call id")
        drafts.append(Draft("tool", text, where, tool_call_id=call_id))
    text = parts.text()
    if role == "tool":
        if text is not None or not drafts:
            if tool_call_id is None:
                ctx.warn(place, "tool message without tool_call_id")
            drafts.append(Draft("tool", text if text is not None else "", place, tool_call_id=tool_call_id))
        return drafts
    if parts.calls and role != "assistant":
        ctx.warn(place, f"a {role} message carries tool calls; they are kept on an assistant message")
        drafts.append(Draft("assistant", None, place, tool_calls=list(parts.calls)))
        if text is not None:
            drafts.append(Draft(role, text, place))
        return drafts
    if role == "assistant":
        if text is not None or parts.calls or not drafts:
            drafts.append(Draft("assistant", text, place, tool_calls=list(parts.calls)))
        return drafts
    if text is not None or not drafts:
        drafts.append(Draft(role, text if text is not None else "", place))
    return drafts


# ------------------------------------------------------------------------------------------
# the request


def infer_sections(messages: list[ChatMessage]) -> list[str]:
    """System messages are instructions; the last user message is the current question, what
    comes before it history; after it, assistant tool calls and tool results are the current
    turn's tool exchanges, and a trailing assistant text the model would continue is ``prefill``."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    current = users[-1] if users else -1
    sections = []
    for i, m in enumerate(messages):
        if m.role == "system":
            sections.append("instructions")
        elif i < current:
            sections.append("history")
        elif i == current:
            sections.append("current")
        elif m.role == "tool" or m.tool_calls:
            sections.append("tool_exchanges")
        else:
            later_exchange = any(n.role == "tool" or n.tool_calls for n in messages[i + 1:])
            sections.append("tool_exchanges" if later_exchange else "prefill")
    return sections


def finish(label: str, drafts: list[Draft], tools: list[ToolDefinition], recorded: Recorded, ctx: Context, *,
           output: list[ChatMessage] | None = None) -> ImportedRequest:
    messages = [ChatMessage(role=d.role, content=d.content, tool_calls=d.tool_calls, tool_call_id=d.tool_call_id)
                for d in drafts]
    if ctx.placeholders:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(ctx.placeholders.items()))
        ctx.warn(recorded.source_place, f"non-text content kept as typed placeholders ({kinds}); the counter "
                                        "counts the placeholder text, not what the provider made of it")
    return ImportedRequest(label=label, messages=messages, tools=tools, recorded=recorded,
                           sections=infer_sections(messages), places=[d.place for d in drafts],
                           output=list(output or []), warnings=list(ctx.warnings))


def output_messages(drafts: list[Draft]) -> list[ChatMessage]:
    return [ChatMessage(role=d.role, content=d.content, tool_calls=d.tool_calls, tool_call_id=d.tool_call_id)
            for d in drafts]


def updated(recorded: Recorded, **changes: Any) -> Recorded:
    """``recorded`` with the figures that were found (``None`` leaves a field as it was)."""
    return replace(recorded, **{k: v for k, v in changes.items() if v is not None})


def shown_names(names: list[str], limit: int = 5) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
