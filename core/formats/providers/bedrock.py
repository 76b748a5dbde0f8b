"""Amazon Bedrock Converse: request bodies (``messages`` of content blocks, ``system`` blocks,
``toolConfig.tools[].toolSpec``) and recorded responses (``output.message``, ``usage``).

Content blocks are objects with one key naming their kind (``text``, ``toolUse``, ``toolResult``,
``reasoningContent``, ``image``, ``document``...), not a ``type`` field as in Anthropic's API.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ...contracts import ChatMessage
from ..model import ImportedRequest, Recorded
from ..normalise import (Context, Draft, Malformed, Parts, as_int, compact_json, finish, join_place, media,
                         output_messages, role_of, tool_call, tool_definition, updated)

FORMAT = "bedrock-converse"
KNOWN_KEYS = {"messages", "system", "toolConfig", "inferenceConfig", "additionalModelRequestFields",
              "additionalModelResponseFieldPaths", "guardrailConfig", "promptVariables", "requestMetadata",
              "performanceConfig", "modelId"}
BLOCK_KINDS = {"text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "cachePoint",
               "reasoningContent", "citationsContent", "audio", "searchResult"}


def _bedrock_block(block: Any) -> bool:
    return isinstance(block, dict) and "type" not in block and bool(block) and set(block) <= BLOCK_KINDS


def is_body(value: Any) -> bool:
    """A Converse body: ``messages`` whose content blocks are keyed by kind, or Converse-only keys."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    if any(k in value for k in ("toolConfig", "inferenceConfig", "additionalModelRequestFields", "guardrailConfig")):
        return True
    blocks = [b for m in value["messages"] if isinstance(m, dict) and isinstance(m.get("content"), list)
              for b in m["content"]]
    system = value.get("system")
    if isinstance(system, list) and system and all(_bedrock_block(b) for b in system):
        return not blocks or all(_bedrock_block(b) for b in blocks)
    return bool(blocks) and all(_bedrock_block(b) for b in blocks)


def model_from_path(path: str) -> str | None:
    match = re.search(r"/model/([^/]+)/converse(-stream)?$", path)
    return unquote(match.group(1)) if match else None


def _blocks(blocks: Any, place: str, ctx: Context) -> Parts:
    out = Parts()
    if isinstance(blocks, str):
        out.texts.append(blocks)
        return out
    if not isinstance(blocks, list):
        raise Malformed(place, f"content must be a list of blocks, found {type(blocks).__name__}")
    for j, block in enumerate(blocks):
        where = f"{place}[{j}]"
        if not isinstance(block, dict):
            raise Malformed(where, f"a content block must be an object, found {type(block).__name__}")
        _block(block, where, ctx, out)
    return out


def _block(block: dict[str, Any], where: str, ctx: Context, out: Parts) -> None:
    if "text" in block:
        if not isinstance(block["text"], str):
            raise Malformed(f"{where}.text", f"expected text, found {type(block['text']).__name__}")
        out.texts.append(block["text"])
    elif "toolUse" in block:
        use = block["toolUse"]
        if not isinstance(use, dict):
            raise Malformed(f"{where}.toolUse", f"expected an object, found {type(use).__name__}")
        out.calls.append(tool_call(use.get("toolUseId"), use.get("name"), use.get("input"), f"{where}.toolUse", ctx))
    elif "toolResult" in block:
        result = block["toolResult"]
        if not isinstance(result, dict):
            raise Malformed(f"{where}.toolResult", f"expected an object, found {type(result).__name__}")
        inner = _result_parts(result.get("content"), f"{where}.toolResult.content", ctx)
        if result.get("status") == "error":
            ctx.warn(where, "tool result has status 'error'; the flag is not kept, the text is")
        call_id = result.get("toolUseId")
        out.results.append((call_id if isinstance(call_id, str) else None, inner, where))
    elif "reasoningContent" in block:
        reasoning = block["reasoningContent"] if isinstance(block["reasoningContent"], dict) else {}
        text = reasoning.get("reasoningText") if isinstance(reasoning.get("reasoningText"), dict) else {}
        chars = len(text["text"]) if isinstance(text.get("text"), str) else 0
        redacted = reasoning.get("redactedContent")
        detail = f"{chars} chars" + (f", {len(redacted)} chars redacted" if isinstance(redacted, str) else "")
        out.texts.append(ctx.placeholder("reasoning", detail))
        ctx.warn(where, "reasoningContent kept as a placeholder" + (" (its signature is sent back to the provider)"
                                                                     if text.get("signature") else ""))
    elif any(k in block for k in ("image", "document", "video", "audio")):
        kind = next(k for k in ("image", "document", "video", "audio") if k in block)
        value = block[kind] if isinstance(block[kind], dict) else {}
        source = value.get("source") if isinstance(value.get("source"), dict) else {}
        fmt = value.get("format")
        mime = f"{kind}/{fmt}" if isinstance(fmt, str) else None
        if kind == "document" and isinstance(source.get("text"), str):
            out.texts.append(source["text"])  # a text document is text the model reads
        elif isinstance(source.get("bytes"), str):
            out.texts.append(media(ctx, kind, mime=mime, data=source["bytes"]))
        else:
            location = source.get("s3Location") if isinstance(source.get("s3Location"), dict) else {}
            uri = location.get("uri")
            out.texts.append(media(ctx, kind, mime=mime, url=uri if isinstance(uri, str) else None))
    elif "cachePoint" in block:
        pass  # a cache marker between blocks, not content
    else:
        kind = ", ".join(sorted(map(str, block))) or "empty"
        ctx.warn(where, f"content block {kind} is not text; kept as a placeholder")
        out.texts.append(ctx.placeholder(kind, f"{len(compact_json(block))} chars of JSON"))


def _result_parts(content: Any, place: str, ctx: Context) -> str:
    if content is None:
        return ""
    if not isinstance(content, list):
        raise Malformed(place, f"tool result content must be a list of blocks, found {type(content).__name__}")
    texts = []
    for j, item in enumerate(content):
        where = f"{place}[{j}]"
        if not isinstance(item, dict):
            raise Malformed(where, f"a tool result block must be an object, found {type(item).__name__}")
        if "json" in item:
            texts.append(compact_json(item["json"]))
        else:
            inner = Parts()
            _block(item, where, ctx, inner)
            texts += inner.texts
    return "\n".join(texts)


def _tools(config: Any, place: str, ctx: Context):
    if config is None:
        return []
    if not isinstance(config, dict):
        raise Malformed(place, f"toolConfig must be an object, found {type(config).__name__}")
    tools = config.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise Malformed(f"{place}.tools", f"expected a list of tools, found {type(tools).__name__}")
    found = []
    for i, tool in enumerate(tools):
        where = f"{place}.tools[{i}]"
        if not isinstance(tool, dict):
            raise Malformed(where, f"a tool must be an object, found {type(tool).__name__}")
        spec = tool.get("toolSpec")
        if isinstance(spec, dict):
            schema = spec.get("inputSchema")
            schema = schema.get("json") if isinstance(schema, dict) and "json" in schema else schema
            definition = tool_definition({"name": spec.get("name"), "description": spec.get("description"),
                                          "parameters": schema if schema is not None else {"type": "object"}},
                                         f"{where}.toolSpec", ctx)
            if definition is not None:
                found.append(definition)
        elif "cachePoint" not in tool:
            ctx.warn(where, "tool " + ", ".join(sorted(map(str, tool))) + " has no toolSpec to count; not kept")
    return found


def import_body(body: Any, place: str, label: str, *, file_format: str = FORMAT, response: Any = None,
                stream: list[dict[str, Any]] | None = None, model: str | None = None) -> ImportedRequest:
    if not isinstance(body, dict):
        raise Malformed(place or "top level", f"a request body must be a JSON object, found {type(body).__name__}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise Malformed(join_place(place, "messages"), "expected a list of messages" if messages is not None
                        else "a Converse body needs 'messages'")
    ctx = Context()
    drafts: list[Draft] = []
    system = body.get("system")
    if system not in (None, []):
        where = join_place(place, "system")
        drafts.append(Draft("system", _blocks(system, where, ctx).text() or "", where))
    for i, message in enumerate(messages):
        where = join_place(place, f"messages[{i}]")
        if not isinstance(message, dict):
            raise Malformed(where, f"a message must be an object, found {type(message).__name__}")
        role = role_of(message.get("role"), f"{where}.role")
        if role not in ("user", "assistant"):
            ctx.warn(f"{where}.role", f"role {message.get('role')!r} is not a Converse role; kept as {role}")
        parts = _blocks(message.get("content"), f"{where}.content", ctx)
        drafts += [Draft("tool", text, at, tool_call_id=call_id) for call_id, text, at in parts.results]
        for call_id, _, at in parts.results:
            if call_id is None:
                ctx.warn(at, "tool result without a toolUseId")
        text = parts.text()
        if role == "assistant":
            if text is not None or parts.calls or not parts.results:
                drafts.append(Draft("assistant", text, where, tool_calls=list(parts.calls)))
        elif text is not None or not parts.results:
            if parts.calls:
                ctx.warn(where, f"a {role} message carries toolUse blocks; they are kept on an assistant message")
                drafts.append(Draft("assistant", None, where, tool_calls=list(parts.calls)))
            drafts.append(Draft(role, text or "", where))
    tools = _tools(body.get("toolConfig"), join_place(place, "toolConfig"), ctx)
    ignored = sorted(str(k) for k in body if k not in KNOWN_KEYS)
    if ignored:
        ctx.warn(place, "keys that are not part of a Converse request were ignored: " + ", ".join(ignored))
    config = body.get("inferenceConfig") if isinstance(body.get("inferenceConfig"), dict) else {}
    body_model = body.get("modelId") if isinstance(body.get("modelId"), str) else None
    recorded = Recorded(format=file_format if file_format == FORMAT else f"{file_format}/{FORMAT}",
                        model=model or body_model, provider="aws.bedrock", source_place=place, name=label,
                        max_output_tokens=as_int(config.get("maxTokens")))
    output: list[ChatMessage] = []
    if stream is not None:
        ctx.warn(place, "a streamed Converse response is not read")
    elif response is not None:
        recorded, output = read_response(recorded, response, join_place(place, "response"), ctx)
    return finish(label, drafts, tools, recorded, ctx, output=output)


def usage_figures(usage: Any) -> dict[str, int | None]:
    """The whole input: like Anthropic's, Bedrock's inputTokens leaves out tokens read from or written
    to the prompt cache, so they are added back."""
    if not isinstance(usage, dict) or as_int(usage.get("inputTokens")) is None:
        return {}
    read = as_int(usage.get("cacheReadInputTokens")) or 0
    write = as_int(usage.get("cacheWriteInputTokens")) or 0
    return {"input_tokens": (as_int(usage.get("inputTokens")) or 0) + read + write,
            "cached_input_tokens": read, "cache_write_tokens": write,
            "output_tokens": as_int(usage.get("outputTokens"))}


def read_response(recorded: Recorded, response: Any, place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object (a binary event stream?); its usage is not read")
        return recorded, []
    if "message" in response and "output" not in response:
        ctx.warn(place, f"the provider answered with an error: {response.get('message')}")
        return recorded, []
    out = response.get("output") if isinstance(response.get("output"), dict) else {}
    message = out.get("message") if isinstance(out.get("message"), dict) else None
    output: list[ChatMessage] = []
    if message is not None:
        try:
            parts = _blocks(message.get("content"), f"{place}.output.message.content", Context())
            output = output_messages([Draft("assistant", parts.text(), place, tool_calls=list(parts.calls))])
        except Malformed as exc:
            ctx.warn(exc.place, f"the recorded answer is not read: {exc.problem}")
    reason = response.get("stopReason")
    return updated(recorded, **usage_figures(response.get("usage")),
                   finish_reason=reason if isinstance(reason, str) else None), output
