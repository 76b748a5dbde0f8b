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
from ..normalise import Context, Draft, Malformed, Outcome, as_int, drafts_from, finish, read_parts, shown_names
from . import CLAUDE_CODE

RECONSTRUCTED = ("reconstructed from a Claude Code transcript: the input is the conversation before this turn in "
                 "its chain; the system prompt and tool definitions Claude Code sent are not recorded, so the "
                 "provider's input-token figure includes tokens this request lacks")


class _Line:
    __slots__ = ("number", "value", "uuid", "parent", "place")

    def __init__(self, number: int | None, value: dict[str, Any]):
        self.number = number
        self.value = value
        self.place = f"line {number}" if number is not None else "top level"
        uuid, parent = value.get("uuid"), value.get("parentUuid")
        self.uuid = uuid if isinstance(uuid, str) else None
        self.parent = parent if isinstance(parent, str) else None

    @property
    def kind(self) -> str:
        return str(self.value.get("type"))

    @property
    def message(self) -> dict[str, Any] | None:
        message = self.value.get("message")
        return message if isinstance(message, dict) and self.kind in ("user", "assistant") else None

    def message_id(self) -> str:
        message = self.message or {}
        ident = message.get("id")
        return ident if isinstance(ident, str) else f"uuid:{self.uuid or self.number}"

    def synthetic(self) -> bool:
        message = self.message or {}
        return message.get("model") == "<synthetic>" or bool(self.value.get("isApiErrorMessage"))


def import_claude_code(records: list[tuple[int | None, Any]]) -> Outcome:
    out = Outcome()
    lines: list[_Line] = []
    for number, value in records:
        if not isinstance(value, dict):
            raise Malformed(f"line {number}", f"a transcript line must be an object, found {type(value).__name__}")
        line = _Line(number, value)
        if line.kind in ("user", "assistant") and not isinstance(value.get("message"), dict):
            raise Malformed(f"{line.place}.message", f"a {line.kind} line needs a message object")
        lines.append(line)
    by_uuid = {line.uuid: line for line in lines if line.uuid}
    other = Counter(line.kind for line in lines if line.message is None)
    if other:
        out.warnings.append(ImportNote("", "lines that are not messages were not read as conversation: " + ", ".join(
            f"{n} {k}" for k, n in other.most_common())))
    for line in lines:
        if line.kind == "summary" and isinstance(line.value.get("summary"), str):
            out.warnings.append(ImportNote(line.place, f"session summary {line.value['summary'][:60]!r} (a title "
                                                       "Claude Code shows; not sent to the model)"))
    turns: list[list[_Line]] = []
    for line in lines:
        if line.kind != "assistant":
            continue
        parent = by_uuid.get(line.parent) if line.parent else None
        if parent is not None and parent.kind == "assistant" and parent.message_id() == line.message_id() and turns \
                and parent in turns[-1]:
            turns[-1].append(line)
        elif turns and turns[-1][-1].message_id() == line.message_id() and line.parent == turns[-1][-1].uuid:
            turns[-1].append(line)
        else:
            turns.append([line])
    synthetic = [t[0].place for t in turns if t[0].synthetic()]
    if synthetic:
        out.warnings.append(ImportNote("", f"{len(synthetic)} assistant line(s) were written by Claude Code itself "
                                           f"(an API error or refusal, model <synthetic>), not by a model call: "
                                           f"{shown_names(synthetic)}"))
    number = 0
    for turn in turns:
        if turn[0].synthetic():
            continue
        number += 1
        try:
            out.requests.append(_call(turn, by_uuid, number))
        except Malformed as exc:
            out.fail(exc, "assistant turn")
    return out


def _chain(first: _Line, by_uuid: dict[str, _Line], ctx: Context) -> list[_Line]:
    chain: list[_Line] = []
    seen: set[str] = set()
    parent = first.parent
    while parent is not None:
        line = by_uuid.get(parent)
        if line is None:
            ctx.warn(first.place, f"the chain reaches parentUuid {parent}, which is not in this file: the input "
                                  "starts after it (earlier conversation missing)")
            break
        if parent in seen:
            ctx.warn(line.place, "parentUuid links form a loop; the chain is cut here")
            break
        seen.add(parent)
        chain.append(line)
        parent = line.parent
    chain.reverse()
    return chain


def _assistant_parts(lines: list[_Line], ctx: Context) -> Draft:
    texts: list[str] = []
    calls = []
    for line in lines:
        message = line.message or {}
        parts = read_parts(message.get("content"), f"{line.place}.message.content", ctx)
        texts += parts.texts
        calls += parts.calls
    return Draft("assistant", "\n".join(texts) if texts else None, lines[0].place, tool_calls=calls)


def _call(turn: list[_Line], by_uuid: dict[str, _Line], number: int) -> ImportedRequest:
    ctx = Context()
    first, last = turn[0], turn[-1]
    chain = _chain(first, by_uuid, ctx)
    drafts: list[Draft] = []
    skipped: Counter[str] = Counter()
    i = 0
    while i < len(chain):
        line = chain[i]
        message = line.message
        if message is None:
            subtype = line.value.get("subtype")
            skipped[f"{line.kind}{'/' + subtype if isinstance(subtype, str) else ''}"] += 1
            if subtype == "compact_boundary":
                ctx.warn(line.place, "the conversation was compacted here: the input starts from the summary "
                                     "Claude Code wrote in place of the earlier conversation")
            i += 1
            continue
        if line.kind == "assistant":
            group = [line]
            while i + 1 < len(chain) and chain[i + 1].kind == "assistant" \
                    and chain[i + 1].message_id() == line.message_id():
                i += 1
                group.append(chain[i])
            if line.synthetic():
                ctx.warn(line.place, "an assistant line Claude Code wrote itself (model <synthetic>) is not sent "
                                     "to the model; left out")
            else:
                drafts.append(_assistant_parts(group, ctx))
        else:
            if line.value.get("isCompactSummary"):
                ctx.warn(line.place, "the compaction summary stands in for the earlier conversation")
            role = message.get("role") if message.get("role") in ("user", "assistant") else "user"
            drafts += drafts_from(role, read_parts(message.get("content"), f"{line.place}.message.content", ctx),
                                  line.place, ctx)
        i += 1
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
                        reconstructed=True)
    try:
        answer = _assistant_parts(turn, Context())
        output = [ChatMessage(role="assistant", content=answer.content, tool_calls=answer.tool_calls)]
    except Malformed as exc:
        ctx.warn(exc.place, f"the recorded answer is not read: {exc.problem}")
        output = []
    return finish(label, drafts, [], recorded, ctx, output=output)
