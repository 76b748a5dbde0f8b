"""Replay under edited limits, the diff against the recording, and what-if sweeps (no Qt).

A recorded result carries the request it was assembled from (``request`` for seed-003 requests,
``plan_request`` for plans), so it can be assembled again under edits. A result recorded without
it (another tool's file, seed 004's example) opens read-only: ``ReplayUnavailable`` says why.
Counts are cached in the counter by content, so a replay after a limit edit does not tokenise
unchanged items again, and what the default assembly worked out for the request's content (neutralised
text, item counts, shape constants, evidence blocks: ``core.assembly_memo``) is kept on the counter and
reused while only budget fields change; the final request is still counted whole.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Literal, Sequence

from .assembly import assemble
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .contracts import Request, problems_from
from .counting import TokenCounter
from .errors import ContextBudgetError, ContextInspectorError, RequestError, RequiredContextTooLarge
from .result import AssemblyResult

BUDGET_FIELDS = ("input_tokens", "input_budget", "remaining_tokens", "context_limit", "max_new_tokens", "margin")


class ReplayUnavailable(ContextInspectorError):
    """The recording does not carry what is needed to assemble it again."""


@dataclass(frozen=True)
class Edits:
    """What a person changed. ``None`` keeps the recorded value."""

    context_limit: int | None = None
    max_new_tokens: int | None = None
    margin: int | None = None
    fill_order: tuple[str, ...] | None = None
    shares: dict[str, float | None] = field(default_factory=dict)  # plan section -> share
    pins: dict[str, bool] = field(default_factory=dict)  # plan message id (or section name) -> pinned

    def is_empty(self) -> bool:
        return (self.context_limit is None and self.max_new_tokens is None and self.margin is None
                and self.fill_order is None and not self.shares and not self.pins)


def source_of(recorded: AssemblyResult | Request | Any):
    """The request a result can be replayed from: a ``Request`` or a ``PlanRequest``."""
    from .plans import PlanRequest, parse_plan_request

    if isinstance(recorded, (Request, PlanRequest)):
        return recorded
    if isinstance(recorded, AssemblyResult):
        extra = recorded.model_extra or {}
        if extra.get("replay_exact") is False:  # a logging policy removed text the assembly used
            raise ReplayUnavailable(f"this result cannot be replayed: {extra.get('replay_note') or 'fields were redacted'}")
        if recorded.request is not None:
            return recorded.request
        plan_request = (recorded.model_extra or {}).get("plan_request")
        if plan_request is not None:
            return parse_plan_request(plan_request, source="plan_request")
        raise ReplayUnavailable("this result was recorded without its request, so it opens read-only "
                                "(record it with context-inspector's core to replay it)")
    raise TypeError(f"cannot replay a {type(recorded).__name__}")


def edited_request(source, edits: Edits):
    """The request with ``edits`` applied, validated again (an edit can make it invalid)."""
    from .plans import PlanRequest, parse_plan_request

    if isinstance(source, PlanRequest):
        if edits.margin is not None:
            raise RequestError([("edits.margin", "a plan has no margin: its budget_tokens and reserve_output_tokens "
                                                 "(--context-limit, --max-new-tokens) set the allowance")])
        data = source.model_dump(mode="json")
        plan = data["plan"]
        if edits.context_limit is not None:
            plan["budget_tokens"] = edits.context_limit
        if edits.max_new_tokens is not None:
            plan["reserve_output_tokens"] = edits.max_new_tokens
        if edits.fill_order is not None:
            plan["fill_order"] = list(edits.fill_order)
        for section in plan["sections"]:
            if section["name"] in edits.shares:
                section["share"] = edits.shares[section["name"]]
            if section["name"] in edits.pins:
                section["pinned"] = edits.pins[section["name"]]
        for messages in data["sections"].values():
            for message in messages:
                if message.get("id") in edits.pins:
                    message["pinned"] = edits.pins[message["id"]]
        return parse_plan_request(data, source="edits")
    if edits.shares or edits.pins:
        raise RequestError([("edits", "shares and pins apply to plan requests; this request has no plan")])
    budget = {key: getattr(edits, key) if getattr(edits, key) is not None else getattr(source, key)
              for key in ("context_limit", "max_new_tokens", "margin")}
    budget["fill_order"] = list(edits.fill_order) if edits.fill_order is not None else list(source.fill_order)
    try:  # only the budget fields changed: check them, and share everything else (validated) with the source
        checked = _BudgetFields.model_validate(budget)
        edited = source.model_copy(update=checked.model_dump())
        edited.check_budget()
    except ValidationError as exc:
        raise RequestError([(f"edits.{path}" if path else "edits", message)
                            for path, message in problems_from(exc)]) from None
    except ValueError as exc:
        raise RequestError([("edits", str(exc))]) from None
    return edited


class _BudgetFields(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    context_limit: int = Field(gt=0)
    max_new_tokens: int = Field(gt=0)
    margin: int = Field(ge=0)
    fill_order: list[Literal["history", "evidence"]]


def replay(recorded, *, edits: Edits | None = None, counter: TokenCounter) -> AssemblyResult:
    """Assemble the recorded request again under ``edits`` with ``counter``. Raises
    ``RequiredContextTooLarge`` / ``ContextBudgetError`` when the edit leaves no room."""
    from .plans import PlanRequest, RecordedSummariser, assemble_plan_request

    source = edited_request(source_of(recorded), edits or Edits())
    if isinstance(recorded, AssemblyResult) and recorded.strategy == "naive_truncate":
        from .baseline import naive_truncate

        return naive_truncate(source, counter)  # a baseline replays as the baseline
    if isinstance(source, PlanRequest):
        summariser = RecordedSummariser.from_result(recorded) if isinstance(recorded, AssemblyResult) else None
        if summariser is not None and not summariser.summaries:
            summariser = None
        return assemble_plan_request(source, counter, summariser=summariser)
    return assemble(source, counter)


# ---------------------------------------------------------------------------------------------
# Diff


@dataclass(frozen=True)
class ItemChange:
    section: str
    id: str
    decision_before: str | None
    decision_after: str | None
    tokens_before: int | None
    tokens_after: int | None

    @property
    def changed(self) -> bool:
        return self.decision_before != self.decision_after

    @property
    def kind(self) -> str:
        sent = {"kept", "required", "pinned"}
        before, after = self.decision_before, self.decision_after
        if before == after:
            return "same"
        if after in sent and before not in sent:
            return "newly kept"
        if before in sent and after not in sent:
            return "newly dropped" if after != "summarised" else "newly summarised"
        return "changed"

    @property
    def token_delta(self) -> int:
        return (self.tokens_after or 0) - (self.tokens_before or 0)


@dataclass(frozen=True)
class Diff:
    items: list[ItemChange]
    budget_before: dict[str, int]
    budget_after: dict[str, int]

    @property
    def changes(self) -> list[ItemChange]:
        return [c for c in self.items if c.changed]

    def to_json(self) -> dict[str, Any]:
        return {"budget_before": self.budget_before, "budget_after": self.budget_after,
                "items": [dict(asdict(c), change=c.kind) for c in self.items]}

    def to_text(self) -> str:
        lines = ["budget: " + ", ".join(
            f"{k} {self.budget_before[k]}" + (f" -> {self.budget_after[k]}" if self.budget_after[k] != self.budget_before[k]
                                              else "") for k in BUDGET_FIELDS)]
        changes = self.changes
        if not changes:
            lines.append("no item changes its decision")
        for c in changes:
            lines.append(f"{c.kind:16} {c.section}/{c.id}: {c.decision_before} -> {c.decision_after} "
                         f"({c.tokens_before} -> {c.tokens_after} tokens)")
        return "\n".join(lines)


def diff(before: AssemblyResult, after: AssemblyResult) -> Diff:
    """Per item: decision and tokens before and after; and the budget figures before and after."""
    old = {(e.section, e.id): e for e in before.trace}
    new = {(e.section, e.id): e for e in after.trace}
    keys = list(old) + [k for k in new if k not in old]
    items = []
    for key in keys:
        a, b = old.get(key), new.get(key)
        items.append(ItemChange(key[0], key[1], a.decision if a else None, b.decision if b else None,
                                a.tokens if a else None, b.tokens if b else None))
    return Diff(items, {k: getattr(before, k) for k in BUDGET_FIELDS}, {k: getattr(after, k) for k in BUDGET_FIELDS})


# ---------------------------------------------------------------------------------------------
# Sweeps


@dataclass(frozen=True)
class SweepPoint:
    value: Any
    input_tokens: int | None
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    section_tokens: dict[str, int]
    error: str | None = None  # e.g. "short by 42 tokens" when the required content does not fit

    @property
    def fits(self) -> bool:
        return self.error is None


def sweep(recorded, parameter: str, values: Iterable[Any], *, counter: TokenCounter) -> list[SweepPoint]:
    """Assemble once per value of ``parameter`` (context_limit, max_new_tokens, margin, fill_order)."""
    if parameter not in ("context_limit", "max_new_tokens", "margin", "fill_order"):
        raise ValueError(f"cannot sweep {parameter!r}")
    points = []
    for value in values:
        edits = Edits(**{parameter: tuple(value) if parameter == "fill_order" else value})
        try:
            result = replay(recorded, edits=edits, counter=counter)
        except RequiredContextTooLarge as exc:
            points.append(SweepPoint(value, None, (), (), {},
                                     f"short by {exc.required_input_tokens - exc.available_input_tokens} tokens"))
            continue
        except (ContextBudgetError, RequestError) as exc:
            points.append(SweepPoint(value, None, (), (), {}, str(exc)))
            continue
        kept = tuple(f"{e.section}/{e.id}" for e in result.trace if e.decision in ("kept", "pinned"))
        dropped = tuple(f"{e.section}/{e.id}" for e in result.trace if e.decision in ("dropped", "summarised"))
        points.append(SweepPoint(value, result.input_tokens, kept, dropped, result.sent_tokens_by_section()))
    return points


def limit_range(recorded, *, counter: TokenCounter, steps: int = 24) -> list[int]:
    """Context limits from the smallest that holds the required content to the one where
    everything fits (plus the recorded one), for a what-if sweep."""
    source = source_of(recorded)
    if not isinstance(source, Request):
        raise ReplayUnavailable("limit ranges are computed for seed-003 requests")
    reserve = source.max_new_tokens + source.margin
    roomy = assemble(edited_request(source, Edits(context_limit=10 ** 9)), counter)
    everything = sum(e.tokens for e in roomy.trace)  # every candidate admitted (roomy drops nothing)
    required = sum(e.tokens for e in roomy.trace if e.decision == "required")
    low, high = required + reserve, max(everything + reserve, required + reserve + 1)
    values = {low + round(i * (high - low) / max(steps - 1, 1)) for i in range(steps)}
    values.add(source.context_limit)
    return sorted(v for v in values if v > reserve)


# ---------------------------------------------------------------------------------------------
# Aggregate what-if over many requests


@dataclass
class WhatIf:
    requests: int = 0
    replayed: int = 0
    changed: int = 0
    dropped_pinned_or_rank1: int = 0
    failed_required: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    read_only: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_json(self) -> dict[str, Any]:
        return dict(asdict(self), tokens_saved=self.tokens_saved)

    def to_text(self) -> str:
        return "\n".join([
            f"requests: {self.requests} ({self.replayed} replayed, {self.read_only} read-only)",
            f"change their decisions: {self.changed}",
            f"drop a pinned or rank-1 item: {self.dropped_pinned_or_rank1}",
            f"fail the required check: {self.failed_required}",
            f"input tokens: {self.tokens_before} -> {self.tokens_after} (saved {self.tokens_saved})",
        ] + [f"error: {e}" for e in self.errors[:10]])


def what_if(recordings: Sequence[Any], edits: Edits, *, counter: TokenCounter, progress=None) -> WhatIf:
    """Aggregate figures for replaying many recordings under one set of edits."""
    summary = WhatIf(requests=len(recordings))
    for number, recorded in enumerate(recordings, start=1):
        if progress is not None:
            progress(number, len(recordings))
        try:
            before = recorded if isinstance(recorded, AssemblyResult) else replay(recorded, counter=counter)
            after = replay(recorded, edits=edits, counter=counter)
        except ReplayUnavailable:
            summary.read_only += 1
            continue
        except (RequiredContextTooLarge, ContextBudgetError):
            summary.failed_required += 1
            continue
        except ContextInspectorError as exc:  # e.g. a request the template refuses under the edit
            summary.errors.append(str(exc))
            continue
        summary.replayed += 1
        changes = diff(before, after).changes
        summary.changed += bool(changes)
        rank1 = {(e.section, e.id) for e in before.trace if e.rank == 1 or e.decision == "pinned"}
        if any((c.section, c.id) in rank1 and c.kind == "newly dropped" for c in changes):
            summary.dropped_pinned_or_rank1 += 1
        summary.tokens_before += before.input_tokens
        summary.tokens_after += after.input_tokens
    return summary
