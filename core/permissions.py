"""The permission check (seed 001, 3.3) and the request record's logging policy (3.5).

Permission is checked before any candidate enters selection: an evidence passage or a tool
definition with ``access`` labels is visible only to a caller whose ``grants`` share one of them
(no grants: only unlabelled items). An item the caller may not see is removed from the request
before anything is counted, rendered or sent; the trace lists it by id with the decision
``not permitted`` and 0 tokens, and its text, source and labels appear nowhere in the result.

The logging policy names the fields a recorded result must not keep. ``recorded_json`` replaces
their text (in the embedded request and in the sent messages) by its length, lists every removed
field in ``redacted_fields`` and, since a replay of such a record would assemble the placeholders
rather than what was sent, marks it ``replay_exact: false`` with the reason.
"""
from __future__ import annotations

from typing import Any

from .contracts import Request
from .result import AssemblyResult, TraceEntry

NOT_PERMITTED = "not permitted"
NOT_PERMITTED_REASON = "not permitted: the caller's grants include none of this item's access labels"


def visible(access: list[str] | None, grants: list[str] | None) -> bool:
    """An item without labels is for everyone; one with labels needs a grant among them."""
    return access is None or bool(set(access) & set(grants or ()))


def permitted(request: Request) -> tuple[Request, list[TraceEntry]]:
    """``request`` without the passages and tools its caller may not see, and their trace entries
    (id only). The same object comes back when nothing is removed."""
    grants = request.grants  # an unlabelled item is for everyone: no call per passage of a replay to learn it
    evidence = [p for p in request.evidence if p.access is None or visible(p.access, grants)]
    tools = [t for t in request.tools if t.access is None or visible(t.access, grants)]
    if len(evidence) == len(request.evidence) and len(tools) == len(request.tools):
        return request, []
    refused = [TraceEntry(section="tools", id=t.name, decision=NOT_PERMITTED, tokens=0, reason=NOT_PERMITTED_REASON)
               for t in request.tools if t not in tools]
    refused += [TraceEntry(section="evidence", id=p.id, decision=NOT_PERMITTED, tokens=0,
                           reason=NOT_PERMITTED_REASON) for p in request.evidence if p not in evidence]
    return request.model_copy(update={"evidence": evidence, "tools": tools}), refused


def with_record(result: AssemblyResult, request: Request, refused: list[TraceEntry]) -> AssemblyResult:
    """The result of ``request`` (already filtered) with the refused items' entries after the
    template's, its policy version and its logging policy recorded."""
    if refused:
        result.trace = result.trace[:1] + refused + result.trace[1:]
    result.request = request
    if request.policy_version is not None:
        result.policy_version = request.policy_version  # type: ignore[attr-defined]
    if refused:
        result.not_permitted = [{"section": e.section, "id": e.id} for e in refused]  # type: ignore[attr-defined]
    return result


# ---------------------------------------------------------------------------------------------
# logging policy


def _length(text: str | None) -> str | None:
    return None if text is None else f"[redacted: {len(text)} chars]"


def recorded_json(result: AssemblyResult) -> dict[str, Any]:
    """The result as it may be recorded under its request's logging policy (unchanged without one)."""
    data = result.model_dump(mode="json", exclude_none=True)
    policy = result.request.logging if result.request is not None else None
    if policy is None:
        return data
    removed: list[str] = []
    request = data.get("request") or {}
    fields = set(policy.redact)
    if "instructions" in fields and request.get("instructions"):
        request["instructions"] = _length(request["instructions"])
        removed.append("request.instructions")
    if "current" in fields:
        request["current"] = _length(request.get("current"))
        removed.append("request.current")
    for k, message in enumerate(request.get("history") or []):
        if "history" in fields and message.get("content") is not None:
            message["content"] = _length(message["content"])
            removed.append(f"request.history[{k}].content")
    for x, exchange in enumerate(request.get("tool_exchanges") or []):
        if "tool_exchanges" in fields:
            for r, item in enumerate(exchange.get("results") or []):
                item["content"] = _length(item["content"])
                removed.append(f"request.tool_exchanges[{x}].results[{r}].content")
    for k, passage in enumerate(request.get("evidence") or []):
        if "evidence" in fields:
            passage["text"] = _length(passage["text"])
            removed.append(f"request.evidence[{k}].text")
    origins = _message_sections(result)
    for index, message in enumerate(data.get("messages") or []):
        sections = origins.get(index, set())
        if sections & fields and message.get("content") is not None:
            message["content"] = _length(message["content"])
            removed.append(f"messages[{index}].content")
    data["redacted_fields"] = removed
    data["logging_policy"] = policy.model_dump(mode="json", exclude_none=True)
    if removed:
        data["replay_exact"] = False
        data["replay_note"] = ("the logging policy removed " + ", ".join(sorted(fields)) + " from this record; a "
                               "replay would assemble the placeholders, not the text that was sent, so it cannot "
                               "reproduce the request exactly")
    return data


def _message_sections(result: AssemblyResult) -> dict[int, set[str]]:
    """Which sections' text each sent message holds (the question's message also holds the evidence)."""
    out: dict[int, set[str]] = {}
    for entry in result.trace:
        for index in entry.message_indices:
            out.setdefault(index, set()).add("current" if entry.section == "current" else entry.section)
    return out
