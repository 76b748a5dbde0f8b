"""Shapes for history turns that carry tool calls, under counters whose tokenizer splits text at added tokens.

A turn with tool calls renders through the template's own code for calls and results (Qwen3 writes each call
as ``<tool_call>\\n{"name": ..., "arguments": <JSON>}\\n</tool_call>`` and each result inside
``<tool_response>``), so the plain shapes of ``core.assembly_fast`` (roles and edge whitespace) cannot say
what it adds. Here a turn's shape is its structure: each message's role, whether it holds text and the
whitespace at its edges, each call's name, argument keys and id length, and which call of the turn each
result answers. A turn whose ids are mentioned outside it (a result answering another turn's call, a call id
used twice) has no shape: templates that compare ids (Gemma 4 resolves a result's tool name from the call
whose id it holds) make such a turn's cost depend on the others.

One member of a shape (the representative) has its probe request rendered as text. Each of the turn's values
(a message's text, a call's non-empty arguments as ``json.dumps`` writes them, a call's id) must stand in that
text exactly once, or not at all where the template writes none of it (an id; or a value whose change leaves
the render as it was: Phi-3.5 leaves calls and results out), else the next member is tried and after three
the shape has none. The text between the boundary tokens either side of a value (added tokens the tokenizer
splits text at wherever they stand: ``<|im_start|>``, ``<tool_call>``...; less the whitespace a token strips
beside it) is a *run* with the value as a slot. The tokenizer encodes the text between two boundary tokens on its own, so the rendered
probe's count is the boundary tokens plus each run's text count (checked on the representative); another
member renders the same runs with its own values in the slots. What a member adds is then the text count of
its runs plus a constant (the representative's probe delta minus its runs), checked on two more members by
their probes as ``FastBuilder._constant`` checks its constants. Any disagreement: no constant, the turns of
that shape are probed through the template one by one, as before.
"""
from __future__ import annotations

import json
import re
from collections import Counter

from .render import Selection, render
from .text_edges import MAX_EDGE, edges

TOOL_TURN = "tool turn"
RUNS = "tool turn runs"  # the key, beside a shape, of its representative's runs in the builder's constants
_TRIES = 3  # members tried as the representative of a shape


class ToolTurns:
    """Tool-call turn shapes of one assembly (``builder``: the ``FastBuilder``)."""

    def __init__(self, builder) -> None:
        self.b = builder
        counter = builder.counter
        method = getattr(counter, "boundary_tokens", None)
        self._strips: dict[str, tuple[bool, bool]] = method() if callable(method) else {}
        spellings = sorted(self._strips, key=lambda s: (-len(s), s))
        self._split = re.compile("|".join(map(re.escape, spellings))) if spellings else None
        self._refs: Counter | None = None
        self._pieces: dict[int, list[tuple]] = {}

    def enabled(self) -> bool:
        return self._split is not None

    # ---- shapes

    def _id_refs(self) -> Counter:
        """How often each id is mentioned in the request: calls and results, history and current turn."""
        if self._refs is None:
            refs: Counter = Counter()
            for m in self.b.request.history:
                refs.update(c.id for c in m.tool_calls)
                if m.tool_call_id is not None:
                    refs[m.tool_call_id] += 1
            for x in self.b.request.tool_exchanges:
                refs.update(c.id for c in x.calls)
                refs.update(r.tool_call_id for r in x.results)
            self._refs = refs
        return self._refs

    def shape(self, turn) -> tuple | None:
        """The shape of a turn with tool calls or results, or None where none can be learned."""
        if self._split is None:
            return None
        calls = [c.id for m in turn for c in m.tool_calls]
        if len(set(calls)) != len(calls):
            return None
        local = Counter(calls) + Counter(m.tool_call_id for m in turn if m.tool_call_id is not None)
        refs = self._id_refs()
        if any(refs[i] != n for i, n in local.items()):  # an id this turn shares with another part of the request
            return None
        key = []
        for m in turn:
            text = m.content or ""
            lead, trail = edges(text)
            if len(lead) > MAX_EDGE or len(trail) > MAX_EDGE:
                return None
            item: tuple = (m.role, bool(text), lead, trail)
            if m.tool_calls:
                item += (tuple((c.name, tuple(c.arguments), len(c.id)) for c in m.tool_calls),)
            if m.role == "tool":
                item += (calls.index(m.tool_call_id) if m.tool_call_id in calls else None,)
            key.append(item)
        pieces = self._turn_pieces(turn)
        if any(self.b.counter.holds_untrusted_spelling(value) for _, value, _ in pieces):
            return None  # a value that reads as a marker token would move the boundaries
        # how a template that writes a value as JSON (Llama 3.1: a tool result ``| tojson``) would change it: a
        # member whose values it escapes where the representative's it leaves alone is not written alike
        key.append(tuple(_escaped(value) for written, value, _ in pieces if written))
        return (TOOL_TURN, tuple(key))

    def _turn_pieces(self, turn) -> list[tuple]:
        """The turn's values in a fixed order: (whether it must be written or shown not to be (an id need not
        be), the value as the template would write it, where it is: (message, None: its text, n: call n's
        arguments))."""
        known = self._pieces.get(id(turn))  # the request's turn lists live as long as the assembly
        if known is not None:
            return known
        pieces = self._pieces[id(turn)] = []
        for j, m in enumerate(turn):
            if m.content:
                pieces.append((True, m.content, (j, None)))
            for n, c in enumerate(m.tool_calls):
                if c.arguments:
                    pieces.append((True, json.dumps(c.arguments, ensure_ascii=False), (j, n)))
                pieces.append((False, c.id, None))
        return pieces

    def pieces(self, index: int) -> list[tuple]:
        return self._turn_pieces(self.b.turns[index])

    # ---- the runs of one member, and the constant of a shape

    def _skeleton(self, index: int) -> list | None:
        """The runs of turn ``index``'s rendered probe that hold its values: each a list of literal strings
        and piece numbers; None when a value is not written once verbatim or the count is not the runs'."""
        b, counter = self.b, self.b.counter
        selection = Selection(question=True, turns=(index,))
        rendered = render(b.request, selection)
        try:
            text = counter.render_text(rendered.messages, rendered.tools)
        except Exception:  # noqa: BLE001 - a template that refuses it: no shape
            return None
        slots, absent = [], []
        pieces = self.pieces(index)
        outside = [m.content for m, origin in zip(rendered.messages, rendered.origins)
                   if origin[0] != "history" and m.content] + [json.dumps(t.model_dump(), ensure_ascii=False)
                                                               for t in rendered.tools]
        for k, (required, value, where) in enumerate(pieces):
            if any(value in other for other in outside) or any(
                    value in other for j, (written, other, _) in enumerate(pieces) if j != k and written):
                return None  # where the template writes it cannot be told from where another text stands (an id
                # the template never writes found once inside the question; ids inside ids count twice: no shape)
            found = text.count(value)
            if found == 0 and required:
                absent.append(where)
            elif found > 1 or (found == 0 and required):
                return None
            elif found:
                start = text.index(value)
                slots.append((start, start + len(value), k))
        if absent and not self._unwritten(rendered, absent, text):
            return None
        slots.sort()
        if any(a[1] > z[0] for a, z in zip(slots, slots[1:])):
            return None
        runs, marks = self._runs(text)
        total = marks + sum(counter.text_count(text[a:z]) for a, z in runs if z > a)
        if total != b.probe(selection):  # the tokenizer does not encode these runs on their own
            return None
        skeleton = []
        for a, z in runs:
            inside = [s for s in slots if a <= s[0] and s[1] <= z]
            if not inside:
                continue
            parts, at = [], a
            for start, end, k in inside:
                parts += [text[at:start], k]
                at = end
            parts.append(text[at:z])
            skeleton.append(parts)
        if sum(1 for parts in skeleton for p in parts if isinstance(p, int)) != len(slots):
            return None  # a value across a boundary token
        return skeleton

    def _unwritten(self, rendered, absent: list[tuple], text: str) -> bool:
        """Whether the template writes nothing of the values at ``absent`` (Phi-3.5 leaves tool calls and
        results out): the probe renders to the same text with each of them changed."""
        first = next(i for i, origin in enumerate(rendered.origins) if origin[0] == "history")
        messages = list(rendered.messages)
        for j, n in absent:
            m = messages[first + j]
            if n is None:
                messages[first + j] = m.model_copy(update={"content": m.content + " Zq"})
            else:
                calls = list(m.tool_calls)
                calls[n] = calls[n].model_copy(update={"arguments": {"zq": [1, "Zq"]}})
                messages[first + j] = m.model_copy(update={"tool_calls": calls})
        try:
            return self.b.counter.render_text(messages, rendered.tools) == text
        except Exception:  # noqa: BLE001 - a template that refuses the changed turn: not shown
            return False

    def _runs(self, text: str) -> tuple[list[tuple[int, int]], int]:
        """The spans of ``text`` between consecutive boundary tokens (less the whitespace a token strips
        beside it), and how many boundary tokens it holds."""
        edges, strips = [0], self._strips
        found = list(self._split.finditer(text))
        for m in found:
            left, right = strips[m.group()]
            end = m.start()
            if left:
                end = len(text[:end].rstrip()) if end > edges[-1] else end
            edges.append(max(end, edges[-1]))
            start = m.end()
            if right:
                start += len(text[start:]) - len(text[start:].lstrip())
            edges.append(start)
        edges.append(len(text))
        return [(a, max(a, z)) for a, z in zip(edges[0::2], edges[1::2])], len(found)

    def _runs_tokens(self, skeleton: list, index: int) -> int:
        pieces = self.pieces(index)
        return sum(self.b.counter.text_count("".join(p if isinstance(p, str) else pieces[p][1] for p in parts))
                   for parts in skeleton)

    def constant(self, shape: tuple, members: list[int]) -> int | None:
        """What a member of ``shape`` adds beyond its runs' text tokens, or None (see the module's words)."""
        if len(members) < 3:
            return None
        b = self.b
        base = Selection(question=True)
        order = sorted(members, key=lambda i: sum(len(piece[1]) for piece in self.pieces(i)))
        for rep in order[:_TRIES]:
            skeleton = self._skeleton(rep)
            if skeleton is None:
                continue
            value = b.delta(base, Selection(question=True, turns=(rep,))) - self._runs_tokens(skeleton, rep)
            checks = [i for i in order if i != rep][:2]
            if len(checks) < 2 or any(self._runs_tokens(skeleton, i) + value
                                      != b.delta(base, Selection(question=True, turns=(i,))) for i in checks):
                return None
            b.constants[(RUNS, shape)] = skeleton  # beside the constant: a replay of this content is lent both
            return value
        return None

    def text_tokens(self, shape: tuple, index: int) -> int:
        """The text tokens of turn ``index``'s runs (its shape's constant must have been learned)."""
        return self._runs_tokens(self.b.constants[(RUNS, shape)], index)


def _escaped(value: str) -> tuple[bool, bool]:
    """Whether JSON writes ``value`` (a string) otherwise than as it is: with its quotes, backslashes and control
    characters escaped, and with its non-ASCII characters escaped too (``ensure_ascii``)."""
    return json.dumps(value, ensure_ascii=False)[1:-1] != value, not value.isascii()
