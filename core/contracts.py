"""The request contract (seed 003's six sections plus the budget) and the chat message shape.

Every model refuses unknown keys and wrong types; ``parse_request`` turns pydantic's errors into a
``RequestError`` whose problems name the field path (``evidence[2].score``) and what is wrong.
"""
from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, field_validator,
                      model_serializer, model_validator)

from .errors import RequestError

SECTIONS_OPTIONAL = ("history", "evidence")
_FILL_ORDERS = (list(SECTIONS_OPTIONAL), list(reversed(SECTIONS_OPTIONAL)))  # each section once, in either order


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ToolDefinition(_Strict):
    """A tool the model may call: name, description and JSON-schema parameters."""

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    access: list[str] | None = None  # labels that may see it (seed 001, 3.3); None: everyone

    @model_serializer(mode="wrap")
    def _omit_absent_access(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_none(handler(self), "access")

    @field_validator("parameters")
    @classmethod
    def _schema_is_object(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value and value.get("type", "object") != "object":
            raise ValueError("a tool's parameters must be a JSON schema of type 'object'")
        return value


class ToolCall(_Strict):
    """One call the assistant made: its id, the tool's name and the arguments object.

    ``raw_arguments`` keeps, for an imported request, arguments as recorded when they were not a
    JSON object (then ``arguments`` is ``{}``); it is left out of every dump when ``None``.
    """

    id: str = Field(min_length=1, max_length=128)
    name: str = Field(min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None

    @model_serializer(mode="wrap")
    def _omit_absent_raw_arguments(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if data.get("raw_arguments") is None:
            data.pop("raw_arguments", None)
        return data


class ChatMessage(_Strict):
    """A chat message as sent to the model (the shape of ``AssemblyResult.messages``)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.model_dump() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class HistoryMessage(_Strict):
    """A message of an earlier turn. ``id`` is optional and names the turn it opens in the trace."""

    role: Literal["user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    id: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> "HistoryMessage":
        if self.role == "user" and (self.content is None or self.tool_calls or self.tool_call_id):
            raise ValueError("a user message needs text content and carries no tool calls or tool_call_id")
        if self.role == "assistant":
            if self.tool_call_id is not None:
                raise ValueError("an assistant message carries no tool_call_id")
            if not self.content and not self.tool_calls:
                raise ValueError("an assistant message needs content (not empty), tool_calls or both")
        if self.role == "tool":
            if self.tool_call_id is None or self.content is None:
                raise ValueError("a tool message needs tool_call_id and content")
            if self.tool_calls:
                raise ValueError("a tool message carries no tool_calls")
        return self


class ToolResult(_Strict):
    tool_call_id: str = Field(min_length=1)
    content: str


class ToolExchange(_Strict):
    """One assistant step of the current turn: its tool calls and each call's result."""

    content: str | None = None
    calls: list[ToolCall] = Field(min_length=1)
    results: list[ToolResult] = Field(default_factory=list)

    @model_validator(mode="after")
    def _paired(self) -> "ToolExchange":
        call_ids = [c.id for c in self.calls]
        dup = _first_duplicate(call_ids)
        if dup is not None:
            raise ValueError(f"tool call id {dup!r} is used twice in one exchange")
        result_ids = [r.tool_call_id for r in self.results]
        missing = [i for i in call_ids if i not in result_ids]
        if missing:
            raise ValueError(f"tool call {missing[0]!r} has no result")
        orphans = [i for i in result_ids if i not in call_ids]
        if orphans:
            raise ValueError(f"tool result for {orphans[0]!r} has no matching call")
        if len(set(result_ids)) != len(result_ids):
            raise ValueError("a tool call has more than one result")
        return self


class Evidence(_Strict):
    """A retrieved passage: id, source label, text and retrieval score (higher is better)."""

    id: str = Field(min_length=1)
    source: str = ""
    text: str
    score: float = Field(allow_inf_nan=False)
    access: list[str] | None = None  # labels that may see it (seed 001, 3.3); None: everyone

    @model_serializer(mode="wrap")
    def _omit_absent_access(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_none(handler(self), "access")


class LoggingPolicy(_Strict):
    """What a recorded result may keep (seed 001, 3.5): the fields removed from the record, who may
    read it and how long it is kept. A removal that prevents an exact replay is said in the result."""

    redact: list[Literal["instructions", "history", "current", "tool_exchanges", "evidence"]] = Field(
        default_factory=list)
    readers: list[str] = Field(default_factory=list)
    retention_days: int | None = Field(default=None, gt=0)


class Request(_Strict):
    """Seed 003's request: six sections and the budget they must fit."""

    id: str | None = None
    instructions: str  # may be "": then the request has no system message
    tools: list[ToolDefinition] = Field(default_factory=list)
    history: list[HistoryMessage] = Field(default_factory=list)
    current: str = Field(min_length=1)
    tool_exchanges: list[ToolExchange] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    context_limit: int = Field(gt=0)
    max_new_tokens: int = Field(gt=0)
    margin: int = Field(default=0, ge=0)
    fill_order: list[Literal["history", "evidence"]] = Field(
        default_factory=lambda: ["history", "evidence"])
    # The request record (seed 001, 3.5) and the permission check (3.3): ``policy_version`` is the
    # version of the instructions this request requires, ``instructions_version`` the version the
    # instructions carry; ``grants`` are the caller's access labels. Left out of dumps when absent.
    policy_version: str | None = Field(default=None, min_length=1)
    instructions_version: str | None = Field(default=None, min_length=1)
    grants: list[str] | None = None
    logging: LoggingPolicy | None = None

    @model_serializer(mode="wrap")
    def _omit_absent_record_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_none(handler(self), "policy_version", "instructions_version", "grants", "logging")

    @property
    def input_budget(self) -> int:
        return self.context_limit - self.max_new_tokens - self.margin

    @model_validator(mode="after")
    def _coherent(self) -> "Request":
        if self.policy_version is not None and self.policy_version != self.instructions_version:
            carried = f"version {self.instructions_version!r}" if self.instructions_version else "no version"
            raise ValueError(f"policy_version {self.policy_version!r} is required but the instructions carry "
                             f"{carried}; the request is refused rather than sent with another policy")
        self.check_budget()
        names = [t.name for t in self.tools]
        dup = _first_duplicate(names)
        if dup is not None:
            raise ValueError(f"tool {dup!r} is defined twice")
        dup = _first_duplicate([e.id for e in self.evidence])
        if dup is not None:
            raise ValueError(f"evidence id {dup!r} appears twice")
        _check_history(self.history)
        # A call id is unique within one assistant message (a result could not say which call it answers); another
        # message may use it again (frameworks that number calls per turn write call_0 every time): each result
        # answers a call of the assistant message just before it (``_check_history``; an exchange pairs its own).
        for index, message in enumerate(self.history):
            if len(message.tool_calls) < 2:  # one call or none: no id used twice
                continue
            dup = _first_duplicate([c.id for c in message.tool_calls])
            if dup is not None:
                raise ValueError(f"tool call id {dup!r} is used twice in history[{index}]")
        return self

    def check_budget(self) -> None:
        """The rules of ``_coherent`` on the budget fields alone (a replay's edit changes only those)."""
        if list(self.fill_order) not in _FILL_ORDERS:  # sorted(fill_order) != sorted(SECTIONS_OPTIONAL)
            raise ValueError("fill_order must name 'history' and 'evidence' once each")
        if self.input_budget <= 0:
            raise ValueError(
                f"max_new_tokens ({self.max_new_tokens}) plus margin ({self.margin}) leave no input "
                f"room in context_limit ({self.context_limit})")

    def history_turns(self) -> list[list[HistoryMessage]]:
        """History split into whole turns: a user message and everything up to the next one.
        Computed once per request (it is frozen); callers must not change the lists."""
        return self._turns

    @cached_property
    def _turns(self) -> list[list[HistoryMessage]]:
        turns: list[list[HistoryMessage]] = []
        for message in self.history:
            if message.role == "user" or not turns:
                turns.append([message])
            else:
                turns[-1].append(message)
        return turns

    def turn_ids(self) -> list[str]:
        """Each turn's trace id: its first message's id, else ``turn-<n>``; one an earlier turn took already gets
        ``#2``, ``#3``... (a trace entry names one turn, and its messages are found by it). Callers must not change
        the list."""
        return self._turn_ids

    @cached_property
    def _turn_ids(self) -> list[str]:
        ids: list[str] = []
        seen: set[str] = set()
        for n, turn in enumerate(self.history_turns(), start=1):
            turn_id = base = turn[0].id or f"turn-{n}"
            k = 1
            while turn_id in seen:
                k += 1
                turn_id = f"{base}#{k}"
            seen.add(turn_id)
            ids.append(turn_id)
        return ids

    @cached_property
    def history_origins(self) -> list[tuple[str, str]]:
        """Each history turn's origin in a render, ``("history", its trace id)``: made once per request (an
        assembly renders its kept turns for every count). Callers must not change the list."""
        return [("history", turn_id) for turn_id in self.turn_ids()]


def _without_none(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        if data.get(key) is None:
            data.pop(key, None)
    return data


def _first_duplicate(values: list[str]) -> str | None:
    if len(set(values)) == len(values):  # the common case, in one C-level step
        return None
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def _check_history(history: list[HistoryMessage]) -> None:
    """Whole turns only: a turn opens with a user message; every call is followed by its result."""
    if history and history[0].role != "user":
        raise ValueError(f"history[0] is a {history[0].role} message; history must start with a user turn")
    pending: list[str] = []
    for index, message in enumerate(history):
        if message.role == "tool":
            if message.tool_call_id not in pending:
                raise ValueError(
                    f"history[{index}] is a result for tool call {message.tool_call_id!r} with no matching "
                    "call just before it")
            pending.remove(message.tool_call_id)
            continue
        if pending:
            raise ValueError(f"tool call {pending[0]!r} in history has no result before history[{index}]")
        if message.role == "assistant":
            pending = [c.id for c in message.tool_calls]
    if pending:
        raise ValueError(f"tool call {pending[0]!r} in history has no result")


def format_location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def problems_from(error: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for item in error.errors(include_url=False):
        loc = tuple(p for p in item["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = item["msg"]
        if item["type"] == "extra_forbidden":
            msg = "unknown key (not part of the contract)"
        elif item["type"] == "finite_number":
            msg = "must be a finite number (NaN and infinity are refused)"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        problems.append((format_location(loc), msg))
    return problems


def parse_request(data: Any, *, source: str | None = None) -> Request:
    """Validate a decoded JSON object as a ``Request``; raise ``RequestError`` naming each problem."""
    if not isinstance(data, dict):
        raise RequestError([("", f"a request must be a JSON object, not {type(data).__name__}")], source=source)
    try:
        _reject_nan(data, "")
    except RequestError as exc:
        raise exc.with_source(source) if source else exc
    try:
        return Request.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


def _reject_nan(value: Any, path: str) -> None:
    # JSON text may carry NaN/Infinity (Python's json accepts them); refuse them wherever they are.
    if isinstance(value, float) and not math.isfinite(value):
        raise RequestError([(path, "must be a finite number (NaN and infinity are refused)")])
    if isinstance(value, dict):
        for k, v in value.items():
            _reject_nan(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _reject_nan(v, f"{path}[{i}]")
