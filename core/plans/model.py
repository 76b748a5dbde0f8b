"""A plan and its messages: named sections in prompt order with shares, pins and a compaction strategy each,
the budget and the output reserve (seed 002)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..contracts import ChatMessage, ToolCall, problems_from
from ..errors import RequestError

BUILTIN_STRATEGIES = ("drop-oldest", "pin-and-fold", "summarise-span", "newest-turns", "by-score")
SUMMARY_PREFIX = "Summary of earlier conversation: "


class Message(BaseModel):
    """A message of a plan section. ``pinned`` travels on the message, so it survives a copy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    id: str | None = None
    pinned: bool = False
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    score: float | None = Field(default=None, allow_inf_nan=False)  # for passages ranked by-score
    source: str | None = None

    def chat(self) -> ChatMessage:
        return ChatMessage(role=self.role, content=self.content, tool_calls=self.tool_calls,
                           tool_call_id=self.tool_call_id)


def pinned(message: Message) -> Message:
    """The same message, pinned: no strategy may evict it."""
    return message.model_copy(update={"pinned": True})


class SectionPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    share: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False, strict=True)
    pinned: bool = False
    compaction: str = "drop-oldest"
    # Passages: rendered as escaped <evidence> blocks into the first user message of section ``into``.
    into: str | None = None

    def __init__(self, name: str | None = None, /, **data: Any) -> None:  # SectionPlan("recent", share=0.6)
        if name is not None:
            data["name"] = name
        super().__init__(**data)


class ContextPlan(BaseModel):
    """Named sections in prompt order, the budget and the output reserve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sections: tuple[SectionPlan, ...] = Field(min_length=1)
    budget_tokens: int | None = Field(default=None, gt=0, strict=True)
    reserve_output_tokens: int = Field(default=0, ge=0, strict=True)
    fill_order: tuple[str, ...] = ()
    custom_strategies: tuple[str, ...] = ()  # names of strategies the caller will supply

    @model_validator(mode="after")
    def _coherent(self) -> "ContextPlan":
        names = [s.name for s in self.sections]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate:
            raise ValueError(f"section {duplicate!r} is declared twice")
        known = set(BUILTIN_STRATEGIES) | set(self.custom_strategies)
        for section in self.sections:
            if section.compaction not in known:
                raise ValueError(f"section {section.name!r} names an unknown compaction strategy "
                                 f"{section.compaction!r} (built in: {', '.join(BUILTIN_STRATEGIES)}; "
                                 "declare your own in custom_strategies)")
        total = sum(s.share or 0 for s in self.sections)
        if total > 1 + 1e-9:
            raise ValueError(f"section shares add up to {total:g}, more than the whole budget (1)")
        for section in self.sections:
            if section.into is not None and (section.into not in names or section.into == section.name):
                raise ValueError(f"section {section.name!r} is placed into {section.into!r}, which is not "
                                 "another section of the plan")
        unknown = [n for n in self.fill_order if n not in names]
        if unknown:
            raise ValueError(f"fill_order names {unknown[0]!r}, which the plan does not declare")
        if self.budget_tokens is not None and self.reserve_output_tokens >= self.budget_tokens:
            raise ValueError(f"reserve_output_tokens ({self.reserve_output_tokens}) leaves nothing of "
                             f"budget_tokens ({self.budget_tokens})")
        return self

    def section(self, name: str) -> SectionPlan:
        return next(s for s in self.sections if s.name == name)


def parse_plan(data: Any, *, source: str | None = None) -> ContextPlan:
    try:
        return ContextPlan.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None
