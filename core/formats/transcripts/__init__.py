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
