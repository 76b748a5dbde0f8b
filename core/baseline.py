"""``naive_truncate``: what application code often does, kept as the baseline to compare against.

Sections are concatenated in arrival order (instructions with the retrieved passages pasted in
raw, then history, the question and the tool exchanges) and the oldest messages after the system
message are dropped until the request fits; if it still does not fit the system message goes
too. A render the chat template refuses counts as not fitting. The result has the assembler's
shape, so the inspector and the audit can set the two side by side.
"""
from __future__ import annotations

from .contracts import ChatMessage, Request
from .counting import TokenCounter
from .errors import CounterError
from .render import exchange_id
from .result import AssemblyResult, TraceEntry


def _raw_block(passage) -> str:
    return f'<evidence id="{passage.id}" source="{passage.source}">\n{passage.text}\n</evidence>\n'


def _arrival(request: Request) -> tuple[list[ChatMessage], list[tuple[str, str]]]:
    system = request.instructions
    if request.evidence:
        system += ("\n\n" if system else "") + "".join(_raw_block(p) for p in request.evidence)
    messages = [ChatMessage(role="system", content=system)] if system else []
    origins = [("instructions", "instructions")] if system else []
    for turn_id, turn in zip(request.turn_ids(), request.history_turns()):
        for k, m in enumerate(turn):
            messages.append(ChatMessage(role=m.role, content=m.content, tool_calls=m.tool_calls,
                                        tool_call_id=m.tool_call_id))
            origins.append(("history", f"{turn_id}/{k}-{m.role}"))
    messages.append(ChatMessage(role="user", content=request.current))
    origins.append(("current", "question"))
    for x, exchange in enumerate(request.tool_exchanges):
        xid = exchange_id(request, x)
        messages.append(ChatMessage(role="assistant", content=exchange.content, tool_calls=exchange.calls))
        origins.append(("tool_exchanges", f"{xid}/call"))
        for r in exchange.results:
            messages.append(ChatMessage(role="tool", content=r.content, tool_call_id=r.tool_call_id))
            origins.append(("tool_exchanges", f"{xid}/{r.tool_call_id}"))
    return messages, origins


def naive_truncate(request: Request, counter: TokenCounter) -> AssemblyResult:
    from .permissions import permitted, with_record

    asked = request
    request, refused = permitted(request)  # the baseline, too, never sees what the caller may not
    result = _naive_truncate(request, counter)
    return with_record(result, request, refused) if request is not asked or request.policy_version else result


def _naive_truncate(request: Request, counter: TokenCounter) -> AssemblyResult:
    budget = request.input_budget
    messages, origins = _arrival(request)
    tools = list(request.tools)
    alive = list(range(len(messages)))
    trace: list[TraceEntry] = []

    def count(indices: list[int]) -> int | None:
        if not indices:
            return None
        try:
            return counter.count([messages[i] for i in indices], tools)
        except CounterError:
            return None  # the template refuses this conversation: it cannot be sent

    def measure(conversation: list[ChatMessage], with_tools: list) -> int | None:
        """A count for the trace: a partial conversation ending with an assistant message (which
        chat templates refuse to continue) is measured with an empty user turn after it."""
        conversation = conversation or [ChatMessage(role="user", content="")]
        try:
            return counter.count(conversation, with_tools)
        except CounterError:
            if conversation[-1].role != "assistant":
                return None
        try:
            return counter.count(conversation + [ChatMessage(role="user", content="")], with_tools)
        except CounterError:
            return None

    total = count(alive)
    costs: dict[tuple[str, str], tuple[int, str]] | None = None  # what each item costs in the whole request
    has_system = bool(origins) and origins[0] == ("instructions", "instructions")
    while (total is None or total > budget) and len(alive) > 1:
        victim = alive[1] if has_system and alive[0] == 0 and len(alive) > 2 else alive[0]
        rest = [i for i in alive if i != victim]
        section, item = origins[victim]
        reason = "oldest message; dropped until the request fits"
        if total is None:
            reason = "oldest message; dropped because the chat template refused the request with it"
        if costs is None:
            costs = _arrival_costs(request, messages, origins, tools, measure, counter)
        tokens, note = costs[(section, item)]
        trace.append(TraceEntry(section=section, id=item, decision="dropped", tokens=tokens, reason=reason + note))
        if victim == 0 and has_system:
            for p in request.evidence:
                tokens, note = costs[("evidence", p.id)]
                trace.append(TraceEntry(section="evidence", id=p.id, decision="dropped", tokens=tokens,
                                        reason="pasted into the dropped system message" + note, score=p.score,
                                        source=p.source))
        alive, total = rest, count(rest)

    if total is None:
        raise CounterError("naive truncation left no request the chat template accepts")
    final = [messages[i] for i in alive]
    kept_entries = _kept_entries(request, final, [origins[i] for i in alive], tools, measure, total)
    trace = kept_entries + trace
    turn_ids = request.turn_ids()
    dropped_ids = {e.id.split("/")[0] for e in trace if e.section == "history" and e.decision == "dropped"}
    system_kept = has_system and 0 in alive
    return AssemblyResult(
        strategy="naive_truncate", request_id=request.id, messages=final, tools=tools, input_tokens=total,
        input_budget=budget, remaining_tokens=budget - total, context_limit=request.context_limit,
        max_new_tokens=request.max_new_tokens, margin=request.margin, fill_order=list(request.fill_order),
        kept_evidence=[p.id for p in request.evidence] if system_kept else [],
        dropped_evidence=[] if system_kept else [p.id for p in request.evidence],
        kept_turns=len(turn_ids) - len(dropped_ids), dropped_turns=len(dropped_ids), trace=trace,
        counter=counter.identity, request=request)


def _kept_entries(request: Request, final: list[ChatMessage], origins: list[tuple[str, str]], tools: list,
                  measure, total: int) -> list[TraceEntry]:
    """Marginal costs of what was sent, measured by building the request up in order: the bare
    template, each tool, the system message (instructions, then each pasted passage), then each
    later message. The steps telescope, so the entries add up to ``total`` exactly."""
    entries: list[TraceEntry] = []
    previous = measure([], [])

    def step(conversation: list[ChatMessage], with_tools: list, **fields) -> None:
        nonlocal previous
        now = measure(conversation, with_tools)
        tokens = now - previous if now is not None and previous is not None else 0
        previous = now if now is not None else previous
        entries.append(TraceEntry(tokens=tokens, **fields))

    template = TraceEntry(section="template", id="chat-template", decision="required", tokens=previous or 0,
                          reason="chat template and generation prefix with nothing in it")
    for k, tool in enumerate(tools):
        step([], tools[:k + 1], section="tools", id=tool.name, decision="kept", reason="tool definition")
    start = 0
    if origins and origins[0] == ("instructions", "instructions"):
        if request.instructions:
            system = ChatMessage(role="system", content=request.instructions)
            step([system], tools, section="instructions", id="instructions", decision="kept",
                 reason="within the last messages that fit", message_indices=[0])
        text = request.instructions + ("\n\n" if request.instructions and request.evidence else "")
        for passage in request.evidence:
            text += _raw_block(passage)
            step([ChatMessage(role="system", content=text)], tools, section="evidence", id=passage.id,
                 decision="kept", reason="pasted raw into the system message, unescaped", score=passage.score,
                 source=passage.source, message_indices=[0])
        start = 1
    for position in range(start, len(final)):
        section, item = origins[position]
        step(final[:position + 1], tools, section=section, id=item, decision="kept",
             reason="within the last messages that fit", message_indices=[position])
    # whatever the steps could not attribute (a refused partial render) stays with the template
    template.tokens = total - sum(e.tokens for e in entries)
    return [template] + entries


def _arrival_costs(request: Request, messages: list[ChatMessage], origins: list[tuple[str, str]], tools: list,
                   measure, counter: TokenCounter) -> dict[tuple[str, str], tuple[int, str]]:
    """What each item costs in the whole request as it arrived (before anything is dropped), keyed by
    (section, id), with a note when the figure is shared: the request is built up in order (the system
    message instructions first, then each pasted passage) and each step's growth is its item's cost. A
    prefix the chat template refuses (a tool call without its result yet) is carried to the next prefix
    it accepts, and that growth is split between the messages by the tokens of their own text."""
    costs: dict[tuple[str, str], tuple[int, str]] = {}
    previous = measure([], tools)
    pending: list[tuple[tuple[str, str], str]] = []  # (key, text) of steps not measured yet

    def settle(now: int | None) -> None:
        nonlocal previous, pending
        if now is None:
            return
        grown = now - previous if previous is not None else 0
        if len(pending) == 1:
            costs[pending[0][0]] = (grown, "")
        else:
            weights = [max(1, counter.text_count(text)) for _, text in pending]
            shares = _split(grown, weights)
            note = (f"; its tokens are its share of the {grown} that {len(pending)} messages cost together "
                    "(the chat template renders none of them alone)")
            for (key, _), share in zip(pending, shares):
                costs[key] = (share, note)
        previous, pending = now, []

    def step(key: tuple[str, str], text: str, conversation: list[ChatMessage]) -> None:
        pending.append((key, text))
        settle(measure(conversation, tools))

    start = 0
    if origins and origins[0] == ("instructions", "instructions"):
        text = request.instructions
        if request.instructions:
            step(("instructions", "instructions"), text, [ChatMessage(role="system", content=text)])
        text += "\n\n" if request.instructions and request.evidence else ""
        for passage in request.evidence:
            text += _raw_block(passage)
            step(("evidence", passage.id), _raw_block(passage), [ChatMessage(role="system", content=text)])
        start = 1
    for position in range(start, len(messages)):
        m = messages[position]
        words = (m.content or "") + "".join(c.model_dump_json() for c in m.tool_calls)
        step(origins[position], words, messages[:position + 1])
    for key, text in pending:  # the whole request is refused: each message's own text is all there is
        costs[key] = (counter.text_count(text), "; counted as its own text (the chat template refused the request)")
    return costs


def _split(total: int, weights: list[int]) -> list[int]:
    """``total`` in integer parts proportional to ``weights``, adding up exactly (largest remainder)."""
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    parts = [int(x // 1) for x in exact]
    for k in sorted(range(len(parts)), key=lambda k: parts[k] - exact[k])[:total - sum(parts)]:
        parts[k] += 1
    return parts
