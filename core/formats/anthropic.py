"""Anthropic Messages: request bodies (``system`` as text or blocks, ``tool_use`` / ``tool_result``
blocks, tool definitions), the response's usage and stop reason, and streamed responses."""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage
from .model import ImportedRequest, Recorded
from .normalise import (Context, Draft, Malformed, Parts, as_int, body_messages, drafts_from, finish,
                        join_place, output_messages, read_parts, role_of, tool_call, tool_definitions, updated)

FORMAT = "anthropic-messages"
KNOWN_KEYS = {"model", "messages", "system", "tools", "tool_choice", "max_tokens", "temperature", "top_p", "top_k",
              "stop_sequences", "stream", "metadata", "thinking", "service_tier", "container", "mcp_servers",
              "betas", "context_management"}


def has_markers(body: dict[str, Any]) -> bool:
    """Whether a body with ``messages`` is Anthropic's rather than OpenAI's shape."""
    if "system" in body:
        return True
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(_anthropic_block(b) for b in content):
            return True
    return False


def _anthropic_block(block: Any) -> bool:
    return isinstance(block, dict) and (block.get("type") in ("tool_use", "tool_result", "thinking",
                                                              "redacted_thinking")
                                        or isinstance(block.get("source"), dict))


def import_body(body: Any, place: str, label: str, *, file_format: str = FORMAT, response: Any = None,
                stream: list[dict[str, Any]] | None = None) -> ImportedRequest:
    messages = body_messages(body, place, "Messages request")
    ctx = Context()
    drafts: list[Draft] = []
    system = body.get("system")
    if system is not None:
        where = join_place(place, "system")
        parts = read_parts(system, where, ctx)
        drafts.append(Draft("system", parts.text() or "", where))
    for i, message in enumerate(messages):
        where = join_place(place, f"messages[{i}]")
        if not isinstance(message, dict):
            raise Malformed(where, f"a message must be an object, found {type(message).__name__}")
        role = role_of(message.get("role"), f"{where}.role")
        if role not in ("user", "assistant"):
            ctx.warn(f"{where}.role", f"role {message.get('role')!r} is not a Messages API role; kept as {role}")
        drafts += drafts_from(role, read_parts(message.get("content"), f"{where}.content", ctx), where, ctx)
    tools = tool_definitions(body.get("tools"), join_place(place, "tools"), ctx)
    breakpoints = _cache_breakpoints(body)
    if breakpoints:
        ctx.warn(place, f"{breakpoints} cache_control breakpoint(s) are not kept: they mark what the provider caches, "
                        "which changes the price and the recorded cache figures, not the tokens sent")
    ignored = sorted(k for k in body if k not in KNOWN_KEYS)
    if ignored:
        ctx.warn(place, "keys that are not part of a Messages request were ignored: " + ", ".join(ignored))
    recorded = Recorded(format=file_format if file_format == FORMAT else f"{file_format}/{FORMAT}",
                        model=body.get("model") if isinstance(body.get("model"), str) else None,
                        provider="anthropic", source_place=place, name=label,
                        max_output_tokens=as_int(body.get("max_tokens")))
    output: list[ChatMessage] = []
    if response is not None:
        recorded, output = _with_response(recorded, response, join_place(place, "response"), ctx)
    elif stream is not None:
        recorded, output = _with_stream(recorded, stream, ctx)
    return finish(label, drafts, tools, recorded, ctx, output=output)


def _cache_breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_cache_breakpoints(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_cache_breakpoints(v) for v in value)
    return 0


def input_tokens(usage: Any) -> int | None:
    """The whole input: Anthropic reports tokens read from and written to the prompt cache apart
    from ``input_tokens``, so they are added back."""
    if not isinstance(usage, dict) or as_int(usage.get("input_tokens")) is None:
        return None
    return sum(as_int(usage.get(k)) or 0 for k in
               ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def _with_response(recorded: Recorded, response: Any, place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object; its usage is not read")
        return recorded, []
    if response.get("type") == "error" or isinstance(response.get("error"), dict):
        error = response.get("error") if isinstance(response.get("error"), dict) else {}
        ctx.warn(place, f"the provider answered with an error: {error.get('message', '')}")
        return recorded, []
    usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    output = output_messages(drafts_from("assistant", read_parts(response.get("content"), f"{place}.content", ctx),
                                         place, ctx))
    return updated(recorded, input_tokens=input_tokens(usage), output_tokens=as_int(usage.get("output_tokens")),
                   finish_reason=response.get("stop_reason"), model=recorded.model or response.get("model")), output


def _with_stream(recorded: Recorded, events: list[dict[str, Any]], ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    """``message_start`` carries the input usage, ``message_delta`` the stop reason and output tokens;
    text and tool input arrive as deltas per content block."""
    usage_in = usage_out = None
    stop = None
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            usage_in = input_tokens(event["message"].get("usage"))
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            block = dict(event["content_block"])
            block.setdefault("text", "")
            block["partial_json"] = ""
            blocks[as_int(event.get("index")) or 0] = block
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            block = blocks.setdefault(as_int(event.get("index")) or 0, {"type": "text", "text": "", "partial_json": ""})
            delta = event["delta"]
            block["text"] = block.get("text", "") + (delta.get("text") or "")
            block["partial_json"] += delta.get("partial_json") or ""
        elif kind == "message_delta":
            delta = event.get("delta") if isinstance(event.get("delta"), dict) else {}
            stop = delta.get("stop_reason") or stop
            usage = event.get("usage") if isinstance(event.get("usage"), dict) else {}
            usage_out = as_int(usage.get("output_tokens")) or usage_out
    parts = Parts()
    for index, block in sorted(blocks.items()):
        if block.get("type") == "tool_use":
            arguments = block["partial_json"] or block.get("input")
            parts.calls.append(tool_call(block.get("id"), block.get("name"), arguments,
                                         f"stream content block {index}", ctx))
        elif block.get("text"):
            parts.texts.append(block["text"])
    output = output_messages(drafts_from("assistant", parts, "stream", ctx))
    return updated(recorded, input_tokens=usage_in, output_tokens=usage_out, finish_reason=stop), output
