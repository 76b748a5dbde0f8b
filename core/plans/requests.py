"""Seed 003's request as a plan, and the plan request file (``{"kind": "plan", ...}``) that
`context-assembler assemble` and the inspector open."""
from __future__ import annotations

import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..contracts import ToolDefinition, problems_from
from ..counting import TokenCounter
from ..errors import RequestError
from ..result import AssemblyResult
from .assembler import ContextAssembler
from .model import ContextPlan, Message, SectionPlan
from .strategies import CompactionStrategy, SummariseSpan
from .summaries import RecordedSummariser, Summariser, SummaryStore

def plan_from_request(request) -> tuple[ContextPlan, dict[str, list[Message]], list[ToolDefinition]]:
    """The plan, sections and tools that assemble ``request`` (a seed-003 ``Request``) with the same
    decisions as ``assemble(request)``: required parts pinned, history by whole turns newest first,
    passages by score into the question's message, the two filling in ``fill_order``. Passages and
    tools the caller may not see (``core.permissions``) never become plan messages."""
    from ..permissions import permitted

    request = permitted(request)[0]
    sections: dict[str, list[Message]] = {
        "instructions": [Message(role="system", content=request.instructions, id="instructions")]
        if request.instructions else [],
        "history": [],
        "current": [Message(role="user", content=request.current, id="question")],
        "tool_exchanges": [],
        "evidence": [Message(role="user", content=p.text, id=p.id, source=p.source, score=p.score)
                     for p in request.evidence],
    }
    for turn_id, turn in zip(request.turn_ids(), request.history_turns()):
        for k, m in enumerate(turn):
            sections["history"].append(Message(role=m.role, content=m.content, tool_calls=m.tool_calls,
                                               tool_call_id=m.tool_call_id, id=turn_id if k == 0 else f"{turn_id}/{k}"))
    for x, exchange in enumerate(request.tool_exchanges):
        results = {r.tool_call_id: r for r in exchange.results}
        sections["tool_exchanges"].append(Message(role="assistant", content=exchange.content,
                                                  tool_calls=exchange.calls, id=f"exchange-{x}"))
        for call in exchange.calls:
            sections["tool_exchanges"].append(Message(role="tool", content=results[call.id].content,
                                                      tool_call_id=call.id, id=f"exchange-{x}/{call.id}"))
    plan = ContextPlan(
        sections=(SectionPlan("instructions", pinned=True), SectionPlan("history", compaction="newest-turns"),
                  SectionPlan("current", pinned=True), SectionPlan("tool_exchanges", pinned=True),
                  SectionPlan("evidence", compaction="by-score", into="current")),
        budget_tokens=request.context_limit - request.margin, reserve_output_tokens=request.max_new_tokens,
        fill_order=tuple(request.fill_order))
    return plan, sections, list(request.tools)


# ---------------------------------------------------------------------------------------------
# A plan request file: what `context-assembler assemble` and the inspector open


class RecordedSummary(BaseModel):
    model_config = ConfigDict(extra="allow")

    span_hash: str = Field(min_length=64, max_length=64)
    text: str


class PlanRequest(BaseModel):
    """``{"kind": "plan", "plan": {...}, "sections": {name: [message, ...]}, "tools": [...]}``.
    ``summaries`` (optional) are recorded summaries a summarise-span section replays by span hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["plan"] = "plan"
    id: str | None = None
    plan: ContextPlan
    sections: dict[str, list[Message]] = Field(default_factory=dict)
    tools: list[ToolDefinition] = Field(default_factory=list)
    summaries: list[RecordedSummary] = Field(default_factory=list)

    @model_validator(mode="after")
    def _declared(self) -> "PlanRequest":
        declared = [s.name for s in self.plan.sections]
        unknown = [name for name in self.sections if name not in declared]
        if unknown:
            raise ValueError(f"messages under {unknown[0]!r}, which the plan does not declare")
        return self


def looks_like_plan_request(data: Any) -> bool:
    return isinstance(data, dict) and (data.get("kind") == "plan" or ("plan" in data and "sections" in data))


def parse_plan_request(data: Any, *, source: str | None = None) -> PlanRequest:
    try:
        return PlanRequest.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


def assemble_plan_request(request: PlanRequest, counter: TokenCounter, *, summariser: Summariser | None = None,
                          store: SummaryStore | None = None, scope: str | None = None,
                          cancel: threading.Event | None = None, reference: bool = False,
                          stats: dict | None = None) -> AssemblyResult:
    """Assemble a plan request. A summarise-span section uses ``summariser`` if given, else the
    summaries recorded in the request (so a recorded run replays without a model), else it is refused.
    ``reference`` and ``stats`` are those of :meth:`ContextAssembler.assemble`."""
    strategies: dict[str, CompactionStrategy] = {}
    if any(s.compaction == "summarise-span" for s in request.plan.sections):
        if summariser is None and request.summaries:
            summariser = RecordedSummariser({s.span_hash: s.text for s in request.summaries})
        if summariser is None:
            raise ValueError("a section uses summarise-span: configure a summariser (an HTTP endpoint) or "
                             "record summaries in the request")
        strategies["summarise-span"] = SummariseSpan(summariser)
    assembler = ContextAssembler(request.plan, counter, strategies=strategies, store=store, scope=scope)
    result = assembler.assemble(request.sections, tools=request.tools, cancel=cancel, reference=reference, stats=stats)
    result.request_id = request.id
    recorded = list((result.model_extra or {}).get("summaries") or [])
    known = {s["span_hash"] for s in recorded}
    replay = [s.model_dump(mode="json") for s in request.summaries if s.span_hash not in known]
    carried = request.model_copy(update={"summaries": [RecordedSummary.model_validate(s) for s in recorded + replay]})
    result.plan_request = carried.model_dump(mode="json", exclude_none=True)  # type: ignore[attr-defined]
    return result
