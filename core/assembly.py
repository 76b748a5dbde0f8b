"""``assemble(request, counter)``: seed 003's policy, counted on the complete serialized request.

An item's ``tokens`` in the trace is its marginal cost: the complete count of the request with it
minus the complete count just before it was tried. Kept items are added one after another from the
bare template, so the template overhead plus every sent item's tokens equals ``input_tokens``.

Two ways of counting reach the same decisions, trace and bytes:

- ``reference=True`` keeps the seed's method literally: every admission attempt renders and counts
  the whole candidate request. Exact, and its cost grows with candidates times request size.
- The default (``core.assembly_fast``) counts each item's text once and predicts the complete
  count from it and a constant for the item's shape, learned from small probe requests. The
  required request is counted whole once; so is every attempt whose prediction lands near the
  allowance when the decision depends on it, and the final request. If any complete count
  disagrees with a prediction, the request is assembled again with the reference method
  (``core.assembly_reference``) and the result says so in ``counting_note``.
"""
from __future__ import annotations

from .assembly_evidence import fill_evidence
from .assembly_history import fill_history
from .assembly_fast import FastBuilder
from .assembly_memo import memo_for
from .assembly_reference import Builder, PredictionMismatch
from .contracts import Request
from .counting import TokenCounter
from .rendered import mark_not_rendered
from .repeats import call_text_moves, carries, repeated_text, runs_together
from .errors import AssemblyInvariantError, RequiredContextTooLarge
from .permissions import permitted, with_record
from .neutralise import mark_result, neutralise_request
from .render import QUESTION_PREFIX, exchange_id, render
from .result import AssemblyResult, TraceEntry, set_message_indices


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
    builders: list[Builder] = []
    asked = request
    request, refused = permitted(request)  # before any selection: what the caller may not see never enters
    permitted_request = request
    memo = memo_for(request, counter)  # what an assembly of this content with this counter worked out before
    request, neutralised = memo.neutralise(request, lambda r: neutralise_request(r, counter))  # untrusted text never reads as a control token

    def run(builder: Builder) -> AssemblyResult:
        builders.append(builder)
        memo.lend(builder)
        result = mark_result(_assemble(request, counter, builder), neutralised)
        if permitted_request is not asked or request.policy_version:
            return with_record(result, request, refused)
        return result

    try:
        if reference:
            return run(Builder(request, counter))
        repeated = memo.repeated_text(request, lambda r: _repeated_text(r, counter))
        if repeated:  # a Jinja template may compare messages by value: what one item adds depends on another
            result = run(Builder(request, counter))
            result.counting_note = f"assembled with the reference method: {repeated}"
            return result
        try:
            return run(FastBuilder(request, counter, request.input_budget))
        except PredictionMismatch as exc:
            result = run(Builder(request, counter))
            result.counting_note = f"assembled with the reference method: {exc}"
            return result
    finally:
        for builder in builders:
            if isinstance(builder, FastBuilder):
                memo.keep(builder)
        if stats is not None:
            stats["full_counts"] = sum(b.full_counts for b in builders)
            stats["item_counts"] = sum(b.probe_counts for b in builders) + counter.item_counts - items_before


def _repeated_text(request: Request, counter: TokenCounter) -> str | None:
    """Why the shortcuts cannot be trusted for ``request`` (``core.repeats``): its template compares messages by
    value and two of its messages hold the same text, or one holds the question with evidence; or the question holds
    markup its template looks for (``TokenCounter.rewrite_test``: Qwen3 takes a user message that is a
    ``<tool_response>`` for no question, and writes the replies before it by where the last question is), so what a
    turn or the first passage adds depends on which others are in (the evidence preamble makes it a question again),
    which no probe without them says; or the template carries state from message to message and the request holds
    tool calls (``TokenCounter.carried_state``: DeepSeek-R1 writes the first tool call otherwise); or it writes the
    text beside a history tool call only while no final reply follows (``repeats.call_text_moves``: gpt-oss); or no
    item's cost stands apart under it (``repeats.runs_together``). ``None`` else."""
    rewritten = counter.rewrite_test()
    if rewritten is not None and rewritten(request.current):
        return "the question holds markup the chat template looks for, so what each item adds depends on the others"
    apart = runs_together(counter)
    if apart:
        return apart
    state = carries(counter, request.history, calls=bool(request.tool_exchanges))
    if state:
        return state
    moves = call_text_moves(counter, request.history)
    if moves:
        return moves
    return repeated_text(counter, _texts(request), evidence_tail=QUESTION_PREFIX + request.current)


def _texts(request: Request):
    """(role, text) of every message ``request`` can render with a text, made as they are asked for (a template that
    compares no texts asks for none)."""
    def every():
        yield "system", request.instructions
        yield from ((m.role, m.content) for m in request.history)
        yield "user", request.current
        for x in request.tool_exchanges:
            yield "assistant", x.content
            yield from (("tool", r.content) for r in x.results)
    return ((role, text) for role, text in every() if text)


def _assemble(request: Request, counter: TokenCounter, b: Builder) -> AssemblyResult:
    budget = request.input_budget
    text = None  # the final request's rendered text, where its count gave it
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
            kept_turns, dropped_turns = fill_history(b, budget)
        else:
            kept_evidence, dropped_evidence = fill_evidence(b, budget)

    if isinstance(b, FastBuilder):
        b.filled()
    # The complete request is counted once more, outside ``count``'s cache, and must equal the running count (every
    # span of it encoded or found among the spans counted before: the span memo, mistral's and hf's). The
    # default's last near-allowance check may have been that count: the final request, tokenised whole there, or
    # counted from its pieces (an hf: counter's check: the count the final count would make of the same text).
    final = render(request, b.selection, getattr(b, "blocks", None),
                   b._turn_messages if isinstance(b, FastBuilder) else None)  # the messages its counts rendered
    if isinstance(b, FastBuilder) and b.tokenised is not None and b.tokenised[0] == b.selection:
        (_, input_tokens, text), final_ids = b.tokenised, None  # with its rendered text where the check kept it
    elif b.reuses_texts:  # every span counted, the ones whose text was counted alone taken from there (span memo);
        both = counter.count_and_render_text(final.messages, final.tools)  # and its text, where one rendering gives both
        if both is not None:
            (input_tokens, text), final_ids = both, None
        else:
            input_tokens, final_ids = counter.count_whole_reusing_texts(final.messages, final.tools)
        b.full_counts += 1
    else:
        input_tokens, final_ids = counter.count_whole(final.messages, final.tools)  # ids where they spare a render
        b.full_counts += 1
    if input_tokens != b.tokens:
        if isinstance(b, FastBuilder):
            raise PredictionMismatch(f"the final request counts {input_tokens} tokens, predicted {b.tokens}")
        raise AssemblyInvariantError(
            f"recount of the final request gave {input_tokens} tokens, the assembly counted {b.tokens}")
    if input_tokens > budget:
        raise AssemblyInvariantError(f"final request has {input_tokens} tokens, over the allowance {budget}")

    _place(b.trace, final.origins, request)
    result = AssemblyResult(
        strategy="assemble", request_id=request.id, messages=final.messages, tools=final.tools,
        input_tokens=input_tokens, input_budget=budget, remaining_tokens=budget - input_tokens,
        context_limit=request.context_limit, max_new_tokens=request.max_new_tokens, margin=request.margin,
        fill_order=list(request.fill_order), kept_evidence=kept_evidence, dropped_evidence=dropped_evidence,
        kept_turns=kept_turns, dropped_turns=dropped_turns, trace=b.trace, counter=counter.identity,
        request=None)
    result.request = request  # validated already: given to the constructor, its whole-request checks would run again
    return mark_not_rendered(result, counter, ids=final_ids, rendered=text)


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
            indices = [user_index]
        else:
            indices = where.get((entry.section, entry.id), [])
        set_message_indices(entry, indices)
