"""The conversation up to a Claude Code transcript line, built once per line that ends a call's input
and extended from the nearest such line above it: a session of n turns costs about n line reads and
n list copies, not n*n reads (a 1,500-turn session held 2.25 million input messages in all)."""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..model import ImportNote
from ..normalise import Context, Draft, Malformed, drafts_from, read_parts
from . import kind_of, message_of


class Line:
    __slots__ = ("number", "value", "uuid", "parent", "place", "kind", "message", "message_id")

    def __init__(self, number: int | None, value: dict[str, Any]):
        self.number = number
        self.value = value
        self.place = f"line {number}" if number is not None else "top level"
        uuid, parent = value.get("uuid"), value.get("parentUuid")
        self.uuid = uuid if isinstance(uuid, str) else None
        self.parent = parent if isinstance(parent, str) else None
        self.kind = str(value.get("type"))
        message = value.get("message")
        self.message = message if isinstance(message, dict) and self.kind in ("user", "assistant") else None
        ident = (self.message or {}).get("id")
        self.message_id = ident if isinstance(ident, str) else f"uuid:{self.uuid or number}"

    def synthetic(self) -> bool:
        return (self.message or {}).get("model") == "<synthetic>" or bool(self.value.get("isApiErrorMessage"))


def assistant_draft(lines: list[Line], ctx: Context) -> Draft:
    """One assistant message from the lines of one response (a line per content block)."""
    texts: list[str] = []
    calls = []
    for line in lines:
        parts = read_parts((line.message or {}).get("content"), f"{line.place}.message.content", ctx)
        texts += parts.texts
        calls += parts.calls
    return Draft("assistant", "\n".join(texts) if texts else None, lines[0].place, tool_calls=calls)


class State:
    """Drafts, notes and placeholder tally of a chain so far; the assistant lines of a response still
    open (more lines of it may follow) are kept apart until the run ends."""

    def __init__(self) -> None:
        self.drafts: list[Draft] = []
        self.messages: list[Any] = []  # the drafts' messages, built once
        self.places: list[str] = []
        self.kinds: list[str] = []
        self.warnings: list[ImportNote] = []
        self.placeholders: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.run: list[Line] = []
        self.error: Malformed | None = None

    def copy(self) -> "State":
        other = State()
        other.drafts, other.messages, other.warnings = list(self.drafts), list(self.messages), list(self.warnings)
        other.places, other.kinds = list(self.places), list(self.kinds)
        other.placeholders, other.skipped = Counter(self.placeholders), Counter(self.skipped)
        other.run, other.error = list(self.run), self.error
        return other

    def _read(self, lines: list[Line]) -> None:
        ctx = Context()
        count = len(self.drafts)
        line = lines[0]
        try:
            if line.kind == "assistant":
                if line.synthetic():
                    ctx.warn(line.place, "an assistant line Claude Code wrote itself (model <synthetic>) is not "
                                         "sent to the model; left out")
                else:
                    self.drafts.append(assistant_draft(lines, ctx))
            else:
                message = line.message or {}
                if line.value.get("isCompactSummary"):
                    ctx.warn(line.place, "the compaction summary stands in for the earlier conversation")
                role = message.get("role") if message.get("role") in ("user", "assistant") else "user"
                self.drafts += drafts_from(role, read_parts(message.get("content"), f"{line.place}.message.content",
                                                            ctx), line.place, ctx)
        except Malformed as exc:
            self.error = self.error or exc
        self.messages += [message_of(d) for d in self.drafts[count:]]
        self.places += [d.place for d in self.drafts[count:]]
        self.kinds += [kind_of(m) for m in self.messages[len(self.kinds):]]
        self.warnings += ctx.warnings
        self.placeholders.update(ctx.placeholders)

    def close(self) -> None:
        if self.run:
            run, self.run = self.run, []
            self._read(run)

    def push(self, line: Line) -> None:
        if line.message is None:
            self.close()
            subtype = line.value.get("subtype")
            self.skipped[f"{line.kind}{'/' + subtype if isinstance(subtype, str) else ''}"] += 1
            if subtype == "compact_boundary":
                self.warnings.append(ImportNote(line.place, "the conversation was compacted here: the input starts "
                                                            "from the summary Claude Code wrote in its place"))
        elif line.kind == "assistant":
            if self.run and self.run[-1].message_id != line.message_id:
                self.close()
            self.run.append(line)
        else:
            self.close()
            self._read([line])


class Chains:
    """States at the lines that end some call's input, each built from the nearest one above it."""

    def __init__(self, by_uuid: dict[str, Line]):
        self.by_uuid = by_uuid
        self._states: dict[int, State] = {}

    def before(self, first: Line) -> State:
        """The conversation before ``first`` in its chain (a closed copy: the caller may keep it)."""
        parent = self.by_uuid.get(first.parent) if first.parent else None
        if parent is None:
            state = State()
            if first.parent is not None:
                state.warnings.append(ImportNote(first.place, f"the chain reaches parentUuid {first.parent}, which "
                                                              "is not in this file: earlier conversation missing"))
            return state
        state = self._at(parent).copy()
        state.close()
        return state

    def _at(self, end: Line) -> State:
        path: list[Line] = []
        seen: set[int] = set()
        line: Line | None = end
        base: State | None = None
        while line is not None:
            if id(line) in self._states:
                base = self._states[id(line)]
                break
            if id(line) in seen:
                base = State()
                base.warnings.append(ImportNote(line.place, "parentUuid links form a loop; the chain is cut here"))
                path.pop()
                break
            seen.add(id(line))
            path.append(line)
            if line.parent is not None and line.parent not in self.by_uuid:
                base = State()
                base.warnings.append(ImportNote(line.place, f"the chain reaches parentUuid {line.parent}, which is "
                                                            "not in this file: earlier conversation missing"))
                break
            line = self.by_uuid.get(line.parent) if line.parent else None
        state = base.copy() if base is not None else State()
        for line in reversed(path):
            state.push(line)
        self._states[id(end)] = state
        return state
