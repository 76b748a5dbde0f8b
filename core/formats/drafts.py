"""The working pieces every importer shares: a message being built (``Draft``), content parts read
so far (``Parts``), what an importer found (``Outcome``), per-request state (``Context``), the
``Malformed`` error with its place, and the small value readers (integers, JSON text, places).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from ..contracts import ToolCall
from .model import FailedCall, ImportedRequest, ImportNote, SpanNode

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
ROLES = {"system": "system", "developer": "system", "user": "user", "human": "user", "assistant": "assistant",
         "model": "assistant", "ai": "assistant", "tool": "tool", "function": "tool", "ipython": "tool"}


class Malformed(Exception):
    """A structural problem at ``place`` that no request can be built around."""

    def __init__(self, place: str, problem: str):
        self.place = place
        self.problem = problem
        super().__init__(f"{place}: {problem}" if place else problem)


@dataclass
class Draft:
    """One message being built, with where it came from."""

    role: str
    content: str | None
    place: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass
class Parts:
    """Content parts read into text pieces, tool calls and tool results (call id, text, place)."""

    texts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: list[tuple[str | None, str, str]] = field(default_factory=list)

    def text(self) -> str | None:
        return "\n".join(self.texts) if self.texts else None


@dataclass
class Outcome:
    """What an importer found: requests, warnings, and the model calls it had to skip as unreadable
    (kept apart so a file where every call is unreadable can be refused with the first problem)."""

    requests: list[ImportedRequest] = field(default_factory=list)
    warnings: list[ImportNote] = field(default_factory=list)
    failures: list[FailedCall] = field(default_factory=list)
    spans: list[SpanNode] = field(default_factory=list)  # the trace's span tree, where the file has one

    def add(self, other: "Outcome") -> None:
        offset = len(self.requests) + len(self.failures)
        self.failures += [replace(f, position=f.position + offset) for f in other.failures]
        self.requests += other.requests
        self.warnings += other.warnings
        self.spans += other.spans

    def fail(self, exc: Malformed, what: str, label: str | None = None) -> None:
        """Record a model call that could not be read (it stays a row of its own, with its reason)."""
        position = len(self.requests) + len(self.failures)
        self.failures.append(FailedCall(label or f"{what} {position + 1}", exc.place, exc.problem, position))
        self.warnings.append(ImportNote(exc.place, f"{exc.problem}; this {what} could not be read"))


class Context:
    """Per-request state: warnings in order, placeholder tally, generated ids."""

    def __init__(self) -> None:
        self.warnings: list[ImportNote] = []
        self.placeholders: dict[str, int] = {}
        self._generated = 0

    def warn(self, place: str, message: str) -> None:
        self.warnings.append(ImportNote(place, message))

    def new_id(self, prefix: str) -> str:
        self._generated += 1
        return f"{prefix}-{self._generated}"

    def placeholder(self, kind: str, detail: str) -> str:
        self.placeholders[kind] = self.placeholders.get(kind, 0) + 1
        return f"[{kind}: {detail}]" if detail else f"[{kind}]"


# ------------------------------------------------------------------------------------------
# small value readers


def join_place(place: str, key: str) -> str:
    return f"{place}.{key}" if place else key


def body_messages(body: Any, place: str, what: str) -> list[Any]:
    """The ``messages`` list of a provider request body, or ``Malformed`` naming the place."""
    if not isinstance(body, dict):
        raise Malformed(place, f"a request body must be a JSON object, found {type(body).__name__}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise Malformed(join_place(place, "messages"), "expected a list of messages" if messages is not None
                        else f"a {what} body needs 'messages'")
    return messages


def as_int(value: Any) -> int | None:
    """An integer from an int, a decimal string or a whole float (OTLP writes 64-bit ints as strings)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def parse_json_text(value: Any) -> Any:
    """``value`` decoded when it is a string holding JSON, else ``value`` itself."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null"):
            try:
                return json.loads(stripped)
            except (json.JSONDecodeError, RecursionError):
                return value
    return value


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
