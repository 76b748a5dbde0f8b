"""The message readers of every span convention: OTel GenAI attributes and events, OpenLLMetry's and
OpenInference's flattened keys, chat lists in any framework's shape; plus the span event and the
dotted-key helpers they share. ``genai`` picks which convention a span carries.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .normalise import (ROLES, Context, Draft, Malformed, drafts_from, parse_json_text, read_parts, role_of,
                        tool_call)

MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


@dataclass
class Event:
    """A span event or log record: its name, attributes and (for log records) body."""

    name: str
    attributes: dict[str, Any]
    body: Any = None
    place: str = ""


def inside(place: str, key: str) -> str:
    """A place inside a span: ``spans[1] / gen_ai.input.messages[2]`` (just the key for a bare attributes file)."""
    return f"{place} / {key}" if place else key


def first(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def unflatten(attrs: dict[str, Any], prefix: str) -> Any:
    """Nested values from dotted keys under ``prefix`` (``llm.input_messages.0.message.role``); numeric
    levels become lists in index order. A structured value stored at ``prefix`` itself is returned as is."""
    if prefix in attrs and not isinstance(attrs[prefix], str):
        return attrs[prefix]
    root: dict[str, Any] = {}
    dot = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(dot):
            continue
        node = root
        parts = key[len(dot):].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _lists(root) if root else None


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(re.fullmatch(r"\d+", k) for k in node):
        size = max(int(k) for k in node) + 1
        return [_lists(node.get(str(i))) for i in range(size)]  # a gap stays None: reported by the reader
    return {k: _lists(v) for k, v in node.items()}


def _decoded(value: Any, place: str) -> Any:
    decoded = parse_json_text(value)
    if isinstance(decoded, str):
        raise Malformed(place, "expected JSON (or a structured value), found text that is not JSON")
    return decoded


def semconv(attrs: dict[str, Any], place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    if "gen_ai.system_instructions" in attrs:
        where = inside(place, "gen_ai.system_instructions")
        parts = read_parts(_decoded(attrs["gen_ai.system_instructions"], where), where, ctx)
        drafts.append(Draft("system", parts.text() or "", where))
    where = inside(place, "gen_ai.input.messages")
    messages = _decoded(attrs.get("gen_ai.input.messages", []), where)
    if not isinstance(messages, list):
        raise Malformed(where, f"expected a list of messages, found {type(messages).__name__}")
    for i, message in enumerate(messages):
        at = f"{where}[{i}]"
        if not isinstance(message, dict):
            raise Malformed(at, f"a message must be an object, found {type(message).__name__}")
        role = role_of(message.get("role"), f"{at}.role")
        parts = message.get("parts", message.get("content"))
        new = drafts_from(role, read_parts(parts, f"{at}.parts", ctx), at, ctx)
        if role == "system" and drafts and drafts[0].role == "system" and i == 0 \
                and new and new[0].content == drafts[0].content:
            continue  # the same system prompt recorded both ways (Langfuse and Phoenix prepend it)
        drafts += new
    return drafts


def chat_list(value: Any, place: str, ctx: Context) -> list[Draft]:
    """Messages in OpenAI / Vercel AI SDK / Anthropic shape: ``{role, content}`` with string or parts."""
    messages = _decoded(value, place)
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise Malformed(place, f"expected a list of messages, found {type(messages).__name__}")
    return chat_messages(messages, place, ctx)


def chat_messages(messages: list[Any], place: str, ctx: Context) -> list[Draft]:
    """A list of chat messages of any framework's shape, in order (see ``chat_message``)."""
    drafts: list[Draft] = []
    for i, message in enumerate(messages):
        at = f"{place}[{i}]"
        if not isinstance(message, dict):
            raise Malformed(at, f"a message must be an object, found {type(message).__name__}")
        drafts += chat_message(message, at, ctx, earlier=drafts)
    return drafts


def _named_result(role: Any, earlier: list[Draft]) -> str | None:
    """The id of the latest call of tool ``role``: LangChain JS writes a tool result with the tool's
    name as its role (and no ``tool_call_id``)."""
    if not isinstance(role, str) or role.lower() in ROLES:
        return None
    for draft in reversed(earlier):
        for call in draft.tool_calls:
            if call.name == role:
                return call.id
    return None


def chat_message(message: dict[str, Any], at: str, ctx: Context, earlier: list[Draft] | None = None) -> list[Draft]:
    """One ``{role, content, tool_calls?, tool_call_id?}`` message: OpenAI's shape, LangChain's
    (``tool_calls`` with ``args``), OTel GenAI's (``parts``), or the Responses API's ``function_call`` /
    ``function_call_output`` items, which carry no role. ``earlier`` is what came before it in the
    same request (to pair a LangChain tool result that names its tool instead of its role)."""
    if message.get("type") in ("function_call", "function_call_output") and "role" not in message:
        parts = read_parts([message], at, ctx)
        return drafts_from("assistant" if message["type"] == "function_call" else "tool", parts, at, ctx)
    raw_role = message.get("role")
    named = _named_result(raw_role, earlier or [])
    if named is not None:
        ctx.warn(f"{at}.role", f"role {raw_role!r} is the name of the tool called as {named!r}: read as its result "
                               "(LangChain writes tool results so)")
        role = "tool"
    else:
        role = role_of(raw_role, f"{at}.role")
    content = message.get("content") if message.get("content") is not None else message.get("parts")
    parts = read_parts(content, f"{at}.content" if "content" in message else f"{at}.parts", ctx)
    calls = parse_json_text(message.get("tool_calls")) or []  # events record them as JSON text
    if not isinstance(calls, list):
        raise Malformed(f"{at}.tool_calls", f"expected a list of tool calls, found {type(calls).__name__}")
    seen = {c.id for c in parts.calls}  # LangChain keeps Anthropic's tool_use blocks in content too
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            raise Malformed(f"{at}.tool_calls[{j}]", f"a tool call must be an object, found {type(call).__name__}")
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        args = next((fn[k] for k in ("arguments", "args", "input") if k in fn), None)
        if isinstance(call.get("id"), str) and call.get("id") in seen:
            continue
        parts.calls.append(tool_call(call.get("id"), fn.get("name"), args, f"{at}.tool_calls[{j}]", ctx))
    tool_call_id = message.get("tool_call_id") or (message.get("id") if role == "tool" else None) or named
    return drafts_from(role, parts, at, ctx, tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None)


def message_events(events: list[Event], ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for event in events:
        role = MESSAGE_EVENTS.get(event.name)
        if role is None:
            continue
        body = event.body if isinstance(event.body, dict) else None
        if body is None:
            content = event.attributes.get("gen_ai.event.content", event.attributes.get("body"))
            body = parse_json_text(content) if content is not None else dict(event.attributes)
        if not isinstance(body, dict):
            body = {"content": body}
        body = dict(body, role=body.get("role") or role)
        drafts += chat_message(body, event.place, ctx)
    return drafts


def indexed(items: Any, place: str, ctx: Context) -> list[tuple[int, Any]]:
    """Items of a flattened list; a missing index is reported (an attribute limit drops keys silently)."""
    if not isinstance(items, list):
        return []
    out = []
    for i, item in enumerate(items):
        if item is None:
            ctx.warn(f"{place}.{i}", "this index is missing (dropped by an attribute limit?)")
            continue
        out.append((i, item))
    return out


def openllmetry(attrs: dict[str, Any], prefix: str, place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for i, item in indexed(unflatten(attrs, prefix), inside(place, prefix), ctx):
        at = inside(place, f"{prefix}.{i}")
        if not isinstance(item, dict):
            raise Malformed(at, "expected role and content keys")
        content = item.get("content")
        decoded = parse_json_text(content)  # multimodal content is recorded as a JSON list of parts
        if isinstance(decoded, list) and all(isinstance(p, dict) and "type" in p for p in decoded):
            content = decoded
        calls = [{"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
                 for _, c in indexed(item.get("tool_calls"), f"{at}.tool_calls", ctx) if isinstance(c, dict)]
        drafts += chat_message({"role": item.get("role"), "content": content, "tool_calls": calls,
                                "tool_call_id": item.get("tool_call_id")}, at, ctx)
    return drafts


def openinference(attrs: dict[str, Any], place: str, ctx: Context) -> list[Draft]:
    drafts: list[Draft] = []
    for i, item in indexed(unflatten(attrs, "llm.input_messages"), inside(place, "llm.input_messages"), ctx):
        at = inside(place, f"llm.input_messages.{i}")
        drafts += oi_message(item, at, ctx)
    return drafts


def oi_message(item: Any, at: str, ctx: Context) -> list[Draft]:
    message = item.get("message") if isinstance(item, dict) else None
    if not isinstance(message, dict):
        raise Malformed(at, "expected a message.role key")
    content: Any = message.get("content")
    if content is None and message.get("contents") is not None:
        content = []
        for j, c in indexed(message["contents"], f"{at}.message.contents", ctx):
            part = c.get("message_content") if isinstance(c, dict) else None
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image":
                image = part.get("image", {}).get("image", {}) if isinstance(part.get("image"), dict) else {}
                content.append({"type": "image_url", "image_url": {"url": image.get("url")}})
            else:
                content.append({"type": part.get("type") or "text", "text": part.get("text", "")})
    calls = []
    for j, c in indexed(message.get("tool_calls"), f"{at}.message.tool_calls", ctx):
        call = c.get("tool_call") if isinstance(c, dict) else None
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            calls.append({"id": call.get("id"), "function": {"name": fn.get("name"),
                                                               "arguments": fn.get("arguments")}})
    return chat_message({"role": message.get("role"), "content": content, "tool_calls": calls,
                         "tool_call_id": message.get("tool_call_id")}, at, ctx)


# ------------------------------------------------------------------------------------------
