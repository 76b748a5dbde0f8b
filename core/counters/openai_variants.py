"""Exact complete counts of the variants ``count_imported`` asks for (a prefix, the request with a slice left
out) for ``openai:``, from prefix sums of each message's block: OpenAI's format wraps every message on its own,
so a variant's count is the sum of its messages' blocks, the reply priming, and the tool definitions (in the
first system message, or in a system message of their own). A tool result is named by the call it answers;
a variant that leaves out a call whose result it keeps raises ``Unsure`` and is counted whole.
"""
from __future__ import annotations

from itertools import accumulate
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from .openai import SYSTEM_ROLES, OpenAICounter
from .openai_tools import render_namespace


class Unsure(Exception):
    """This variant is counted whole."""


class OpenAIVariants:
    def __init__(self, counter: OpenAICounter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]):
        self.counter, self.m = counter, list(messages)
        n = self.n = len(self.m)
        self.namespace = render_namespace(tools) if tools else None
        named_by = {}  # call id -> the message whose call names it, latest first
        self.defined_by, self.names = [-1] * n, [None] * n
        self.last_use = [-1] * n  # the last tool result each message's calls name
        for j, x in enumerate(self.m):
            if x.role == "tool" and x.tool_call_id and x.tool_call_id in named_by:
                i, name = named_by[x.tool_call_id]
                self.defined_by[j], self.names[j] = i, name
                self.last_use[i] = j
            named_by.update((c.id, (j, c.name)) for c in x.tool_calls)
        self._spans = [self.last_use]  # sparse table: _spans[k][i] is the max of last_use[i:i + 2**k]
        while 1 << len(self._spans) <= n:
            below, half = self._spans[-1], 1 << (len(self._spans) - 1)
            self._spans.append([max(below[i], below[i + half]) for i in range(len(below) - half)])
        self.plain = [counter.pieces_count(counter.message_pieces(x, self.names[j], None)) for j, x in enumerate(self.m)]
        self.ps = list(accumulate(self.plain, initial=0))
        self.next_system = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.next_system[i] = i if self.m[i].role in SYSTEM_ROLES else self.next_system[i + 1]
        self.priming = counter.pieces_count(counter.priming_pieces())
        self.tools_system = counter.pieces_count(counter.tools_system_pieces(self.namespace)) if tools else 0
        self._with_tools: dict[int, int] = {}

    def count(self, start: int, end: int) -> int | None:
        n = self.n
        if not start + n - end:
            return None  # no request without messages
        if end < n and start < end and self._last_use_in(start, end) >= end:
            raise Unsure("a kept tool result loses the call that names it")
        total = self.ps[start] + self.ps[n] - self.ps[end] + self.priming
        if self.namespace is not None:
            first = self.next_system[0] if self.next_system[0] < start else self.next_system[end]
            if first < n:
                total += self._system_with_tools(first) - self.plain[first]
            else:
                total += self.tools_system
        return total

    def _last_use_in(self, start: int, end: int) -> int:
        k = (end - start).bit_length() - 1
        row = self._spans[k]
        return max(row[start], row[end - (1 << k)])

    def _system_with_tools(self, i: int) -> int:
        if i not in self._with_tools:
            pieces = self.counter.message_pieces(self.m[i], self.names[i], self.namespace)
            self._with_tools[i] = self.counter.pieces_count(pieces)
        return self._with_tools[i]


def variants(counter: OpenAICounter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
             total: int) -> OpenAIVariants | None:
    """Checked before use: the whole request counted this way must give its own complete count."""
    try:
        made = OpenAIVariants(counter, messages, tools)
        if made.count(made.n, made.n) != total:
            return None
    except Exception:  # noqa: BLE001 - every variant counted whole
        return None
    return made
