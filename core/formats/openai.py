"""OpenAI Chat Completions: request bodies (also inside a batch line or a request/response pair),
the response's usage and finish reason, and a streamed response as server-sent events."""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage
from .model import ImportedRequest, Recorded
from .normalise import (Context, Draft, Malformed, as_int, body_messages, drafts_from, finish, join_place,
                        output_messages, read_parts, role_of, tool_call, tool_definitions, updated)

FORMAT = "openai-chat"
# Request parameters that shape sampling, not the context: read silently.
KNOWN_KEYS = {"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p", "n",
              "stream", "stream_options", "stop", "max_tokens", "max_completion_tokens", "presence_penalty",
              "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "seed", "response_format",
              "functions", "function_call", "store", "metadata", "modalities", "audio", "prediction",
              "reasoning_effort", "service_tier", "web_search_options", "verbosity", "prompt_cache_key",
              "safety_identifier"}


def is_response(data: Any) -> bool:
    return isinstance(data, dict) and (data.get("object") in ("chat.completion", "chat.completion.chunk")
                                       or (isinstance(data.get("choices"), list) and "messages" not in data))


def import_body(body: Any, place: str, label: str, *, file_format: str = FORMAT, response: Any = None,
                stream: list[dict[str, Any]] | None = None) -> ImportedRequest:
    """One request body (with its response, or the events of a streamed response, when recorded)."""
    messages = body_messages(body, place, "chat request")
    ctx = Context()
    drafts: list[Draft] = []
    pending_function: dict[str, str] = {}  # legacy function_call name -> generated call id
    for i, message in enumerate(messages):
        drafts += _message(message, join_place(place, f"messages[{i}]"), ctx, pending_function)
    tools = tool_definitions(body.get("tools"), join_place(place, "tools"), ctx)
    if body.get("functions") is not None:  # legacy name for tool definitions
        tools += tool_definitions(body["functions"], join_place(place, "functions"), ctx)
    ignored = sorted(k for k in body if k not in KNOWN_KEYS)
    if ignored:
        ctx.warn(place, "keys that are not part of a chat request were ignored: " + ", ".join(ignored))
    max_out = as_int(body.get("max_completion_tokens", body.get("max_tokens")))
    recorded = Recorded(format=file_format if file_format == FORMAT else f"{file_format}/{FORMAT}",
                        model=body.get("model") if isinstance(body.get("model"), str) else None, provider="openai",
                        source_place=place, max_output_tokens=max_out, name=label)
    output: list[ChatMessage] = []
    if response is not None:
        recorded, output = _with_response(recorded, response, join_place(place, "response"), ctx)
    elif stream is not None:
        recorded, output = _with_stream(recorded, stream, ctx)
    return finish(label, drafts, tools, recorded, ctx, output=output)


def _message(message: Any, where: str, ctx: Context, pending_function: dict[str, str]) -> list[Draft]:
    if not isinstance(message, dict):
        raise Malformed(where, f"a message must be an object, found {type(message).__name__}")
    raw_role = message.get("role")
    role = role_of(raw_role, f"{where}.role")
    parts = read_parts(message.get("content"), f"{where}.content", ctx)
    tool_call_id = message.get("tool_call_id")
    if raw_role == "function":  # legacy: the result of an assistant function_call, paired by name
        name = message.get("name")
        tool_call_id = pending_function.pop(name, None) if isinstance(name, str) else None
        ctx.warn(where, "legacy 'function' message read as a tool result" +
                 ("" if tool_call_id else " (no earlier function_call with its name)"))
    elif isinstance(message.get("name"), str) and role != "tool":
        ctx.warn(f"{where}.name", "the participant name is not kept")
    if role == "assistant":
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise Malformed(f"{where}.tool_calls", f"expected a list, found {type(calls).__name__}")
        for j, call in enumerate(calls or []):
            parts.calls.append(_tool_call(call, f"{where}.tool_calls[{j}]", ctx))
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            call = tool_call(ctx.new_id("function_call"), legacy.get("name"), legacy.get("arguments"),
                             f"{where}.function_call", ctx)
            pending_function[call.name] = call.id
            ctx.warn(f"{where}.function_call", f"legacy function_call read as tool call {call.id!r}")
            parts.calls.append(call)
    if isinstance(message.get("audio"), dict):
        ctx.warn(f"{where}.audio", "a reference to earlier audio output is not kept")
    return drafts_from(role, parts, where, ctx,
                       tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None)


def _tool_call(call: Any, where: str, ctx: Context):
    if not isinstance(call, dict):
        raise Malformed(where, f"a tool call must be an object, found {type(call).__name__}")
    if isinstance(call.get("function"), dict):
        fn = call["function"]
        return tool_call(call.get("id"), fn.get("name"), fn.get("arguments"), where, ctx)
    if isinstance(call.get("custom"), dict):
        custom = call["custom"]
        ctx.warn(where, "custom tool call: its free-text input is kept as arguments.input")
        return tool_call(call.get("id"), custom.get("name"), {"input": custom.get("input", "")}, where, ctx)
    raise Malformed(where, "a tool call needs a 'function' (or 'custom') object")


# ------------------------------------------------------------------------------------------
# responses


def usage_fields(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    return as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))


def _with_response(recorded: Recorded, response: Any, place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object; its usage is not read")
        return recorded, []
    if isinstance(response.get("error"), dict):
        ctx.warn(place, f"the provider answered with an error: {response['error'].get('message', '')}")
        return recorded, []
    input_tokens, output_tokens = usage_fields(response.get("usage"))
    choices = response.get("choices") if isinstance(response.get("choices"), list) else []
    first = choices[0] if choices and isinstance(choices[0], dict) else {}
    output: list[ChatMessage] = []
    if isinstance(first.get("message"), dict):
        output = output_messages(_message(first["message"], f"{place}.choices[0].message", ctx, {}))
    return updated(recorded, input_tokens=input_tokens, output_tokens=output_tokens,
                    finish_reason=first.get("finish_reason"),
                    model=recorded.model or response.get("model")), output


def _with_stream(recorded: Recorded, events: list[dict[str, Any]], ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    """Chunks of a streamed completion: text deltas, tool-call deltas by index, the finish reason,
    and usage on the last chunk (sent only with ``stream_options.include_usage``)."""
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    finish_reason = None
    input_tokens = output_tokens = None
    for event in events:
        if not isinstance(event, dict):
            continue
        if event.get("usage"):
            input_tokens, output_tokens = usage_fields(event["usage"])
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            finish_reason = choice.get("finish_reason") or finish_reason
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for piece in delta.get("tool_calls") or []:
                slot = calls.setdefault(as_int(piece.get("index")) or 0, {"id": "", "name": "", "arguments": ""})
                fn = piece.get("function") or {}
                slot["id"] = piece.get("id") or slot["id"]
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
    output_calls = [tool_call(c["id"], c["name"], c["arguments"], f"stream tool call {i}", ctx)
                    for i, c in sorted(calls.items())]
    output = [ChatMessage(role="assistant", content="".join(text) if text else None, tool_calls=output_calls)]
    if input_tokens is None:
        ctx.warn(recorded.source_place, "the streamed response carries no usage (stream_options.include_usage "
                                        "was off); no provider token figures")
    return updated(recorded, input_tokens=input_tokens, output_tokens=output_tokens,
                    finish_reason=finish_reason), output
