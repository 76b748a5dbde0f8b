"""Structural audit of an assembled request: findings with rule id, severity and character span.

The audit reads the messages actually sent (and, where the result carries it, the request they
came from). It does not judge meaning: it checks placement, pairing, escaping and the budget.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from .audit_counted import control_tokens, counted_and_rendered, emitted_control_tokens, recount, template_dropped
from .counting import TokenCounter
from .findings import Finding
from .render import EVIDENCE_PREAMBLE, QUESTION_PREFIX, evidence_block, unescape
from .result import NOT_SENT, AssemblyResult

OPENER = re.compile(r"<evidence\b[^>]*>", re.IGNORECASE)
CLOSER = re.compile(r"</evidence\s*>", re.IGNORECASE)
TAG = re.compile(r"<evidence\b[^>]*>|</evidence\s*>", re.IGNORECASE)
ID_ATTR = re.compile(r'\bid="([^"]*)"')

RULES: dict[str, str] = {
    "instructions-placement": "the instructions are the system message, and only there",
    "evidence-in-system": "evidence never enters the system message",
    "orphan-assistant": "an assistant reply follows its user message",
    "tool-call-without-result": "every tool call is followed by its result",
    "tool-result-without-call": "every tool result answers a call made before it",
    "unescaped-boundary": "passage text cannot open or close an evidence block",
    "control-token-in-untrusted": "untrusted text carries no text the tokenizer reads as a control token",
    "over-budget": "the request fits its input allowance",
    "count-mismatch": "the recorded count equals a recount with the same counter",
    "duplicate-id": "tool call ids and evidence ids are unique",
    "trace-sum": "the template entry plus every sent item's tokens add up to input_tokens",
    "invalid-tool-arguments": "tool-call arguments are a JSON object",
    "unknown-tool": "a tool that is called was offered to the model (checked when the request offers tools)",
    "truncated-answer": "the recorded answer was not cut off by the output limit (finish_reason length)",
    "template-dropped": "every item the trace calls sent appears in the prompt the chat template renders",
    "role-marker-in-untrusted": "untrusted text carries no spelling of a role or structure marker the template uses",
}
# finish_reason values meaning the output limit cut the answer (OpenAI/OTel, Anthropic, Responses API, Gemini).
LENGTH_FINISH_REASONS = {"length", "max_tokens", "max_output_tokens", "MAX_TOKENS"}


def audit(result: AssemblyResult, counter: TokenCounter | None = None) -> list[Finding]:
    """All structural findings for ``result``, in message order."""
    findings: list[Finding] = []
    findings += _placement(result)
    findings += _turns(result)
    findings += _tool_pairs(result)
    findings += _boundaries(result)
    findings += _duplicates(result)
    findings += _tool_calls(result)
    findings += _finish(result)
    both = None  # the recount and the rendered prompt, from one rendering where the counter gives both at once
    if counter is not None:
        regions = list(_untrusted_regions(result))
        by_text = list(control_tokens(result, counter, regions))
        findings += by_text or list(emitted_control_tokens(result, counter, regions))
        both = counted_and_rendered(result, counter)
        findings += recount(result, counter, both[0] if both else None)
    findings += template_dropped(result, counter, both[1] if both else None)
    findings += _trace_sum(result)
    findings += _budget(result)
    return sorted(findings, key=lambda f: (f.message_index if f.message_index is not None else -1,
                                          f.start or 0, f.rule))


def _budget(result: AssemblyResult) -> Iterator[Finding]:
    """The recorded count against the allowance: the result's own, and (a result's figures are not
    trusted) the allowance its request gives."""
    allowance = result.input_budget
    request = result.request
    if request is not None and getattr(request, "context_limit", None) is not None:
        try:
            allowance = min(allowance, request.input_budget)
        except (AttributeError, TypeError, ValueError):
            pass
        else:
            if request.input_budget != result.input_budget:
                yield Finding("over-budget", "error" if result.input_budget > request.input_budget else "warning",
                              f"the result records an input allowance of {result.input_budget}, but its request "
                              f"allows {request.input_budget} (context_limit {request.context_limit} - "
                              f"max_new_tokens {request.max_new_tokens} - margin {request.margin})")
    if result.input_tokens > allowance:
        yield Finding("over-budget", "error", f"input_tokens {result.input_tokens} exceed the input allowance "
                                              f"{allowance} by {result.input_tokens - allowance}")


def _trace_sum(result: AssemblyResult) -> Iterator[Finding]:
    """Our traces carry a template entry and marginal costs that add up exactly; a trace from
    elsewhere (no template entry) is not held to that."""
    if not any(e.section == "template" for e in result.trace):
        return
    sent = sum(e.tokens for e in result.trace if e.decision not in NOT_SENT)
    if sent != result.input_tokens:
        yield Finding("trace-sum", "error", f"the trace's sent items add up to {sent} tokens, but input_tokens is "
                                            f"{result.input_tokens}")


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def _content(result: AssemblyResult, index: int) -> str:
    return result.messages[index].content or ""


def _placement(result: AssemblyResult) -> Iterator[Finding]:
    messages = result.messages
    systems = [i for i, m in enumerate(messages) if m.role == "system"]
    request = result.request
    if request is not None:
        instructions = request.instructions
        if instructions and (not systems or _content(result, systems[0]) != instructions):
            where = next((i for i, m in enumerate(messages) if instructions in (m.content or "")), None)
            if where is None:
                text = "the instructions are missing from the request"
            elif messages[where].role == "system":
                text = "the system message carries more than the instructions"
            else:
                text = f"the instructions are in a {messages[where].role} message, not the system message"
            span = (None, None)
            if where is not None:
                start = _content(result, where).find(instructions)
                span = (start, start + len(instructions))
            yield Finding("instructions-placement", "error", text, where, *span,
                          section="instructions", item_id="instructions")
    elif not systems:
        yield Finding("instructions-placement", "warning", "the request has no system message")
    for i in systems[1:]:  # with or without the request it came from (an imported body has none)
        yield Finding("instructions-placement", "error", "a second system message", i,
                      section="instructions", item_id="instructions")
    for i in systems:
        text = _content(result, i)
        if request is not None and request.instructions and text == request.instructions:
            continue  # the instructions as written: their words may name <evidence> blocks, and are trusted
        match = OPENER.search(text)
        if match:
            yield Finding("evidence-in-system", "error", "an evidence block is inside the system message",
                          i, match.start(), match.end(), section="evidence", item_id=_block_id(match.group(0)))
        elif request is not None:
            for passage in request.evidence:
                if len(passage.text) >= 16 and passage.text in text:
                    start = text.find(passage.text)
                    yield Finding("evidence-in-system", "error",
                                  f"the text of passage {passage.id!r} is inside the system message",
                                  i, start, start + len(passage.text), section="evidence", item_id=passage.id)


def _turns(result: AssemblyResult) -> Iterator[Finding]:
    seen_user = False
    for i, m in enumerate(result.messages):
        if m.role == "user":
            seen_user = True
        elif m.role == "assistant" and not seen_user:
            yield Finding("orphan-assistant", "error", "an assistant reply without the user message it answers", i,
                          section="history")


def _tool_pairs(result: AssemblyResult) -> Iterator[Finding]:
    """Each result answers the oldest unanswered call of its id: an id used again (some frameworks number calls
    per turn, ``call_0`` each time) opens another call, and ``duplicate-id`` reports the reuse itself."""
    open_calls: dict[str, list[int]] = {}  # the messages of calls made and not yet answered, by id, oldest first
    for i, m in enumerate(result.messages):
        if m.role == "assistant":
            for call in m.tool_calls:
                open_calls.setdefault(call.id, []).append(i)
        elif m.role == "tool":
            call_id = m.tool_call_id or ""
            waiting = open_calls.get(call_id)
            if waiting:
                waiting.pop(0)
            else:
                yield Finding("tool-result-without-call", "error",
                              f"a result for tool call {call_id!r}, which no earlier assistant message made", i,
                              item_id=call_id)
    for call_id, i in sorted(((c, i) for c, waiting in open_calls.items() for i in waiting), key=lambda c: c[1]):
        yield Finding("tool-call-without-result", "error", f"tool call {call_id!r} has no result", i,
                      item_id=call_id)


@lru_cache(maxsize=256)
def _blocks(text: str) -> tuple[tuple[str, int, int, str | None], ...]:
    """Evidence tags walked: ('block', start, end, id) for well-formed blocks (content span), ('nested', ...)
    for an opener inside an open block and ('stray', ...) for a closer outside one. Kept for the texts of the
    last few audits: the boundary check and the untrusted regions walk the same messages."""
    return _walk_blocks(text)


def _prefix_blocks(text: str, end: int) -> tuple[tuple[str, int, int, str | None], ...]:
    """``_blocks(text[:end])`` from the walk of the whole ``text`` (a message's evidence region is the text before its
    question: the boundary check walks the region, the untrusted regions the whole message). Where the rest holds
    neither ``<`` nor ``>``, no tag starts there or ends there (each is ``<...>``), so the region's tags are the
    whole text's; only a block left open runs to the region's end instead of the text's."""
    if end >= len(text):
        return _blocks(text)
    rest = text[end:]
    if "<" in rest or ">" in rest:
        return _blocks(text[:end])
    blocks = _blocks(text)
    if blocks and blocks[-1][0] == "unclosed":
        kind, start, _, block_id = blocks[-1]
        return blocks[:-1] + ((kind, start, end, block_id),)
    return blocks


def _walk_blocks(text: str) -> tuple[tuple[str, int, int, str | None], ...]:
    first = text.find("<")
    if first < 0:  # every tag opens with "<": none here
        return ()
    out = []
    open_at: tuple[int, str | None] | None = None
    for tag in TAG.finditer(text, first):  # no tag starts before the first "<" (the pattern looks behind nothing)
        spelled = tag.group(0)
        if spelled[1] == "/":  # a closer ("</...", each tag opening with "<")
            if open_at is None:
                out.append(("stray", tag.start(), tag.end(), None))
            else:
                out.append(("block", open_at[0], tag.start(), open_at[1]))
                open_at = None
        else:
            if open_at is not None:
                out.append(("nested", tag.start(), tag.end(), open_at[1]))
            open_at = (tag.end(), _block_id(spelled))
    if open_at is not None:
        out.append(("unclosed", open_at[0], len(text), open_at[1]))
    return tuple(out)


@lru_cache(maxsize=1024)
def _block_id(opener: str) -> str | None:
    match = ID_ATTR.search(opener)
    return unescape(match.group(1)) if match else None


def _evidence_region(role: str, text: str, request) -> str:
    """Where evidence blocks may be. Knowing the request, a user message's own words (a question,
    a history turn) are the user's, not passages: only the blocks before the question are scanned.
    Without it, the whole text is."""
    if role == "system":
        return "" if request is not None and request.instructions and text == request.instructions else text
    if request is None:
        return text
    if not text.startswith(EVIDENCE_PREAMBLE):
        return ""
    suffix = QUESTION_PREFIX + request.current
    return text[:len(text) - len(suffix)] if text.endswith(suffix) else text


def _boundaries(result: AssemblyResult) -> Iterator[Finding]:
    reported: set[tuple[int, str]] = set()
    covered: list[tuple[int, int, int]] = []  # (message, start, end) of passages already reported
    request = result.request
    # the passages whose text holds a literal tag (looked for once, not once per message): few, most often none
    tagged = ([(p, literal) for p in request.evidence if "<" in p.text and (literal := TAG.search(p.text))]
              if request is not None else [])
    for i, m in enumerate(result.messages):
        if m.role not in ("system", "user"):
            continue
        whole = m.content or ""
        text = _evidence_region(m.role, whole, request)  # "", the whole text, or the part of it before the question
        for passage, literal in tagged:
            if passage.text in text and evidence_block(passage) not in text:
                at = text.find(passage.text)
                start = at + literal.start()
                reported.add((i, passage.id))
                covered.append((i, at, at + len(passage.text)))
                yield Finding("unescaped-boundary", "error",
                              f"passage {passage.id!r} carries a literal {literal.group(0)!r} that is not escaped",
                              i, start, start + len(literal.group(0)), section="evidence", item_id=passage.id)
        for kind, start, end, block_id in _prefix_blocks(whole, len(text)) if text else ():
            if kind == "block" or (i, block_id or "") in reported:
                continue
            if any(ci == i and cs <= start < ce for ci, cs, ce in covered):
                continue
            what = {"stray": "a closing </evidence> outside any block",
                    "nested": "an evidence block opened inside another",
                    "unclosed": "an evidence block that is never closed"}[kind]
            yield Finding("unescaped-boundary", "error", what, i, start, end, section="evidence", item_id=block_id)


def _duplicates(result: AssemblyResult) -> Iterator[Finding]:
    seen_calls: set[str] = set()
    seen_blocks: set[str] = set()
    for i, m in enumerate(result.messages):
        for call in m.tool_calls:
            if call.id in seen_calls:
                yield Finding("duplicate-id", "error", f"tool call id {call.id!r} is used twice", i, item_id=call.id)
            seen_calls.add(call.id)
        text = m.content or ""
        for opener in OPENER.finditer(text, text.find("<")) if "<" in text else ():
            block_id = _block_id(opener.group(0))
            if block_id is None:
                continue
            if block_id in seen_blocks:
                yield Finding("duplicate-id", "error", f"evidence id {block_id!r} appears twice", i,
                              opener.start(), opener.end(), section="evidence", item_id=block_id)
            seen_blocks.add(block_id)


def _tool_calls(result: AssemblyResult) -> Iterator[Finding]:
    offered = {t.name for t in result.tools}
    for i, m in enumerate(result.messages):
        for call in m.tool_calls:
            if call.raw_arguments is not None:
                yield Finding("invalid-tool-arguments", "error",
                              f"tool call {call.id!r} ({call.name}) has arguments that are not a JSON object: "
                              f"{call.raw_arguments[:60]!r}", i, item_id=call.id)
            if offered and call.name not in offered:
                yield Finding("unknown-tool", "warning",
                              f"tool call {call.id!r} calls {call.name!r}, which the request does not offer "
                              f"(offered: {', '.join(sorted(offered))})", i, item_id=call.id)


def _finish(result: AssemblyResult) -> Iterator[Finding]:
    reason = (result.model_extra or {}).get("finish_reason")
    if reason in LENGTH_FINISH_REASONS:
        yield Finding("truncated-answer", "warning",
                      f"the recorded answer was cut off at the output limit (finish_reason {reason!r}, "
                      f"max_new_tokens {result.max_new_tokens})")


def _untrusted_regions(result: AssemblyResult) -> Iterator[tuple[int, str, int, int, str | None, str]]:
    """(message index, text, start, end, evidence id, what) of each untrusted region: tool results, evidence."""
    for i, m in enumerate(result.messages):
        text = m.content or ""
        if m.role == "tool":
            regions = [(0, len(text), None, "tool result")]
        elif m.role in ("user", "system"):
            regions = [(s, e, bid, "evidence passage") for kind, s, e, bid in _blocks(text) if kind == "block"]
        else:
            continue
        for start, end, block_id, what in regions:
            yield i, text, start, end, block_id, what


