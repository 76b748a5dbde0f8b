"""The assembly result: the request sent, its counts, and one trace entry per item.

It is also the recorded-trace format the inspector opens (seed 004's shape, plus the counter's
identity and the request it was assembled from). Foreign keys in a recorded file (receipts,
diagnostics) are kept, not dropped, so nothing a person recorded disappears on load.
"""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .contracts import ChatMessage, Request, ToolDefinition, problems_from
from .counting import CounterIdentity
from .errors import RequestError

RESULT_FORMAT = "context-inspector/result@1"

Decision = Literal["kept", "dropped", "required", "pinned", "summarised"]
DECISIONS: tuple[str, ...] = ("required", "pinned", "kept", "summarised", "dropped")
# Sections in prompt order, as the trace and the inspector name them.
SECTION_ORDER: tuple[str, ...] = ("template", "instructions", "tools", "history", "current",
                                  "tool_exchanges", "evidence")


class TraceEntry(BaseModel):
    """What happened to one item: kept, dropped, required...; its marginal tokens and why."""

    model_config = ConfigDict(extra="allow")

    section: str
    id: str
    decision: Decision
    tokens: int
    reason: str
    rank: int | None = None
    score: float | None = None
    source: str | None = None
    message_indices: list[int] = Field(default_factory=list)


class AssemblyResult(BaseModel):
    """One assembled request and the record of how it was built."""

    model_config = ConfigDict(extra="allow")

    format: str = RESULT_FORMAT
    strategy: str = "assemble"
    request_id: str | None = None
    messages: list[ChatMessage]
    tools: list[ToolDefinition] = Field(default_factory=list)
    input_tokens: int
    input_budget: int
    remaining_tokens: int
    context_limit: int
    max_new_tokens: int
    margin: int
    fill_order: list[str] = Field(default_factory=lambda: ["history", "evidence"])
    kept_evidence: list[str] = Field(default_factory=list)
    dropped_evidence: list[str] = Field(default_factory=list)
    kept_turns: int = 0
    dropped_turns: int = 0
    trace: list[TraceEntry] = Field(default_factory=list)
    counter: CounterIdentity | None = None
    request: Request | None = None
    counting_note: str | None = None  # set only when the fast count fell back to the reference

    # ---- derived figures the inspector and the audit share

    def section_tokens(self, decision: str | None = None) -> dict[str, int]:
        """Sum of trace tokens per section, optionally for one decision only."""
        totals: dict[str, int] = {}
        for entry in self.trace:
            if decision is None or entry.decision == decision:
                totals[entry.section] = totals.get(entry.section, 0) + entry.tokens
        return totals

    def sent_tokens_by_section(self) -> dict[str, int]:
        """Tokens of what was sent (everything but dropped items), per section."""
        totals: dict[str, int] = {}
        for entry in self.trace:
            if entry.decision != "dropped":
                totals[entry.section] = totals.get(entry.section, 0) + entry.tokens
        return totals

    def span_attributes(self) -> dict[str, int | str]:
        """Counts for a trace span: per section, entries and tokens kept, pinned, required, evicted
        and summarised; the budget figures; the counter's name. Never any message content or id."""
        attributes: dict[str, int | str] = {
            "context.strategy": self.strategy,
            "context.input_tokens": self.input_tokens,
            "context.input_budget": self.input_budget,
            "context.remaining_tokens": self.remaining_tokens,
            "context.context_limit": self.context_limit,
            "context.max_new_tokens": self.max_new_tokens,
            "context.margin": self.margin,
        }
        if self.counter is not None:
            attributes["context.counter"] = self.counter.name
        names = {"dropped": "evicted"}
        totals: dict[str, int] = {}
        for entry in self.trace:
            kind = names.get(entry.decision, entry.decision)
            for key, value in ((f"context.section.{entry.section}.{kind}_entries", 1),
                               (f"context.section.{entry.section}.{kind}_tokens", entry.tokens),
                               (f"context.{kind}_entries", 1), (f"context.{kind}_tokens", entry.tokens)):
                totals[key] = totals.get(key, 0) + value
        attributes.update(sorted(totals.items()))
        return attributes

    @property
    def over_budget(self) -> bool:
        return self.input_tokens > self.input_budget

    def to_json(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_result(data: Any, *, source: str | None = None) -> AssemblyResult:
    if not isinstance(data, dict):
        raise RequestError([("", f"a result must be a JSON object, not {type(data).__name__}")], source=source)
    try:
        return AssemblyResult.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


def looks_like_result(data: Any) -> bool:
    return isinstance(data, dict) and "trace" in data and "messages" in data


def looks_like_request(data: Any) -> bool:
    return isinstance(data, dict) and "current" in data and "instructions" in data
