"""``assemble(request, counter)``: seed 003's policy, counted on the complete serialized request.

Every admission attempt renders and counts the whole candidate request (instructions, tools,
history, question, tool exchanges, evidence, chat template and generation prefix). An item's
``tokens`` in the trace is its marginal cost: the complete count with it minus the complete
count just before it was tried. Kept items are added one after another from the bare template,
so the template overhead plus every non-dropped item's tokens equals ``input_tokens`` exactly.
"""
from __future__ import annotations

from .contracts import Request
from .counting import TokenCounter
from .errors import AssemblyInvariantError, RequiredContextTooLarge
from .render import Selection, evidence_ranking, exchange_id, render
from .result import AssemblyResult, TraceEntry


class _Builder:
    """Walks selections forward, counting each step against the previous one."""

    def __init__(self, request: Request, counter: TokenCounter) -> None:
        self.request = request
        self.counter = counter
        self.selection = Selection()
        self.tokens = self._count(self.selection)
        self.trace: list[TraceEntry] = [TraceEntry(
            section="template", id="chat-template", decision="required", tokens=self.tokens,
            reason="chat template, role markers and generation prefix with every section empty")]

    def _count(self, selection: Selection) -> int:
        rendered = render(self.request, selection)
        return self.counter.count(rendered.messages, rendered.tools)

    def cost(self, selection: Selection) -> tuple[int, int]:
        total = self._count(selection)
        return total, total - self.tokens

    def take(self, selection: Selection, total: int) -> None:
        self.selection = selection
        self.tokens = total

    def require(self, section: str, item_id: str, selection: Selection, reason: str, **extra) -> None:
        total, marginal = self.cost(selection)
        self.take(selection, total)
        self.trace.append(TraceEntry(section=section, id=item_id, decision="required", tokens=marginal,
                                     reason=reason, **extra))


def assemble(request: Request, counter: TokenCounter) -> AssemblyResult:
    """Build the request under its budget, or raise ``RequiredContextTooLarge``."""
    budget = request.input_budget
    b = _Builder(request, counter)

    b.require("instructions", "instructions", b.selection.add(instructions=True), "required: system instructions")
    for i, tool in enumerate(request.tools):
        b.require("tools", tool.name, b.selection.add(tools=b.selection.tools + (i,)),
                  "required: tool definition")
    b.require("current", "question", b.selection.add(question=True), "required: the current question")
    for x in range(len(request.tool_exchanges)):
        b.require("tool_exchanges", exchange_id(request, x), b.selection.add(exchanges=b.selection.exchanges + (x,)),
                  "required: tool call of the current turn with its result")
    if b.tokens > budget:
        raise RequiredContextTooLarge(b.tokens, budget, context_limit=request.context_limit,
                                      max_new_tokens=request.max_new_tokens, margin=request.margin)

    kept_turns = dropped_turns = 0
    kept_evidence: list[str] = []
    dropped_evidence: list[str] = []
    for section in request.fill_order:
        if section == "history":
            kept_turns, dropped_turns = _fill_history(b, budget)
        else:
            kept_evidence, dropped_evidence = _fill_evidence(b, budget)

    # The complete request is tokenised once more, uncached, and must equal the running count.
    final = render(request, b.selection)
    input_tokens = len(counter.token_ids(final.messages, final.tools))
    if input_tokens != b.tokens:
        raise AssemblyInvariantError(
            f"recount of the final request gave {input_tokens} tokens, the assembly counted {b.tokens}")
    if input_tokens > budget:
        raise AssemblyInvariantError(f"final request has {input_tokens} tokens, over the allowance {budget}")

    _place(b.trace, final.origins, request)
    return AssemblyResult(
        strategy="assemble", request_id=request.id, messages=final.messages, tools=final.tools,
        input_tokens=input_tokens, input_budget=budget, remaining_tokens=budget - input_tokens,
        context_limit=request.context_limit, max_new_tokens=request.max_new_tokens, margin=request.margin,
        fill_order=list(request.fill_order), kept_evidence=kept_evidence, dropped_evidence=dropped_evidence,
        kept_turns=kept_turns, dropped_turns=dropped_turns, trace=b.trace, counter=counter.identity,
        request=request)


def _fill_history(b: _Builder, budget: int) -> tuple[int, int]:
    """Whole turns, newest first; the first turn that does not fit stops the section."""
    request = b.request
    ids = request.turn_ids()
    kept = dropped = 0
    stopped_at: str | None = None
    for rank, t in enumerate(reversed(range(len(ids))), start=1):
        candidate = b.selection.add(turns=b.selection.turns + (t,))
        total, marginal = b.cost(candidate)
        if stopped_at is None and total <= budget:
            b.take(candidate, total)
            kept += 1
            b.trace.append(TraceEntry(section="history", id=ids[t], decision="kept", tokens=marginal, rank=rank,
                                      reason=f"fits: {total} of {budget} tokens after it"))
            continue
        dropped += 1
        if stopped_at is None:
            stopped_at = ids[t]
            reason = f"does not fit: needs {marginal}, {budget - b.tokens} left"
        else:
            reason = f"older than {stopped_at}, which did not fit (history stops at the first misfit)"
        b.trace.append(TraceEntry(section="history", id=ids[t], decision="dropped", tokens=marginal, rank=rank,
                                  reason=reason))
    return kept, dropped


def _fill_evidence(b: _Builder, budget: int) -> tuple[list[str], list[str]]:
    """Passages by score (ties by id); one that does not fit is skipped and the next is tried."""
    request = b.request
    kept: list[str] = []
    dropped: list[str] = []
    for rank, i in enumerate(evidence_ranking(request), start=1):
        passage = request.evidence[i]
        candidate = b.selection.add(evidence=b.selection.evidence + (i,))
        total, marginal = b.cost(candidate)
        extra = {"rank": rank, "score": passage.score, "source": passage.source}
        if total <= budget:
            b.take(candidate, total)
            kept.append(passage.id)
            b.trace.append(TraceEntry(section="evidence", id=passage.id, decision="kept", tokens=marginal,
                                      reason=f"fits: {total} of {budget} tokens after it", **extra))
        else:
            dropped.append(passage.id)
            b.trace.append(TraceEntry(section="evidence", id=passage.id, decision="dropped", tokens=marginal,
                                      reason=f"does not fit: needs {marginal}, {budget - b.tokens} left", **extra))
    return kept, dropped


def _place(trace: list[TraceEntry], origins: list[tuple[str, str]], request: Request) -> None:
    """Record which messages of the final request each item occupies."""
    where: dict[tuple[str, str], list[int]] = {}
    for index, origin in enumerate(origins):
        where.setdefault(origin, []).append(index)
    user_index = where.get(("current", "question"), [None])[0]
    for entry in trace:
        if entry.decision == "dropped":
            continue
        if entry.section == "evidence" and user_index is not None:
            entry.message_indices = [user_index]
        else:
            entry.message_indices = where.get((entry.section, entry.id), [])
