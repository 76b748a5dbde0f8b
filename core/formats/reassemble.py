"""Re-assemble: an imported request as a core ``Request`` (seed 003's sections), so it can be
assembled under another budget. What the sections cannot hold is refused, never guessed at."""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage, Request, parse_request
from ..errors import RequestError
from .model import ImportedRequest


def to_core_request(imported: ImportedRequest, *, context_limit: int, max_new_tokens: int,
                    margin: int = 0) -> Request:
    """System messages at the start become the instructions (joined by a blank line), the messages
    before the last user message the history, the last user message the current question, and the
    assistant tool calls after it with their results the tool exchanges.

    Raises ``RequestError`` naming each message that cannot be represented: no
    user message, a system message after the conversation started, text or a prefill after the
    current question, arguments that are not a JSON object, a tool call without its result."""
    messages = imported.messages
    problems: list[tuple[str, str]] = []
    leading = 0
    while leading < len(messages) and messages[leading].role == "system":
        leading += 1
    # no system message: a core request without instructions (it has no system message either)
    instructions = "\n\n".join(m.content or "" for m in messages[:leading]).strip()
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    if not users:
        problems.append(("current", "the request has no user message to be the current question"))
    current = users[-1] if users else len(messages)
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if m.role == "system" and i >= leading:
            problems.append((where, "a system message after the conversation started: a core request has one "
                                    "instructions block at the start"))
        for call in m.tool_calls:
            if call.raw_arguments is not None:
                problems.append((where, f"tool call {call.id!r} has arguments that are not a JSON object "
                                        f"({call.raw_arguments[:40]!r}); re-assembly would send {{}} instead"))
    history = [_history(m, i) for i, m in enumerate(messages[leading:current], start=leading) if m.role != "system"]
    exchanges, tail_problems = _exchanges(messages, current)
    problems += tail_problems
    if problems:
        raise RequestError(problems, source=imported.label)
    data: dict[str, Any] = {
        "id": imported.label, "instructions": instructions,
        "tools": [t.model_dump() for t in imported.tools], "history": history,
        "current": messages[current].content or "", "tool_exchanges": exchanges,
        "context_limit": context_limit, "max_new_tokens": max_new_tokens, "margin": margin,
    }
    return parse_request(data, source=imported.label)


def _history(m: ChatMessage, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content, "id": f"message-{index}"}
    if m.tool_calls:
        out["tool_calls"] = [c.model_dump() for c in m.tool_calls]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    return out


def _exchanges(messages: list[ChatMessage], current: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Assistant tool calls after the current question, each with the tool results that follow it."""
    exchanges: list[dict[str, Any]] = []
    problems: list[tuple[str, str]] = []
    for i in range(current + 1, len(messages)):
        m = messages[i]
        where = f"messages[{i}]"
        if m.role == "assistant" and m.tool_calls:
            exchanges.append({"content": m.content, "calls": [c.model_dump() for c in m.tool_calls], "results": []})
        elif m.role == "tool" and exchanges:
            exchanges[-1]["results"].append({"tool_call_id": m.tool_call_id or "", "content": m.content or ""})
        elif m.role == "tool":
            problems.append((where, "a tool result after the current question answers no call made after it"))
        elif m.role == "assistant":
            problems.append((where, "an assistant message without tool calls after the current question (a prefill "
                                    "or the recorded answer) has no section in a core request"))
    for x, exchange in enumerate(exchanges):
        answered = {r["tool_call_id"] for r in exchange["results"]}
        for call in exchange["calls"]:
            if call["id"] not in answered:
                problems.append((f"tool_exchanges[{x}]", f"tool call {call['id']!r} has no result; a core request "
                                                         "never sends a call without its result"))
    return exchanges, problems
