"""Gemini and Vertex AI ``generateContent``: request bodies (``contents`` with ``parts``,
``systemInstruction``, ``tools[].functionDeclarations``) and recorded responses (``candidates``,
``usageMetadata``), in the REST API's camelCase or the protobuf snake_case spelling.

``functionCall`` parts carry no id in most recordings: each gets one, and each ``functionResponse``
is paired with the earliest unanswered call of its name (said in a note). ``thought`` parts are
reasoning; ``inlineData`` / ``fileData`` / code execution are typed placeholders with their size.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ...contracts import ChatMessage
from ..model import ImportedRequest, Recorded
from ..normalise import (Context, Draft, Malformed, Parts, as_int, compact_json, finish, join_place, media,
                         output_messages, result_text, tool_call, tool_definition, updated)

FORMAT = "gemini-generate"
KNOWN_KEYS = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings",
              "cachedContent", "labels", "model"}
ROLES = {"user": "user", "model": "assistant", "function": "user", "tool": "user", "system": "system"}
BUILTIN_TOOLS = ("googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext", "retrieval",
                 "googleMaps", "computerUse", "fileSearch", "enterpriseWebSearch")


def get(obj: dict[str, Any], camel: str) -> Any:
    """A field by its camelCase name or its snake_case spelling."""
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel))


def is_body(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("contents"), list) and "messages" not in value


def model_from_path(path: str) -> str | None:
    """``gemini-2.0-flash`` from ``/v1beta/models/gemini-2.0-flash:generateContent`` (Vertex paths too)."""
    match = re.search(r"/models/([^/:]+):(stream)?[Gg]enerate[Cc]ontent", unquote(path))
    return match.group(1) if match else None


class _Calls:
    """Function calls of the request, so that each response finds its call (by id, else by name)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.pending: list[tuple[str, str]] = []  # (name, id) not yet answered
        self.generated = 0

    def call(self, fc: Any, place: str):
        if not isinstance(fc, dict):
            raise Malformed(place, f"functionCall must be an object, found {type(fc).__name__}")
        call_id = fc.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.generated += 1
            call_id = f"gemini-call-{self.generated}"
        args = fc.get("args")
        call = tool_call(call_id, fc.get("name"), args if args is not None else {}, place, self.ctx)
        self.pending.append((call.name, call.id))
        return call

    def answer(self, name: Any, call_id: Any) -> str | None:
        if isinstance(call_id, str) and call_id:
            self.pending = [p for p in self.pending if p[1] != call_id]
            return call_id
        for i, (pending_name, pending_id) in enumerate(self.pending):
            if pending_name == name:
                del self.pending[i]
                return pending_id
        return None


def _parts(content: Any, place: str, ctx: Context, calls: _Calls) -> Parts:
    out = Parts()
    if not isinstance(content, dict):
        raise Malformed(place, f"a content must be an object with 'parts', found {type(content).__name__}")
    parts = content.get("parts")
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        raise Malformed(f"{place}.parts", "expected a list of parts" if parts is not None else "a content needs parts")
    for j, part in enumerate(parts):
        where = f"{place}.parts[{j}]"
        if not isinstance(part, dict):
            raise Malformed(where, f"a part must be an object, found {type(part).__name__}")
        _part(part, where, ctx, calls, out)
    return out


def _part(part: dict[str, Any], where: str, ctx: Context, calls: _Calls, out: Parts) -> None:
    signature = get(part, "thoughtSignature")
    if isinstance(signature, str) and signature:
        ctx.warn(where, f"thoughtSignature ({len(signature)} chars, encrypted) is sent back to the provider and "
                        "cannot be read here; not counted")
    if "text" in part:
        text = part["text"]
        if not isinstance(text, str):
            raise Malformed(f"{where}.text", f"expected text, found {type(text).__name__}")
        if part.get("thought") is True:
            out.texts.append(ctx.placeholder("reasoning", f"{len(text)} chars"))
            ctx.warn(where, "thought part (reasoning) kept as a placeholder")
        else:
            out.texts.append(text)
    elif get(part, "functionCall") is not None:
        out.calls.append(calls.call(get(part, "functionCall"), f"{where}.functionCall"))
    elif get(part, "functionResponse") is not None:
        fr = get(part, "functionResponse")
        if not isinstance(fr, dict):
            raise Malformed(f"{where}.functionResponse", f"expected an object, found {type(fr).__name__}")
        call_id = calls.answer(fr.get("name"), fr.get("id"))
        if call_id is None:
            ctx.warn(where, f"functionResponse for {fr.get('name')!r} answers no earlier functionCall of that name")
        response = fr.get("response")
        out.results.append((call_id, result_text(response if response is not None else {}, where, ctx), where))
        if get(fr, "parts"):
            ctx.warn(where, "the functionResponse's own parts (multimodal output) are not kept")
    elif get(part, "inlineData") is not None:
        data = get(part, "inlineData")
        data = data if isinstance(data, dict) else {}
        mime = _text(get(data, "mimeType"))
        out.texts.append(media(ctx, _kind(mime), mime=mime, data=_text(data.get("data")) or ""))
    elif get(part, "fileData") is not None:
        data = get(part, "fileData")
        data = data if isinstance(data, dict) else {}
        mime = _text(get(data, "mimeType"))
        out.texts.append(media(ctx, _kind(mime), mime=mime, url=_text(get(data, "fileUri"))))
    elif get(part, "executableCode") is not None or get(part, "codeExecutionResult") is not None:
        kind = "executableCode" if get(part, "executableCode") is not None else "codeExecutionResult"
        size = len(compact_json(get(part, kind)))
        ctx.warn(where, f"{kind} (built-in code execution, {size} chars of JSON) kept as a placeholder")
        out.texts.append(ctx.placeholder(kind, f"{size} chars of JSON"))
    elif not (set(part) - {"thought", "thoughtSignature", "thought_signature", "videoMetadata", "video_metadata",
                           "partMetadata", "part_metadata", "mediaResolution", "media_resolution"}):
        if part:
            ctx.warn(where, "a part with only metadata (" + ", ".join(sorted(part)) + "); nothing to read")
    else:
        ctx.warn(where, "a part of an unknown kind (" + ", ".join(sorted(map(str, part))) + "); kept as a placeholder")
        out.texts.append(ctx.placeholder("part", f"{len(compact_json(part))} chars of JSON"))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _kind(mime: Any) -> str:
    if isinstance(mime, str) and "/" in mime:
        major = mime.split("/")[0]
        return {"image": "image", "audio": "audio", "video": "video"}.get(major, "file")
    return "file"


def _drafts(role: str, parts: Parts, place: str) -> list[Draft]:
    drafts = [Draft("tool", text, where, tool_call_id=call_id) for call_id, text, where in parts.results]
    text = parts.text()
    if role == "assistant":
        if text is not None or parts.calls or not drafts:
            drafts.append(Draft("assistant", text, place, tool_calls=list(parts.calls)))
    elif text is not None or not drafts:
        drafts.append(Draft(role, text or "", place))
    return drafts


def _schema(value: Any) -> Any:
    """Gemini's OpenAPI subset writes types in capitals (``OBJECT``); JSON Schema wants them lower-case."""
    if isinstance(value, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _schema(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_schema(v) for v in value]
    return value


def _tools(tools: Any, place: str, ctx: Context):
    if tools is None:
        return []
    if isinstance(tools, dict):
        tools = [tools]
    if not isinstance(tools, list):
        raise Malformed(place, f"tools must be a list, found {type(tools).__name__}")
    found = []
    for i, tool in enumerate(tools):
        where = f"{place}[{i}]"
        if not isinstance(tool, dict):
            raise Malformed(where, f"a tool must be an object, found {type(tool).__name__}")
        declarations = get(tool, "functionDeclarations")
        if declarations is not None:
            if not isinstance(declarations, list):
                raise Malformed(f"{where}.functionDeclarations", "expected a list")
            for j, decl in enumerate(declarations):
                at = f"{where}.functionDeclarations[{j}]"
                if not isinstance(decl, dict):
                    raise Malformed(at, f"a function declaration must be an object, found {type(decl).__name__}")
                schema = next((decl[k] for k in ("parametersJsonSchema", "parameters_json_schema", "parameters")
                               if decl.get(k) is not None), None)
                spec = {"name": decl.get("name"), "description": decl.get("description")}
                if schema is not None:
                    spec["parameters"] = _schema(schema)
                definition = tool_definition(spec, at, ctx)
                if definition is not None:
                    found.append(definition)
        others = sorted(str(k) for k in tool if k not in ("functionDeclarations", "function_declarations"))
        if others:
            ctx.warn(where, "built-in tool(s) " + ", ".join(others) + " have no schema to count; not kept")
    return found


def import_body(body: Any, place: str, label: str, *, file_format: str = FORMAT, response: Any = None,
                stream: list[dict[str, Any]] | None = None, model: str | None = None) -> ImportedRequest:
    if not isinstance(body, dict):
        raise Malformed(place or "top level", f"a request body must be a JSON object, found {type(body).__name__}")
    contents = body.get("contents")
    if not isinstance(contents, list):
        raise Malformed(join_place(place, "contents"), "expected a list of contents" if contents is not None
                        else "a generateContent body needs 'contents'")
    ctx = Context()
    calls = _Calls(ctx)
    drafts: list[Draft] = []
    system = get(body, "systemInstruction")
    if system is not None:
        where = join_place(place, "systemInstruction")
        parts = Parts(texts=[system]) if isinstance(system, str) else _parts(system, where, ctx, calls)
        drafts.append(Draft("system", parts.text() or "", where))
    for i, content in enumerate(contents):
        where = join_place(place, f"contents[{i}]")
        raw = content.get("role") if isinstance(content, dict) else None
        if raw is not None and (not isinstance(raw, str) or raw not in ROLES):
            raise Malformed(f"{where}.role", f"unknown role {raw!r} (generateContent uses 'user' and 'model')")
        drafts += _drafts(ROLES.get(raw or "user", "user"), _parts(content, where, ctx, calls), where)
    if calls.generated:
        ctx.warn(place, f"{calls.generated} functionCall part(s) carry no id (Gemini sends none): named "
                        "gemini-call-N here, each functionResponse paired with the earliest call of its name")
    cached = get(body, "cachedContent")
    if cached:
        ctx.warn(join_place(place, "cachedContent"), f"the request uses cached content {cached}; the provider adds "
                                                     "it, and this file does not hold it")
    tools = _tools(body.get("tools"), join_place(place, "tools"), ctx)
    ignored = sorted(str(k) for k in body if k not in KNOWN_KEYS and re.sub(
        r"_([a-z])", lambda m: m.group(1).upper(), str(k)) not in KNOWN_KEYS)
    if ignored:
        ctx.warn(place, "keys that are not part of a generateContent request were ignored: " + ", ".join(ignored))
    config = get(body, "generationConfig") if isinstance(get(body, "generationConfig"), dict) else {}
    body_model = body.get("model") if isinstance(body.get("model"), str) else None
    recorded = Recorded(format=file_format if file_format == FORMAT else f"{file_format}/{FORMAT}",
                        model=model or body_model, provider="gemini", source_place=place, name=label,
                        max_output_tokens=as_int(get(config, "maxOutputTokens")))
    output: list[ChatMessage] = []
    if stream is not None:  # streamGenerateContent: usage and the finish reason arrive on the last chunks
        recorded, output = _read_stream(recorded, stream, join_place(place, "response"), ctx)
    elif isinstance(response, list):  # streamGenerateContent without alt=sse: a JSON array of chunks
        recorded, output = _read_stream(recorded, response, join_place(place, "response"), ctx)
    elif response is not None:
        recorded, output = read_response(recorded, response, join_place(place, "response"), ctx)
    return finish(label, drafts, tools, recorded, ctx, output=output)


def usage_figures(usage: Any) -> dict[str, int | None]:
    if not isinstance(usage, dict):
        return {}
    return {"input_tokens": as_int(get(usage, "promptTokenCount")),
            "cached_input_tokens": as_int(get(usage, "cachedContentTokenCount")),
            "output_tokens": as_int(get(usage, "candidatesTokenCount"))}


def read_response(recorded: Recorded, response: Any, place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object; its usage is not read")
        return recorded, []
    if isinstance(response.get("error"), dict):
        ctx.warn(place, f"the provider answered with an error: {response['error'].get('message', '')}")
        return recorded, []
    candidates = response.get("candidates") if isinstance(response.get("candidates"), list) else []
    first = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    output: list[ChatMessage] = []
    if isinstance(first.get("content"), dict):
        try:
            output = output_messages(_drafts("assistant", _parts(first["content"], f"{place}.candidates[0].content",
                                                                 Context(), _Calls(Context())), place))
        except Malformed as exc:
            ctx.warn(exc.place, f"the recorded answer is not read: {exc.problem}")
    reason = get(first, "finishReason")
    version = get(response, "modelVersion")
    return updated(recorded, **usage_figures(get(response, "usageMetadata")),
                   finish_reason=reason if isinstance(reason, str) else None,
                   model=recorded.model or (version if isinstance(version, str) else None),
                   entry_id=get(response, "responseId") if isinstance(get(response, "responseId"), str) else None
                   ), output


def _read_stream(recorded: Recorded, chunks: list[Any], place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    parts: list[Any] = []
    last: dict[str, Any] = {}
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        candidates = chunk.get("candidates") if isinstance(chunk.get("candidates"), list) else []
        if candidates and isinstance(candidates[0], dict) and isinstance(candidates[0].get("content"), dict):
            more = candidates[0]["content"].get("parts")
            for part in more if isinstance(more, list) else []:
                joinable = isinstance(part, dict) and set(part) == {"text"} and isinstance(part["text"], str)
                if joinable and parts and isinstance(parts[-1], dict) and set(parts[-1]) == {"text"}:
                    parts[-1] = {"text": parts[-1]["text"] + part["text"]}  # a streamed text arrives in pieces
                else:
                    parts.append(part)
            if get(candidates[0], "finishReason"):
                last["finishReason"] = get(candidates[0], "finishReason")
        if get(chunk, "usageMetadata") is not None:
            last["usageMetadata"] = get(chunk, "usageMetadata")
        if get(chunk, "modelVersion"):
            last["modelVersion"] = get(chunk, "modelVersion")
    merged = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": last.get("finishReason")}],
              "usageMetadata": last.get("usageMetadata"), "modelVersion": last.get("modelVersion")}
    return read_response(recorded, merged, place, ctx)
