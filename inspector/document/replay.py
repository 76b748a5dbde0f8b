"""Replay of one row under edits, Qt-free: what the panel starts from, and what one replay gives.

Every figure comes from ``core.replay``: ``replay`` assembles the recorded request again under
``Edits``, ``diff`` compares it with the recording, ``limit_range`` and ``sweep`` give the what-if
points. This module only decides what a row is replayed from (its recorded result, or the request a
rejected row kept), keeps a RAG request's window receipts on every replay, and turns the core's
refusals into one line a person reads.
"""
from __future__ import annotations

import logging
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable

import core
from core.replay import Diff, Edits, ReplayUnavailable, SweepPoint, diff, edited_request, limit_range, replay, \
    source_of, sweep

from .row import Row

log = logging.getLogger("inspector")

SWEEP_STEPS = 24


@dataclass(frozen=True)
class MessagePin:
    section: str
    id: str
    pinned: bool


@dataclass(frozen=True)
class ReplayBase:
    """The recorded values the controls start from (and ``Reset`` returns to)."""

    kind: str  # "request" or "plan"
    context_limit: int
    max_new_tokens: int
    margin: int | None  # None: a plan has no margin
    fill_order: tuple[str, ...]  # the order the fill list shows
    shares: dict[str, float | None] = field(default_factory=dict)  # plan sections
    section_pins: dict[str, bool] = field(default_factory=dict)
    message_pins: tuple[MessagePin, ...] = ()

    @property
    def is_plan(self) -> bool:
        return self.kind == "plan"


@dataclass
class ReplayOutcome:
    """One replay: the result, its diff against the recording and its audit; or why there is none."""

    generation: int
    edits: Edits
    result: core.AssemblyResult | None = None
    diff: Diff | None = None
    findings: list[core.Finding] = field(default_factory=list)
    error: str | None = None
    short_by: int | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None


def refusal_text(exc: BaseException) -> tuple[str, int | None]:
    """The core's refusal of an edit as one line, and how many tokens short it is when it says."""
    if isinstance(exc, core.RequiredContextTooLarge):
        need, have = exc.required_input_tokens, exc.available_input_tokens
        return (f"Required content needs {need} tokens, only {have} available: short by {need - have} "
                f"(context limit {exc.context_limit} − output reserve {exc.max_new_tokens} − margin {exc.margin})",
                need - have)
    if isinstance(exc, core.ContextBudgetError):
        return f"The plan cannot fit under this edit: {exc}", None
    if isinstance(exc, core.RequestError):
        return f"This edit is not a valid request: {exc}", None
    if isinstance(exc, core.ContextInspectorError):
        return str(exc), None
    return f"The replay failed: {type(exc).__name__}: {exc}", None


class ReplayTarget:
    """One row's recording and how to assemble it again. ``ReplayUnavailable`` when it cannot be."""

    def __init__(self, row: Row) -> None:
        self.row = row
        self.recorded: core.AssemblyResult | None = row.result
        if row.kind == "pending":
            raise ReplayUnavailable("this entry has not been read yet")
        if row.kind == "invalid":
            raise ReplayUnavailable("the entry could not be read, so there is nothing to replay")
        if row.result is not None:
            self.source = source_of(row.result)
        elif row.plan_request is not None:
            self.source = row.plan_request
        elif row.rag is not None:
            self.source = row.rag.request
        elif row.request is not None:
            self.source = row.request
        else:
            raise ReplayUnavailable("a recorded rejection carries no request, so it opens read-only")
        self.receipts, self.rag_extras = self._rag_parts(row)

    @staticmethod
    def _rag_parts(row: Row) -> tuple[list[Any] | None, dict[str, Any]]:
        """Window receipts to attach to every replay (core's ``replay`` assembles the plain request)."""
        if row.rag is not None:
            return list(row.rag.receipts), dict(row.rag.extras)
        extra = (row.result.model_extra or {}) if row.result is not None else {}
        if row.result is not None and row.result.strategy != "naive_truncate" and extra.get("window_receipts"):
            extras = {k: extra[k] for k in ("index_id", "ranked_seed_ids") if k in extra}
            return list(extra["window_receipts"]), extras
        return None, {}

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.row.source, self.row.index, self.row.strategy)

    @property
    def is_plan(self) -> bool:
        return isinstance(self.source, core.PlanRequest)

    def base(self) -> ReplayBase:
        source = self.source
        if isinstance(source, core.PlanRequest):
            plan = source.plan
            limit = plan.budget_tokens
            if limit is None:
                limit = self.recorded.context_limit if self.recorded is not None else plan.reserve_output_tokens + 1
            names = [s.name for s in plan.sections]
            order = tuple(plan.fill_order) + tuple(n for n in names if n not in plan.fill_order)
            pins = tuple(MessagePin(name, m.id, m.pinned) for name, messages in source.sections.items()
                         for m in messages if m.id)
            return ReplayBase("plan", limit, plan.reserve_output_tokens, None, order,
                              {s.name: s.share for s in plan.sections}, {s.name: s.pinned for s in plan.sections},
                              pins)
        return ReplayBase("request", source.context_limit, source.max_new_tokens, source.margin,
                          tuple(source.fill_order))

    def counter_differs(self, counter: core.TokenCounter) -> bool:
        """The recording was counted by another tokenizer than ``counter`` (then a replay is shown even
        without edits: the counter is one of the things a person can change)."""
        identity = self.recorded.counter if self.recorded is not None else None
        if identity is None:
            return False
        current = counter.identity
        return (identity.name, identity.template_sha256) != (current.name, current.template_sha256)

    # ---- assembling again

    def replay(self, edits: Edits, counter: core.TokenCounter) -> core.AssemblyResult:
        if self.receipts is not None:  # a RAG request: the same windows, so the same receipts
            edited = edited_request(self.source, edits)
            return core.assemble_rag(core.LoadedRag(edited, self.receipts, self.rag_extras), counter)
        if self.recorded is not None:
            return replay(self.recorded, edits=edits, counter=counter)
        return replay(self.source, edits=edits, counter=counter)

    def outcome(self, generation: int, edits: Edits, counter: core.TokenCounter,
                lock: threading.RLock | None = None) -> ReplayOutcome:
        out = ReplayOutcome(generation, edits)
        try:
            with lock or nullcontext():
                result = self.replay(edits, counter)
                try:
                    out.findings = core.audit(result, counter)
                except core.ContextInspectorError:
                    out.findings = core.audit(result, None)
        except (core.ContextInspectorError, ValueError) as exc:
            out.error, out.short_by = refusal_text(exc)
            return out
        except Exception as exc:  # never a traceback to the person: one line, the details to the log
            log.exception("replaying %s", self.row.where)
            out.error, _ = refusal_text(exc)
            return out
        out.result = result
        if self.recorded is not None:
            out.diff = diff(self.recorded, result)
        return out

    # ---- what-if

    def sweep_subject(self, edits: Edits) -> Any:
        """What a limit sweep replays: the recording with the non-limit edits applied."""
        others = Edits(max_new_tokens=edits.max_new_tokens, margin=edits.margin, fill_order=edits.fill_order,
                       shares=dict(edits.shares), pins=dict(edits.pins))
        if others.is_empty() and self.recorded is not None:
            return self.recorded
        edited = edited_request(self.source, others)
        if self.recorded is not None and self.recorded.strategy == "naive_truncate":
            return self.recorded.model_copy(update={"request": edited})  # a baseline sweeps as the baseline
        return edited

    def sweep_values(self, subject: Any, counter: core.TokenCounter) -> list[int]:
        """The core's limit range; a plan has none there, so its limits are spread around the recorded one."""
        try:
            return limit_range(subject, counter=counter, steps=SWEEP_STEPS)
        except ReplayUnavailable:
            base = self.base()
            low = base.max_new_tokens + 1
            high = max(2 * base.context_limit, low + SWEEP_STEPS)
            values = {low + round(i * (high - low) / (SWEEP_STEPS - 1)) for i in range(SWEEP_STEPS)}
            values.add(base.context_limit)
            return sorted(values)

    def what_if(self, edits: Edits, counter: core.TokenCounter, lock: threading.RLock | None = None,
                stale: Callable[[], bool] = lambda: False) -> list[SweepPoint] | None:
        """Tokens sent per section across context limits (the other edits kept); None when ``stale()``
        says a newer request superseded this one. The lock is taken per point, so the GUI thread never
        waits for a whole sweep."""
        with lock or nullcontext():
            subject = self.sweep_subject(edits)
            values = self.sweep_values(subject, counter)
        points: list[SweepPoint] = []
        for value in values:
            if stale():
                return None
            with lock or nullcontext():
                points.extend(sweep(subject, "context_limit", [value], counter=counter))
        return points
