"""``assemble(request, counter)``: seed 003's policy, counted on the complete serialized request.

An item's ``tokens`` in the trace is its marginal cost: the complete count of the request with it
minus the complete count just before it was tried. Kept items are added one after another from the
bare template, so the template overhead plus every sent item's tokens equals ``input_tokens``.

Two ways of counting reach the same decisions, trace and bytes:

- ``reference=True`` keeps the seed's method literally: every admission attempt renders and counts
  the whole candidate request. Exact, and its cost grows with candidates times request size.
- The default counts each item's text once (cached by content in the counter) and predicts the
  complete count as the running count plus what the item adds: its text tokens plus a constant for
  its shape, learned from small probe requests (a few parts of the request, not all of it) and
  checked by a third probe. The required request is counted whole once; so is every attempt whose
  prediction lands near the allowance, and the final request. If any complete count disagrees
  with a prediction, the request is assembled again with the reference method and the result
  says so in ``counting_note``.
"""
from __future__ import annotations

from collections import OrderedDict

from .contracts import Request
from .counting import TokenCounter
from .rendered import mark_not_rendered
from .errors import AssemblyInvariantError, RequiredContextTooLarge
from .permissions import permitted, with_record
from .neutralise import mark_result, neutralise_request
from .render import Selection, evidence_block, evidence_ranking, exchange_id, render
from .result import AssemblyResult, TraceEntry

# A prediction this close to the allowance is checked by a complete count before it decides.
NEAR_ALLOWANCE = 4


def _selection_memo(counter: TokenCounter) -> "OrderedDict":
    memo = getattr(counter, "_selection_memo", None)
    if memo is None:
        memo = OrderedDict()
        counter._selection_memo = memo
    return memo


class _PredictionMismatch(Exception):
    """A shortcut disagreed with a complete count: the request goes back to the reference method."""


class _Builder:
    """Walks selections forward, counting each step against the previous one (the reference)."""

    def __init__(self, request: Request, counter: TokenCounter) -> None:
        self.request = request
        self.counter = counter
        self.full_counts = 0  # complete-request tokenisations this assembly made
        self.probe_counts = 0  # small probe requests (one or two items) it tokenised
        parts = (request.instructions, request.tools, request.history, request.current, request.tool_exchanges,
                 request.evidence)
        self._memo = (_selection_memo(counter), parts, tuple(map(id, parts)))
        self.selection = Selection()
        self.tokens = self.count(self.selection)
        self.trace: list[TraceEntry] = [TraceEntry(
            section="template", id="chat-template", decision="required", tokens=self.tokens,
            reason="chat template, role markers and generation prefix with every section empty")]

    def _render_count(self, selection: Selection) -> int:
        """The counter's count of ``selection``'s render, remembered per request content: a replay
        shares the unchanged parts of its request, so it neither renders nor tokenises them again."""
        memo, parts, parts_key = self._memo
        key = (parts_key, selection)
        hit = memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[1], parts)):
            return hit[0]
        rendered = render(self.request, selection)
        value = self.counter.count(rendered.messages, rendered.tools)
        memo[key] = (value, parts)  # holding the parts keeps their ids from being reused
        if len(memo) > 4096:
            memo.popitem(last=False)
        return value

    def count(self, selection: Selection) -> int:
        """Complete count of the request as ``selection`` renders it."""
        before = self.counter.full_counts
        value = self._render_count(selection)
        self.full_counts += self.counter.full_counts - before
        return value

    def cost(self, selection: Selection) -> tuple[int, int]:
        total = self.count(selection)
        return total, total - self.tokens

    def attempt(self, section: str, index: int, candidate: Selection) -> tuple[int, int]:
        """Complete count and marginal cost of admitting one optional item."""
        return self.cost(candidate)

    def take(self, selection: Selection, total: int) -> None:
        self.selection = selection
        self.tokens = total

    def require_item(self, section: str, index: int, item_id: str, selection: Selection, reason: str) -> None:
        total, marginal = self.cost(selection)
        self.take(selection, total)
        self.trace.append(TraceEntry(section=section, id=item_id, decision="required", tokens=marginal,
                                     reason=reason))

    def check_required(self) -> None:
        """The reference counted every step whole: nothing to check."""


class _FastBuilder(_Builder):
    """Predicts complete counts from small probe requests and per-item text counts, and checks them.

    A probe is a render of a few parts of the request (the question and one or two items): it
    measures what an item adds where it will be inserted (evidence blocks are appended before the
    question, history turns inserted before the newest kept turn) without tokenising the rest.
    """

    def __init__(self, request: Request, counter: TokenCounter, budget: int) -> None:
        super().__init__(request, counter)
        self.budget = budget
        self.constants: dict[tuple, int | None] = {}
        self._text_memo: dict[tuple[str, int], int] = {}
        self.turns = request.history_turns()
        # turns without tool calls, grouped by their roles: the shapes whose constant can be learned
        self.shape_of: list[tuple | None] = []
        self.members: dict[tuple, list[int]] = {}
        for t, turn in enumerate(self.turns):
            # Templates may trim a message's edges (Mistral, Gemma): text counts hold only for trimmed text.
            plain = (not any(m.tool_calls or m.role == "tool" for m in turn) and turn[-1].role != "user"
                     and all(m.content and m.content == m.content.strip() for m in turn))
            shape = ("history", tuple(m.role for m in turn)) if plain else None
            self.shape_of.append(shape)
            if shape is not None:
                self.members.setdefault(shape, []).append(t)

    def probe(self, selection: Selection) -> int:
        before = self.counter.full_counts
        value = self._render_count(selection)
        self.probe_counts += self.counter.full_counts - before
        return value

    def delta(self, base: Selection, added: Selection) -> int:
        return self.probe(added) - self.probe(base)

    # ---- required content: probes, then one complete count of the required request

    def require_item(self, section: str, index: int, item_id: str, selection: Selection, reason: str) -> None:
        core = Selection(instructions=True)
        if section == "instructions":
            marginal = self.delta(Selection(), core)
        elif section == "tools":
            first = core.add(tools=(0,))
            marginal = self.delta(core, first) if index == 0 else self.delta(first, first.add(tools=(0, index)))
        elif section == "current":
            marginal = self.delta(core, core.add(question=True))
        else:
            asked = core.add(question=True)
            first = asked.add(exchanges=(0,))
            marginal = self.delta(asked, first) if index == 0 else self.delta(first, first.add(exchanges=(0, index)))
        self.take(selection, self.tokens + marginal)
        self.trace.append(TraceEntry(section=section, id=item_id, decision="required", tokens=marginal,
                                     reason=reason))

    def check_required(self) -> None:
        exact = self.count(self.selection)
        if exact != self.tokens:
            raise _PredictionMismatch(f"required parts predicted {self.tokens} tokens, a complete count gave {exact}")

    # ---- optional items

    def _constant(self, shape: tuple, members: list[int], section: str) -> int | None:
        """Tokens an item of ``shape`` adds beyond its text, learned from two probes and checked by a
        third; ``None`` when the request has too few items of that shape to learn it."""
        if shape in self.constants:
            return self.constants[shape]
        value = None
        if len(members) >= 3:
            a, b, c = sorted(members, key=lambda i: self._text_tokens(section, i))[:3]
            values = []
            for earlier, added in (((a,), b), ((a, b), c)):
                base = self._probe(section, earlier)
                values.append(self.delta(base, self._probe(section, earlier + (added,)))
                              - self._text_tokens(section, added))
            if values[0] != values[1]:
                raise _PredictionMismatch(f"{section} items of one shape cost {values[0]} and {values[1]} tokens "
                                          "beyond their text")
            value = values[0]
        self.constants[shape] = value
        return value

    def _probe(self, section: str, items: tuple[int, ...]) -> Selection:
        if section == "evidence":
            return Selection(question=True, evidence=items)
        return Selection(question=True, turns=items)

    def _text_tokens(self, section: str, index: int) -> int:
        key = (section, index)
        known = self._text_memo.get(key)
        if known is None:  # an item's rendering is built (and looked up in the counter's cache) once
            if section == "evidence":
                known = self.counter.text_count(evidence_block(self.request.evidence[index]))
            else:
                known = sum(self.counter.text_count(m.content or "") for m in self.turns[index])
            self._text_memo[key] = known
        return known

    def _open_ended(self, t: int) -> bool:
        """A turn that ends with a user message can merge into the next user message (Mistral joins
        consecutive user messages), so what it adds depends on its neighbour: count it whole."""
        return self.turns[t][-1].role == "user"

    def _marginal(self, section: str, index: int, candidate: Selection) -> int:
        request = self.request
        if section == "evidence":
            if not self.selection.evidence:  # the first passage also brings the preamble
                if self.selection.turns and self._open_ended(max(self.selection.turns)):
                    return self.count(candidate) - self.tokens
                base = Selection(instructions=True, question=True)
                return self.delta(base, base.add(evidence=(index,)))
            constant = self._constant(("evidence",), list(range(len(request.evidence))), section)
            if constant is None:
                neighbour = self.selection.evidence[-1:]
                return self.delta(self._probe(section, neighbour), self._probe(section, neighbour + (index,)))
            return self._text_tokens(section, index) + constant
        if self._open_ended(index):
            return self.count(candidate) - self.tokens
        if not self.selection.turns:
            return self.delta(Selection(question=True), Selection(question=True, turns=(index,)))
        shape = self.shape_of[index]
        constant = self._constant(shape, self.members[shape], section) if shape is not None else None
        if constant is None:  # tool calls render through the template: probe this turn beside its neighbour
            neighbour = (min(self.selection.turns),)
            return self.delta(self._probe(section, neighbour), self._probe(section, (index,) + neighbour))
        return self._text_tokens(section, index) + constant

    def attempt(self, section: str, index: int, candidate: Selection) -> tuple[int, int]:
        marginal = self._marginal(section, index, candidate)
        total = self.tokens + marginal
        if abs(total - self.budget) <= NEAR_ALLOWANCE:
            exact = self.count(candidate)
            if exact != total:
                raise _PredictionMismatch(f"predicted {total} tokens near the allowance, a complete count gave {exact}")
        return total, marginal


class AssemblyStats(dict):
    """How an assembly counted: ``full_counts`` (complete-request tokenisations) and ``item_counts``
    (single-item tokenisations: item texts and small probe requests), cache misses only."""


def assemble(request: Request, counter: TokenCounter, *, reference: bool = False,
             stats: AssemblyStats | dict | None = None) -> AssemblyResult:
    """Build the request under its budget, or raise ``RequiredContextTooLarge``.

    ``reference=True`` counts the complete request at every admission attempt (the seed's method);
    the default reaches the same result with far fewer complete counts. ``stats``, if given, is
    filled with the counts this assembly made.
    """
    items_before = counter.item_counts
    builders: list[_Builder] = []
    asked = request
    request, refused = permitted(request)  # before any selection: what the caller may not see never enters
    permitted_request = request
    request, neutralised = neutralise_request(request, counter)  # untrusted text never reads as a control token

    def run(builder: _Builder) -> AssemblyResult:
        builders.append(builder)
        result = mark_result(_assemble(request, counter, builder), neutralised)
        if permitted_request is not asked or request.policy_version:
            return with_record(result, request, refused)
        return result

    try:
        if reference:
            return run(_Builder(request, counter))
        try:
            return run(_FastBuilder(request, counter, request.input_budget))
        except _PredictionMismatch as exc:
            result = run(_Builder(request, counter))
            result.counting_note = f"assembled with the reference method: {exc}"
            return result
    finally:
        if stats is not None:
            stats["full_counts"] = sum(b.full_counts for b in builders)
            stats["item_counts"] = sum(b.probe_counts for b in builders) + counter.item_counts - items_before


def _assemble(request: Request, counter: TokenCounter, b: _Builder) -> AssemblyResult:
    budget = request.input_budget
    b.require_item("instructions", 0, "instructions", b.selection.add(instructions=True),
                   "required: system instructions")
    for i, tool in enumerate(request.tools):
        b.require_item("tools", i, tool.name, b.selection.add(tools=b.selection.tools + (i,)),
                       "required: tool definition")
    b.require_item("current", 0, "question", b.selection.add(question=True), "required: the current question")
    for x in range(len(request.tool_exchanges)):
        b.require_item("tool_exchanges", x, exchange_id(request, x),
                       b.selection.add(exchanges=b.selection.exchanges + (x,)),
                       "required: tool call of the current turn with its result")
    b.check_required()
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
    final_ids = counter.token_ids(final.messages, final.tools)
    input_tokens = len(final_ids)
    b.full_counts += 1
    if input_tokens != b.tokens:
        if isinstance(b, _FastBuilder):
            raise _PredictionMismatch(f"the final request counts {input_tokens} tokens, predicted {b.tokens}")
        raise AssemblyInvariantError(
            f"recount of the final request gave {input_tokens} tokens, the assembly counted {b.tokens}")
    if input_tokens > budget:
        raise AssemblyInvariantError(f"final request has {input_tokens} tokens, over the allowance {budget}")

    _place(b.trace, final.origins, request)
    return mark_not_rendered(AssemblyResult(
        strategy="assemble", request_id=request.id, messages=final.messages, tools=final.tools,
        input_tokens=input_tokens, input_budget=budget, remaining_tokens=budget - input_tokens,
        context_limit=request.context_limit, max_new_tokens=request.max_new_tokens, margin=request.margin,
        fill_order=list(request.fill_order), kept_evidence=kept_evidence, dropped_evidence=dropped_evidence,
        kept_turns=kept_turns, dropped_turns=dropped_turns, trace=b.trace, counter=counter.identity,
        request=request), counter, ids=final_ids)


def _fill_history(b: _Builder, budget: int) -> tuple[int, int]:
    """Whole turns, newest first; the first turn that does not fit stops the section."""
    request = b.request
    ids = request.turn_ids()
    kept = dropped = 0
    stopped_at: str | None = None
    for rank, t in enumerate(reversed(range(len(ids))), start=1):
        candidate = b.selection.add(turns=b.selection.turns + (t,))
        total, marginal = b.attempt("history", t, candidate)
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
        total, marginal = b.attempt("evidence", i, candidate)
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
