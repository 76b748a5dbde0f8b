"""Exact complete counts of the variants ``count_imported`` asks for (a prefix of the request, the request with
a slice left out), each in time proportional to the messages at its seam, not to the request.

The one-pass tekken count (``core.counters.mistral_render``) is a sum of independent blocks: BOS, one block
per run of same-role messages (a user turn, an assistant turn, each tool result), the tool list and the
system prompt written into the last user turn. A variant keeps every block of the request but the runs
at its seam (the run cut by a prefix, or the two runs a left-out slice joins), so its count is prefix sums
of block lengths plus the seam's blocks, each tokenised once and cached. Whether mistral-common accepts
the variant is its validator's rules, which are local too (the role after a role, calls answered before
the next assistant turn, the last message).

A long user run whose text no count has tokenised yet (the question with every evidence block in it) is not
tokenised to make the variants: a variant is counted as the request's count less the runs it leaves out plus
its seam's runs, so a run it keeps needs no length of its own, and one it leaves out or cuts is tokenised when
a variant first asks (``LAZY_CHARS``). The system prompt written into the last user turn is likewise
tokenised only for a variant whose system prompt or last user turn differs from the request's.

``count(start, end)`` answers for ``messages[:start] + messages[end:]``: the count, ``None`` when
mistral-common certainly refuses it, or raises ``Unsure`` when this cannot say (a check the one pass is
stricter about than mistral-common, a variant opening with another message than the request's first, many
system messages): the caller counts that variant in full.
"""
from __future__ import annotations

from itertools import accumulate
from typing import Callable, Sequence

from ..contracts import ChatMessage, ToolDefinition
from .mistral_checks import _CALL_ID, _FOLLOWS, _NAME, Unsure, _joined
from .mistral_render import _CUT, V3Tekken

MAX_SYSTEM_MESSAGES = 16  # beyond it every variant may have a system prompt of its own: counted in full
LAZY_CHARS = 8192  # a user run this long whose text is not yet in the text-count cache is tokenised only if asked


class TekkenVariants:
    def __init__(self, renderer: V3Tekken, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
                 text_count: Callable[[str], int], total: int | None = None) -> None:
        m = self.m = list(messages)
        n = self.n = len(m)
        self.r, self._text_count = renderer, text_count
        cached = getattr(getattr(text_count, "__self__", None), "_text_cache", None)
        self._cached = {} if cached is None else cached  # the counter's own (an empty one too: it fills)
        self._cheap = False
        self.tools_block = 2 + text_count(renderer._tools_json(tools)) if tools else 0
        self.systems = [x.content for x in m if x.role == "system" and x.content]
        if len(self.systems) > MAX_SYSTEM_MESSAGES:
            raise Unsure("many system prompts")
        self.sys_before = list(accumulate((x.role == "system" and bool(x.content) for x in m), initial=0))
        unsure, bad, pair, assistant_bad, exp_after, tools_before = [], [], [False], [], [], [0]
        expected = 0
        for i, x in enumerate(m):
            unsure.append(self._unsure(x))
            bad.append(x.role == "assistant" and bool(x.content) == bool(x.tool_calls))
            if i:
                pair.append(x.role not in _FOLLOWS[m[i - 1].role])
            flagged = False
            if i and x.role == "tool":
                expected -= 1
            elif i and x.role == "assistant":
                flagged = expected != 0
                expected = len(x.tool_calls) if x.tool_calls else expected
            assistant_bad.append(flagged)
            exp_after.append(expected)
            tools_before.append(tools_before[-1] + (x.role == "tool"))
        self.unsure_ps = list(accumulate(unsure, initial=0))
        self.bad_ps = list(accumulate(bad, initial=0))
        self.pair_ps = list(accumulate(pair, initial=0))
        self.abad_ps = list(accumulate(assistant_bad, initial=0))
        self.exp_after, self.tools_before = exp_after, tools_before
        self.next_assistant = [n] * (n + 1)
        self.next_nonsys = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.next_assistant[i] = i if m[i].role == "assistant" else self.next_assistant[i + 1]
            self.next_nonsys[i] = i if m[i].role != "system" else self.next_nonsys[i + 1]
        # runs of one role (system ones too: a system message ends a run)
        self.run_of, starts = [], []
        for i, x in enumerate(m):
            if not i or x.role != m[i - 1].role:
                starts.append(i)
            self.run_of.append(len(starts) - 1)
        self.start = starts
        self.end = starts[1:] + [n]
        self.lazy: dict[int, int | None] = {}  # runs whose length is worked out only when a variant needs it
        lengths = []
        for r, (a, b) in enumerate(zip(self.start, self.end)):
            if total is not None and m[a].role == "user":
                text = _joined(m[a:b])
                if self._long(text):
                    self.lazy[r] = None
                    lengths.append(0)
                    continue
            lengths.append(self._length(m[a:b]))
        if None in lengths:
            raise Unsure("a run mistral-common refuses: the request itself would be refused")
        self.length_ps = list(accumulate(lengths, initial=0))
        self.last_user = []  # the last user run at or before each run
        for r, a in enumerate(self.start):
            self.last_user.append(r if m[a].role == "user" else (self.last_user[-1] if r else -1))
        self._sys_text: dict[tuple[int, int], str] = {}
        self.total = total
        if total is not None:  # the request's own parts: a variant's count is told from the request's
            self.full_pad = self._pad(n, n)
            self.full_system = self._system(n, n)
            self.full_last_user = self._last_user_content(self.run_of[n - 1], None, [m[self.start[-1]:]],
                                                          self.full_pad == 0) if n else ""
            self._full_adjust: int | None = None

    def _run_length(self, a: int, b: int) -> int:
        """The lengths of runs ``a`` to ``b - 1`` (a lazy run's worked out now, once)."""
        value = self.length_ps[b] - self.length_ps[a]
        for r in self.lazy:
            if a <= r < b:
                if self.lazy[r] is None:
                    if self._cheap:
                        raise Unsure("a long run no count has tokenised")
                    self.lazy[r] = self._length(self.m[self.start[r]:self.end[r]])
                value += self.lazy[r]
        return value

    def _pad(self, start: int, end: int) -> int:
        """The empty user turn the normaliser opens a conversation with when it does not open with a user one."""
        first = self.next_nonsys[0] if self.next_nonsys[0] < start else self.next_nonsys[end]
        return 0 if first < self.n and self.m[first].role == "user" else 2

    def _adjust(self, system: str, content: str) -> int:
        """What writing the system prompt into the last user turn adds."""
        return self.tc(system + "\n\n" + content) - self.tc(content) if system else 0

    def _unsure(self, x: ChatMessage) -> bool:
        if x.role == "assistant":
            return any(not _NAME.fullmatch(c.name) or not _CALL_ID.fullmatch(self.r._map_id(c.id))
                       for c in x.tool_calls)
        if x.role == "tool":
            return not _CALL_ID.fullmatch(self.r._map_id(x.tool_call_id or ""))
        return bool(x.tool_calls)

    def _length(self, group: Sequence[ChatMessage]) -> int | None:
        """Tokens of one run's blocks, not as the last user turn; ``None``: mistral-common refuses the run."""
        if not group:
            return 0
        role = group[0].role
        if role == "system":
            return 0
        if role == "user":
            return 2 + self.tc(_joined(group))
        if role == "tool":  # (the renderer's texts, written once per content: its counts take the same strings)
            return sum(2 + self.tc(self.r._result_json(x.content, x.tool_call_id or "")) for x in group)
        content = _joined(group)
        calls = [c for x in group for c in x.tool_calls]
        if calls and content:
            return None  # mistral-common raises on text and tool calls in one aggregated turn
        if calls:  # json.dumps of the list: each call's own dump joined by ", "
            return 2 + self.tc("[" + ", ".join(self.r._call_json(c) for c in calls) + "]")
        return 1 + self.tc(content.rstrip(" "))

    def count(self, start: int, end: int, *, cheap: bool = False) -> int | None:
        """The complete count of ``messages[:start] + messages[end:]`` (see the module's words). ``cheap``:
        raise ``Unsure`` rather than tokenise a long text no count has tokenised yet (a whole count of the
        variant may then cost no more)."""
        self._cheap = cheap
        return self._count(start, end, self.total is not None)

    def _pieces(self, text: str) -> list[str]:
        """``text`` cut after every ``>\n`` that a ``<`` follows (between two evidence blocks), where tekken's
        pre-tokeniser always cuts (``mistral_render._slices``): its tokens are its pieces' tokens, and a
        question's pieces are its evidence blocks, each already counted on its own."""
        if len(text) <= LAZY_CHARS or not self.r._sliceable or _CUT not in text:
            return [text]
        parts = text.split(_CUT)
        return [parts[0] + ">\n"] + ["<" + p + ">\n" for p in parts[1:-1]] + ["<" + parts[-1]]

    def tc(self, text: str) -> int:
        """The text's tokens, from its pieces' cached counts where it is cut into pieces."""
        pieces = self._pieces(text)
        if len(pieces) == 1:
            return self._text_count(text)
        return sum(map(self._text_count, pieces))

    def _long(self, text: str) -> bool:
        """Whether ``text`` is long and would be tokenised anew (``cheap`` refuses to): it is not in the
        text-count cache, nor are its long pieces."""
        if len(text) <= LAZY_CHARS or text in self._cached:
            return False
        return any(len(p) > LAZY_CHARS and p not in self._cached for p in self._pieces(text))

    def _count(self, start: int, end: int, told: bool) -> int | None:
        """``count``; ``told``: from the request's count (else every block summed)."""
        m, n = self.m, self.n
        kept = start + n - end
        if not kept:
            return None
        if start == 0 or (self.unsure_ps[start] or self.unsure_ps[n] - self.unsure_ps[end]):
            raise Unsure("a variant this cannot vouch for")
        if not self._accepted(start, end, kept):
            return None
        ra, rb = self.run_of[start - 1], (self.run_of[end] if end < n else None)
        head = m[self.start[ra]:start]
        tail = m[end:self.end[rb]] if rb is not None else []
        merged = bool(tail) and tail[0].role == head[0].role and head[0].role != "system"
        seam = [head + tail] if merged else [head, tail]
        if self._cheap and any(g and g[0].role == "user" and self._long(_joined(g)) for g in seam):
            raise Unsure("a long run at the seam no count has tokenised")
        parts = [self._length(g) for g in seam]
        if None in parts:
            return None
        pad = self._pad(start, end)  # the empty user turn the normaliser opens the conversation with
        system = self._system(start, end)
        content = self._last_user_content(ra, rb, seam, pad == 0) if system else ""
        if not told:  # every block summed
            ps = self.length_ps
            total = 1 + self.tools_block + ps[ra] + sum(parts) + (ps[-1] - ps[rb + 1] if rb is not None else 0)
            return total + pad + self._adjust(system, content)
        # the request's count, less the runs at the seam and what the variant writes differently
        value = self.total - self._run_length(ra, rb + 1 if rb is not None else len(self.start)) + sum(parts)
        value += pad - self.full_pad
        if system != self.full_system or (system and content != self.full_last_user):
            if self._cheap and (self._long(content) or self._full_adjust is None and self._long(self.full_last_user)):
                raise Unsure("a long last user turn no count has tokenised")
            if self._full_adjust is None:
                self._full_adjust = self._adjust(self.full_system, self.full_last_user)
            value += self._adjust(system, content) - self._full_adjust
        return value

    def _accepted(self, start: int, end: int, kept: int) -> bool:
        """mistral-common's validator (test mode) on the variant, from the precomputed flags."""
        m, n = self.m, self.n
        last = m[n - 1] if end < n else m[start - 1]
        if kept == 1 and last.role not in ("user", "system"):
            return False
        if kept > 1 and last.role == "assistant":
            return False
        if self.bad_ps[start] or self.bad_ps[n] - self.bad_ps[end]:
            return False
        if self.pair_ps[start] or (end < n and self.pair_ps[n] - self.pair_ps[end + 1]):
            return False
        if end < n and m[end].role not in _FOLLOWS[m[start - 1].role]:
            return False
        if self.abad_ps[start]:
            return False
        first = self.next_assistant[end]
        if first < n:
            if self.exp_after[start - 1] - (self.tools_before[first] - self.tools_before[end]):
                return False
            if self.abad_ps[n] - self.abad_ps[first + 1]:
                return False
        return True

    def _system(self, start: int, end: int) -> str:
        key = (self.sys_before[start], self.sys_before[end])
        text = self._sys_text.get(key)
        if text is None:
            text = self._sys_text[key] = "\n\n".join(self.systems[:key[0]] + self.systems[key[1]:])
        return text

    def _last_user_content(self, ra: int, rb: int | None, seam: list[list[ChatMessage]], opens_with_user: bool) -> str:
        m = self.m
        if rb is not None and self.last_user[-1] > rb:
            r = self.last_user[-1]
            return _joined(m[self.start[r]:self.end[r]])
        for group in reversed(seam):
            if group and group[0].role == "user":
                return _joined(group)
        r = self.last_user[ra - 1] if ra else -1
        if r >= 0:
            return _joined(m[self.start[r]:self.end[r]])
        return ""  # the empty user turn is the last one


def variants(renderer: V3Tekken | None, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
             text_count: Callable[[str], int], total: int) -> TekkenVariants | None:
    """Variant counts for a request whose complete count is ``total``, or ``None`` where they do not apply.
    Checked before use where its blocks are all counted (no lazy run, no long system prompt and last turn
    to tokenise once more): the whole request, its blocks summed, must give ``total``."""
    if renderer is None:
        return None
    try:
        made = TekkenVariants(renderer, messages, tools, text_count, total)
        joined = made.full_system and made.full_system + "\n\n" + made.full_last_user
        if not made.lazy and not (joined and made._long(joined)) and made._count(made.n, made.n, False) != total:
            return None
    except Exception:  # noqa: BLE001 - anything unexpected: every variant is counted in full
        return None
    return made
