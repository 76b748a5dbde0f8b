"""The per-request function of a sweep: one request, every setting, a row of figures.

Both engines call ``measure`` and nothing else per request, so they agree by construction.
What the recording kept: a recorded result's sent items; for a request file, its assembly as it
stands; for a model call imported from a trace, every message (the provider was sent all of them).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

from ..audit import audit
from ..contracts import Request
from ..counting import TokenCounter
from ..errors import ContextBudgetError, ContextInspectorError, RequiredContextTooLarge
from ..result import NOT_SENT, AssemblyResult
from .corpus import Record
from .settings import Setting

ROOMY = 10 ** 9
LIMIT_STEP = 1024  # an imported call's own limit: its size rounded up (as ``count`` assumes)
Counters = Callable[[str | None], TokenCounter]  # model name -> the counter for it


class Unreplayable(Exception):
    """A request that is counted but cannot be assembled again (the row says why, per setting)."""


def _source(record: Record, counter: TokenCounter) -> tuple[Any, AssemblyResult | None, str, str | None, str | None]:
    """(what to replay, the recording to compare with, label, model, how it was adapted to be counted)."""
    from ..loading import entry_from
    from ..replay import replay

    if record.imported:
        try:
            return _imported(record.value, counter)
        except ContextInspectorError as exc:
            raise Unreplayable(str(exc).splitlines()[0][:300]) from None
    entry = entry_from(record.value, 0, None, record.ref)  # RequestError: a bad record, reported by the caller
    model = record.value.get("model") if isinstance(record.value.get("model"), str) else None
    if entry.kind == "rejected":
        raise Unreplayable("a recorded rejection, without the request it rejected")
    if entry.kind == "result":
        recorded = entry.result
        if recorded.request is None and not (recorded.model_extra or {}).get("plan_request"):
            raise Unreplayable("a result recorded without its request (read-only)")
        return recorded, recorded, entry.label, model, None
    source = entry.extra["plan_request"] if entry.kind == "plan" else entry.request
    try:
        before = replay(source, counter=counter)
    except (RequiredContextTooLarge, ContextBudgetError):
        before = None  # as it stands it does not fit: nothing was kept, so nothing can be lost
    except ContextInspectorError as exc:
        raise Unreplayable(str(exc).splitlines()[0][:300]) from None
    return source, before, entry.label, model, None


def _imported(imported, counter: TokenCounter):
    from ..assembly import assemble
    from ..errors import RequestError, TemplateRefused
    from ..formats import to_core_request

    max_new = imported.recorded.max_output_tokens or 1
    try:
        roomy = to_core_request(imported, context_limit=ROOMY, max_new_tokens=max_new)
    except RequestError as exc:
        raise Unreplayable(f"cannot be re-assembled: {exc}") from None
    adapted = None
    try:
        everything = assemble(roomy, counter)  # what the provider was sent: every message
    except TemplateRefused:
        # as ``count`` does: the text of an assistant message that also carries tool calls is left out
        # (mistral-common refuses both in one message), and the row says so
        roomy, adapted = _without_tool_call_text(imported, max_new)
        if roomy is None:
            raise
        everything = assemble(roomy, counter)
    limit = max(LIMIT_STEP, math.ceil((everything.input_tokens + max_new) / LIMIT_STEP) * LIMIT_STEP)
    recorded = roomy.model_copy(update={"context_limit": limit})
    return recorded, everything, imported.label, imported.recorded.model, adapted


def _without_tool_call_text(imported, max_new: int):
    from dataclasses import replace

    from ..contracts import ChatMessage
    from ..formats import to_core_request

    both = [i for i, m in enumerate(imported.messages) if m.role == "assistant" and m.content and m.tool_calls]
    if not both:
        return None, None
    messages = [ChatMessage(role="assistant", tool_calls=m.tool_calls) if i in both else m
                for i, m in enumerate(imported.messages)]
    request = to_core_request(replace(imported, messages=messages), context_limit=ROOMY, max_new_tokens=max_new)
    return request, (f"the text of {len(both)} assistant message(s) that also carry tool calls is left out "
                     "(the counter's template refuses both in one message)")


def _plan_request(source, setting: Setting):
    from ..plans import PlanRequest, parse_plan, plan_from_request

    if isinstance(source, AssemblyResult):
        from ..replay import source_of

        source = source_of(source)
    if isinstance(source, Request):
        _, sections, tools = plan_from_request(source)
        limit, reserve, margin = source.context_limit, source.max_new_tokens, source.margin
        request_id = source.id
    else:
        sections, tools = source.sections, source.tools
        limit, reserve, margin = source.plan.budget_tokens, source.plan.reserve_output_tokens, 0
        request_id = source.id
    plan = dict(setting.plan)
    if setting.context_limit is not None:
        plan["budget_tokens"] = setting.context_limit - margin
    elif plan.get("budget_tokens") is None and limit is not None:
        plan["budget_tokens"] = limit - margin
    if not plan.get("reserve_output_tokens"):
        plan["reserve_output_tokens"] = reserve
    if setting.fill_order is not None:
        plan["fill_order"] = list(setting.fill_order)
    declared = [s["name"] if isinstance(s, dict) else s for s in plan.get("sections", [])]
    missing = [name for name, messages in sections.items() if messages and name not in declared]
    if missing:
        raise ValueError(f"the plan does not declare this request's section {missing[0]!r} "
                         f"(it declares {', '.join(declared)})")
    return PlanRequest(id=request_id, plan=parse_plan(plan, source="--plan"),
                       sections={k: v for k, v in sections.items() if v or k in declared}, tools=tools)


def _assemble(source, setting: Setting, counter: TokenCounter) -> AssemblyResult:
    from ..plans import assemble_plan_request
    from ..replay import Edits, replay

    if setting.plan is not None:
        return assemble_plan_request(_plan_request(source, setting), counter)
    edits = Edits(context_limit=setting.context_limit, fill_order=setting.fill_order)
    if setting.fill_order is not None and not isinstance(getattr(source, "request", source), Request):
        edits = Edits(context_limit=setting.context_limit)  # a plan request orders its own sections
    return replay(source, edits=edits, counter=counter)


def _sent(result: AssemblyResult | None) -> set[tuple[str, str]]:
    if result is None:
        return set()
    return {(e.section, e.id) for e in result.trace if e.decision not in NOT_SENT and e.section != "template"}


def _lost(before: AssemblyResult | None, after: AssemblyResult) -> int:
    """Items the recording sent that are in the new trace but not sent (dropped or summarised). An item
    the new trace does not have at all (a recorded summary whose span now fits whole) is not a loss."""
    not_sent = {(e.section, e.id) for e in after.trace if e.decision in NOT_SENT}
    return len(_sent(before) & not_sent)


def _figures(before: AssemblyResult | None, after: AssemblyResult, counter: TokenCounter) -> dict[str, Any]:
    kept: dict[str, int] = {}
    dropped: dict[str, int] = {}
    for e in after.trace:
        if e.section == "template":
            continue
        side = dropped if e.decision in NOT_SENT else kept
        side[e.section] = side.get(e.section, 0) + 1
    return {"in": after.input_tokens, "free": after.remaining_tokens, "kept": kept, "dropped": dropped,
            "lost": _lost(before, after),
            "audit": sum(f.severity == "error" for f in audit(after, counter))}


def measure(record: Record, settings: Sequence[Setting], counters: Counters) -> dict[str, Any]:
    """One row: ``ref``, ``label``, ``model`` and, per setting, either the figures (``in`` input tokens,
    ``free`` room left, ``kept``/``dropped`` items per section, ``lost`` items the recording sent that
    are not sent now, ``audit`` error count), or ``over`` (the required content does not fit, ``short``
    by how many tokens), or ``err`` (why it cannot be assembled). Raises ``RequestError`` when the
    record is not a valid request or result at all (the caller reports it as a bad record)."""
    model = record.value.recorded.model if record.imported else None
    counter = counters(model)
    label = Path(record.ref).name
    try:
        source, before, label, model, adapted = _source(record, counter)
    except Unreplayable as exc:
        return {"ref": record.ref, "label": label, "model": model, "settings": [{"err": str(exc)} for _ in settings]}
    if model is not None and not record.imported:
        counter = counters(model)
    rows = []
    for setting in settings:
        try:
            after = _assemble(source, setting, counter)
        except RequiredContextTooLarge as exc:
            rows.append({"over": True, "short": exc.required_input_tokens - exc.available_input_tokens})
            continue
        except ContextBudgetError as exc:
            rows.append({"over": True, "short": None, "why": str(exc).splitlines()[0][:300]})
            continue
        except (ContextInspectorError, ValueError) as exc:
            rows.append({"err": str(exc).splitlines()[0][:300]})
            continue
        rows.append(_figures(before, after, counter))
    row = {"ref": record.ref, "label": label, "model": model, "settings": rows}
    if adapted:
        row["adapted"] = adapted
    return row
