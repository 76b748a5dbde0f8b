"""Which calls are one conversation, and what changed from one call to the next.

Same conversation: two calls that record the same explicit conversation id (``gen_ai.conversation.id``,
a transcript's session), or, where no such id is recorded, two calls of one trace (the same trace id, or
both without one) whose message lists begin with the same message (role, text, tool calls and tool-call
id all equal). A call's predecessor is the earlier call of its conversation with which it shares the
longest run of leading messages; among equals, the latest one under the same parent span, else the
latest one. A call with a conversation id that shares no leading message with an earlier call of that
conversation (its history replaced whole) continues the latest of them; without an id, such a call
starts a conversation of its own.

The diff of a call against its predecessor: the leading messages both sent unchanged, then the rest of
each aligned by content (``difflib``). New messages at the end are *appended*, new ones before kept ones
*inserted*; earlier messages the later call no longer sends are *removed*; a run of several earlier
messages replaced by fewer is *compacted* (a summary in their place); a message replaced one for one by a
message of the same role is *rewritten*. Tool definitions that were added, dropped or changed are one
``tools`` change. Every change carries the text tokens of what it names (its messages' own text and
tool calls, without the template's role markers).
"""
from __future__ import annotations

import difflib
import json
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..counting import TokenCounter
from .model import APPENDED, COMPACTED, INSERTED, REMOVED, REWRITTEN, TOOLS, Change, CallDiff


def message_key(m: ChatMessage) -> tuple:
    calls = tuple((c.id, c.name, json.dumps(c.arguments, sort_keys=True, ensure_ascii=False), c.raw_arguments)
                  for c in m.tool_calls)
    return (m.role, m.content, m.tool_call_id, calls)


def message_text(m: ChatMessage) -> str:
    """What of a message is its own text: content, then each tool call as ``name {arguments}``."""
    parts = [m.content or ""]
    for c in m.tool_calls:
        parts.append(f"{c.name} {c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments, ensure_ascii=False)}")
    return "\n".join(p for p in parts if p)


def tool_text(t: ToolDefinition) -> str:
    return json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters},
                      sort_keys=True, ensure_ascii=False)


def preview(m: ChatMessage, width: int = 72) -> str:
    text = " ".join(message_text(m).split())
    return text if len(text) <= width else text[:width - 1] + "…"


class Interner:
    """Message keys as small integers, and each distinct message's own text tokens, once per session."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._ids: dict[tuple, int] = {}
        self.tokens: list[int] = []

    def ids(self, messages: Sequence[ChatMessage]) -> list[int]:
        out = []
        for m in messages:
            key = message_key(m)
            found = self._ids.get(key)
            if found is None:
                found = self._ids[key] = len(self.tokens)
                self.tokens.append(self.counter.text_count(message_text(m)))
            out.append(found)
        return out


class Predecessors:
    """The trie of every earlier call's message keys, per trace, to find a call's predecessor in one walk."""

    def __init__(self) -> None:
        self._children: dict[tuple[int, int], int] = {}
        self._latest: list[int] = []                    # node -> latest call through it
        self._by_parent: list[dict[str | None, int]] = []  # node -> parent span -> latest call through it
        self._roots: dict[tuple[bool, str | None], int] = {}
        self._last: dict[str, int] = {}  # conversation id -> latest call

    def _node(self) -> int:
        self._latest.append(-1)
        self._by_parent.append({})
        return len(self._latest) - 1

    def add(self, call: int, conversation: str | None, trace: str | None, parent: str | None,
            keys: Sequence[int]) -> int | None:
        """Record ``call`` and return its predecessor (``None``: it starts a conversation)."""
        scope = (True, conversation) if conversation is not None else (False, trace)
        root = self._roots.get(scope)
        if root is None:
            root = self._roots[scope] = self._node()
        node, deepest = root, None
        for key in keys:
            child = self._children.get((node, key))
            if child is None:
                break
            node = deepest = child
        found: int | None = None
        if deepest is not None:
            found = self._by_parent[deepest].get(parent, self._latest[deepest]) if parent else self._latest[deepest]
        elif conversation is not None:
            found = self._last.get(conversation)
        node = root
        for key in keys:
            child = self._children.get((node, key))
            if child is None:
                child = self._children[(node, key)] = self._node()
            node = child
            self._latest[node] = call
            self._by_parent[node][parent] = call
        if conversation is not None:
            self._last[conversation] = call
        return found


def _roles(messages: Sequence[ChatMessage], indices: range) -> str:
    roles = [messages[i].role for i in indices]
    if len(roles) <= 4:
        return ", ".join(roles)
    return f"{len(roles)} messages: " + ", ".join(sorted(set(roles), key=roles.index))


def diff_calls(earlier: int, later: int, before: Sequence[ChatMessage], after: Sequence[ChatMessage],
               keys_before: Sequence[int], keys_after: Sequence[int], interner: Interner,
               tools_before: Sequence[ToolDefinition], tools_after: Sequence[ToolDefinition],
               prefix_tokens: int | None) -> CallDiff:
    """What changed from ``before`` (call ``earlier``) to ``after`` (call ``later``)."""
    lead = 0
    while lead < min(len(keys_before), len(keys_after)) and keys_before[lead] == keys_after[lead]:
        lead += 1
    diff = CallDiff(earlier, later, prefix_tokens, lead)
    tail_b, tail_a = keys_before[lead:], keys_after[lead:]
    opcodes = difflib.SequenceMatcher(None, tail_b, tail_a, autojunk=False).get_opcodes()
    tok = interner.tokens

    def change(kind: str, b: range, a: range, detail: str = "") -> Change:
        shown = after[a[0]] if len(a) else before[b[0]]
        roles = _roles(after, a) if len(a) else _roles(before, b)
        if kind in (COMPACTED, REWRITTEN):
            roles = f"{_roles(before, b)} -> {_roles(after, a)}"
        return Change(kind, list(b), list(a), sum(tok[keys_before[i]] for i in b),
                      sum(tok[keys_after[i]] for i in a), roles, preview(shown), detail,
                      preview(before[b[0]]) if len(b) else "")

    for tag, i1, i2, j1, j2 in opcodes:
        b, a = range(lead + i1, lead + i2), range(lead + j1, lead + j2)
        if tag == "equal":
            continue
        if tag == "insert":
            diff.changes.append(change(APPENDED if j2 == len(tail_a) and i1 == len(tail_b) else INSERTED, b, a))
        elif tag == "delete":
            diff.changes.append(change(REMOVED, b, a))
        elif len(b) > len(a) >= 1 and len(b) >= 2:
            diff.changes.append(change(COMPACTED, b, a, f"{len(b)} messages replaced by {len(a)}"))
        elif len(b) == len(a) and all(before[x].role == after[y].role for x, y in zip(b, a)):
            diff.changes += [change(REWRITTEN, range(x, x + 1), range(y, y + 1)) for x, y in zip(b, a)]
        else:
            diff.changes.append(change(REMOVED, b, range(0)))
            diff.changes.append(change(APPENDED if j2 == len(tail_a) else INSERTED, range(0), a))
    tools = _tool_change(tools_before, tools_after, interner.counter)
    if tools is not None:
        diff.changes.append(tools)
    return diff


def _tool_change(before: Sequence[ToolDefinition], after: Sequence[ToolDefinition],
                 counter: TokenCounter) -> Change | None:
    old = {t.name: tool_text(t) for t in before}
    new = {t.name: tool_text(t) for t in after}
    if list(old.items()) == list(new.items()):
        return None
    added = [n for n in new if n not in old]
    dropped = [n for n in old if n not in new]
    changed = [n for n in new if n in old and old[n] != new[n]]
    parts = [f"{label}: {', '.join(names)}" for label, names in (("added", added), ("dropped", dropped),
                                                                ("changed", changed)) if names]
    detail = "; ".join(parts) or "reordered"
    return Change(TOOLS, [], [], sum(counter.text_count(old[n]) for n in dropped + changed),
                  sum(counter.text_count(new[n]) for n in added + changed), "tools", ", ".join(new), detail,
                  ", ".join(old))
