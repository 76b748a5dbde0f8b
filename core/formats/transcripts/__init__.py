"""Agent session transcripts: Claude Code (``~/.claude/projects/*/*.jsonl``) and OpenAI Codex CLI
rollouts (``~/.codex/sessions/**/rollout-*.jsonl``).

A transcript holds the conversation, not each request byte for byte: every assistant turn becomes
one model call whose input is everything before it in its chain, marked ``recorded.reconstructed``
and said in a note. Per call, what the file records is kept on ``Recorded``: model, start time,
the line's id and its parent's, the session, usage with cached tokens.
"""
from __future__ import annotations

from typing import Any

CLAUDE_CODE = "claude-code-transcript"
CODEX = "codex-rollout"
CODEX_LINES = {"session_meta", "response_item", "turn_context", "event_msg", "compacted"}


def is_claude_code(values: list[Any]) -> bool:
    """Lines with ``type`` user/assistant and a ``message`` object, beside Claude Code's ids."""
    return any(isinstance(v, dict) and v.get("type") in ("user", "assistant") and isinstance(v.get("message"), dict)
               and ("uuid" in v or "sessionId" in v or "parentUuid" in v) for v in values)


def is_codex(values: list[Any]) -> bool:
    """Lines ``{timestamp, type, payload}`` with Codex's line types (or the older rollouts: a session line
    with an id and instructions, then bare Responses items)."""
    if any(isinstance(v, dict) and isinstance(v.get("type"), str) and v["type"] in CODEX_LINES
           and isinstance(v.get("payload"), dict) for v in values):
        return True
    if not values or not all(isinstance(v, dict) for v in values):
        return False
    first = values[0]
    from ..providers.responses import ITEM_TYPES
    return ("id" in first and "timestamp" in first and "instructions" in first and len(values) > 1
            and all(str(v.get("type")) in ITEM_TYPES or "record_type" in v for v in values[1:]))


def lines_of(parsed: Any) -> list[tuple[int | None, Any]]:
    """The records of a transcript: JSON Lines, or a one-line file read as one JSON value."""
    if parsed.kind == "jsonl":
        return list(parsed.records)
    return [(1, parsed.single)]


def message_of(draft: Any) -> Any:
    from ...contracts import ChatMessage
    return ChatMessage(role=draft.role, content=draft.content, tool_calls=draft.tool_calls,
                       tool_call_id=draft.tool_call_id)


def kind_of(message: Any) -> str:
    """One letter for what decides a message's section: s(ystem), u(ser), x (exchange: a tool result or
    an assistant message with tool calls), a(ssistant text)."""
    role = message.role
    if role in ("system", "user"):
        return role[0]
    return "x" if role == "tool" or message.tool_calls else "a"


def sections_of(messages: list[Any], kinds: str | None = None) -> list[str]:
    """``infer_sections`` (same result) from a string of ``kind_of`` letters (kept by the caller as the
    conversation grows): transcript calls hold thousands of messages, most after the last user message."""
    if kinds is None:
        kinds = "".join(kind_of(m) for m in messages)
    current = kinds.rfind("u")
    head = {"s": "instructions", "u": "history", "x": "history", "a": "history"}
    sections = [head[k] for k in kinds[:current]] if current > 0 else []
    if current >= 0:
        sections.append("current")
    tail: list[str] = []
    later_exchange = False
    for k in reversed(kinds[current + 1:]):
        if k == "s":
            tail.append("instructions")
        elif k == "x":
            tail.append("tool_exchanges")
            later_exchange = True
        else:  # a user message cannot be here; an assistant text continues an exchange or is a prefill
            tail.append("tool_exchanges" if later_exchange else "prefill")
    sections += reversed(tail)
    return sections


class Shared:
    """Messages built once per draft and shared by every call whose input holds them: a transcript of
    n turns has about n*n/2 input messages in all, so each call's list holds references, not copies."""

    def __init__(self) -> None:
        self._built: dict[int, tuple[Any, Any]] = {}

    def message(self, draft: Any) -> Any:
        found = self._built.get(id(draft))
        if found is None or found[0] is not draft:
            found = self._built[id(draft)] = (draft, message_of(draft))
        return found[1]

    def request(self, label: str, drafts: list[Any], recorded: Any, warnings: list[Any],
                placeholders: dict[str, int], output: list[Any], messages: list[Any] | None = None,
                places: list[str] | None = None, kinds: str | None = None, tools: list[Any] | None = None) -> Any:
        """An imported request from shared drafts (and their messages, when already built)."""
        from ..normalise import Context, finish
        ctx = Context()
        ctx.warnings = list(warnings)
        ctx.placeholders = dict(placeholders)
        imported = finish(label, [], list(tools or []), recorded, ctx, output=output)  # the notes, placeholder tally included
        imported.messages = messages if messages is not None else [self.message(d) for d in drafts]
        imported.sections = sections_of(imported.messages, kinds)
        imported.places = places if places is not None else [d.place for d in drafts]
        return imported
