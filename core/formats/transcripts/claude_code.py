"""Claude Code transcripts: one JSON object per line, ``user`` and ``assistant`` lines holding an
Anthropic message, linked by ``parentUuid``; sub-agent conversations are ``isSidechain`` chains of
their own; a compaction starts a new chain (``compact_boundary``, then an ``isCompactSummary`` user line).

One response is often written as several assistant lines (a line per content block) sharing
``message.id``: they are one assistant turn, so one model call.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ...contracts import ChatMessage
from ..anthropic import input_tokens
from ..model import ImportedRequest, ImportNote, Recorded
from ..normalise import Context, Malformed, Outcome, as_int, shown_names
from . import CLAUDE_CODE, Shared
from .claude_chain import Chains, Line, assistant_draft

RECONSTRUCTED = ("reconstructed from a Claude Code transcript: the input is the conversation before this turn in "
                 "its chain; the system prompt and tool definitions Claude Code sent are not recorded, so the "
                 "provider's input-token figure includes tokens this request lacks")


def import_claude_code(records: list[tuple[int | None, Any]]) -> Outcome:
    out = Outcome()
    lines: list[Line] = []
    for number, value in records:
        if not isinstance(value, dict):
            raise Malformed(f"line {number}", f"a transcript line must be an object, found {type(value).__name__}")
        line = Line(number, value)
        if line.kind in ("user", "assistant") and not isinstance(value.get("message"), dict):
            raise Malformed(f"{line.place}.message", f"a {line.kind} line needs a message object")
        lines.append(line)
    by_uuid = {line.uuid: line for line in lines if line.uuid}
    repeated = Counter(line.uuid for line in lines if line.uuid)
    repeated = Counter({k: n for k, n in repeated.items() if n > 1})
    if repeated:
        out.warnings.append(ImportNote("", f"{sum(repeated.values())} lines share a uuid with another line ("
                                           f"{shown_names(list(repeated), 3)}): a chain through one follows the "
                                           "last line with that uuid"))
    other = Counter(line.kind for line in lines if line.message is None)
    if other:
        out.warnings.append(ImportNote("", "lines that are not messages were not read as conversation: " + ", ".join(
            f"{n} {k}" for k, n in other.most_common())))
    for line in lines:
        if line.kind == "summary" and isinstance(line.value.get("summary"), str):
            out.warnings.append(ImportNote(line.place, f"session summary {line.value['summary'][:60]!r} (a title "
                                                       "Claude Code shows; not sent to the model)"))
    turns: list[list[Line]] = []
    for line in lines:
        if line.kind != "assistant":
            continue
        parent = by_uuid.get(line.parent) if line.parent else None
        if parent is not None and parent.kind == "assistant" and parent.message_id == line.message_id and turns \
                and parent in turns[-1] and parent.synthetic() == line.synthetic():
            turns[-1].append(line)
        elif turns and turns[-1][-1].message_id == line.message_id and line.parent == turns[-1][-1].uuid \
                and turns[-1][-1].synthetic() == line.synthetic():
            turns[-1].append(line)
        else:
            turns.append([line])
    synthetic = [t[0].place for t in turns if t[0].synthetic()]
    if synthetic:
        out.warnings.append(ImportNote("", f"{len(synthetic)} assistant line(s) were written by Claude Code itself "
                                           f"(an API error or refusal, model <synthetic>), not by a model call: "
                                           f"{shown_names(synthetic)}"))
    number = 0
    chains, shared = Chains(by_uuid), Shared()
    for turn in turns:
        if turn[0].synthetic():
            continue
        number += 1
        try:
            out.requests.append(_call(turn, chains, number, shared))
        except Malformed as exc:
            out.fail(exc, "assistant turn")
    return out


def _call(turn: list[Line], chains: Chains, number: int, shared: Shared) -> ImportedRequest:
    ctx = Context()
    first, last = turn[0], turn[-1]
    state = chains.before(first)
    if state.error is not None:
        raise state.error
    drafts, skipped = state.drafts, state.skipped
    if not drafts:
        raise Malformed(first.place, "this assistant turn has no conversation before it in the file (its "
                                     "parentUuid chain holds no message)")
    if skipped:
        ctx.warn(first.place, "lines in this turn's chain that are not messages were left out: " + ", ".join(
            f"{n} {k}" for k, n in skipped.most_common()))
    side = bool(first.value.get("isSidechain"))
    if side:
        ctx.warn(first.place, "a sidechain: a sub-agent's conversation (started by a Task tool call), with its "
                              "own context")
    ctx.warn(first.place, RECONSTRUCTED)
    message = last.message or {}
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    model = message.get("model") if isinstance(message.get("model"), str) else None
    stamp = first.value.get("timestamp")
    session = first.value.get("sessionId")
    label = f"turn {number} ({first.place}{', sidechain' if side else ''})"
    recorded = Recorded(format=CLAUDE_CODE, model=model, provider="anthropic", name=label,
                        source_place=first.place, input_tokens=input_tokens(usage),
                        output_tokens=as_int(usage.get("output_tokens")),
                        cached_input_tokens=as_int(usage.get("cache_read_input_tokens")),
                        cache_write_tokens=as_int(usage.get("cache_creation_input_tokens")),
                        finish_reason=message.get("stop_reason") if isinstance(message.get("stop_reason"), str)
                        else None,
                        started_at=stamp if isinstance(stamp, str) else None, entry_id=first.uuid,
                        parent_id=first.parent, session_id=session if isinstance(session, str) else None,
                        reconstructed=True,
                        # the main chain is one conversation through its compactions; a sidechain is its own
                        conversation_id=session if isinstance(session, str) and not side else None)
    try:
        answer = assistant_draft(turn, Context())
        output = [ChatMessage(role="assistant", content=answer.content, tool_calls=answer.tool_calls)]
    except Malformed as exc:
        ctx.warn(exc.place, f"the recorded answer is not read: {exc.problem}")
        output = []
    return shared.request(label, drafts, recorded, state.warnings + ctx.warnings, dict(state.placeholders), output,
                          messages=state.messages, places=state.places, kinds="".join(state.kinds))
