"""Exact complete counts of the prefixes ``count_imported`` asks for, for ``hf:``, from one render and one
tokenisation of the whole request, where the chat template allows it; every other variant is counted whole.

A template is prefix-stable at a boundary (between two messages) when the request cut there renders as the
whole request's text up to the boundary, then the generation prompt. Most templates are, at most boundaries:
each message is written from its own fields and its position. Not everywhere: Qwen3 and Gemma 4 write the
reply that ends a request otherwise (an empty thinking block), Qwen3 closes a run of tool results only at its
last, Mistral Nemo moves the tool list and the system prompt to the last user message.

So what holds is learned per group of boundaries: the roles on either side (and whether each message makes tool
calls) and the shape of the turn the boundary ends (the messages from the last user message on). For each
group, a few of this request's own boundaries (its first, middle and last) are rendered cut there:

- if each cut reads exactly as the whole render up to a point, then the generation prompt, the group is
  stable: every boundary of it is found in the whole render as the text that opens its next message (the same
  at every sampled boundary of its kind) followed by that message's text, and must fall where the tokenizer
  splits (a token of the whole tokenisation ends there and an added token is spelled right after it). Its
  prefix count: the whole render's tokens before the boundary, plus the generation prompt's.
- else, if each cut reads as the whole render up to the message before, then a *window* (the system message,
  and the turn from its last user message to the cut) rendered on its own from that message on, then the
  prompt, the group is windowed: its prefix count is the whole render's tokens before that message, the
  tokens of the window's last block, and the prompt's.

The first sampled cut of each group is also counted whole and must agree. A group neither way, or a boundary
not found raises ``Unsure``: that variant is counted whole. A slice left out of the middle (what drop-oldest
asks of a section of tool-call turns) is the whole render with the text between its two boundaries taken out,
where both are located and the template is seen to write it so (``_spliced``). The samples vouch
for their group, not for every boundary in it: a template whose output at one boundary depends on something
no group tells apart could still differ there. A template that compares message texts with one another
(``compared_message_fields``: Nemo) gets no variants at all.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import TemplateRefused
from .base import ID_FIELDS

SAMPLES_PER_GROUP = 3
MAX_SPLICE_RENDERS = 16  # variants rendered to learn how boundaries are written, per request
MAX_GROUPS = 32  # beyond this many groups, the rest are counted whole (each group costs renders and a count)


class Unsure(Exception):
    """This variant is counted whole."""


class HFVariants:
    def __init__(self, counter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition], total: int):
        self.counter, self.m, self.tools, self.total = counter, list(messages), list(tools), total
        n = self.n = len(self.m)
        self.whole = whole = counter.render_text(self.m, self.tools)
        bare = counter.render_prompt(self.m, self.tools, generation=False)
        eos = counter.eos_spelling()
        if not whole.startswith(bare) and eos and bare.endswith(eos):
            bare = bare[:-len(eos)]  # a template that ends with the end-of-text token when no reply is asked (Phi)
        if not whole.startswith(bare):
            raise Unsure("the generation prompt is not appended")
        self.prompt = whole[len(bare):]
        offsets = counter.token_offsets(whole)
        if len(offsets) != total:
            raise Unsure("the tokenisation of the render is not the complete count")
        self.starts = [start for start, _ in offsets]
        self.ends = [end for _, end in offsets]
        self.added = tuple(counter.untrusted_spellings())
        through = self._tokens_before(len(bare))
        if through is None or not self.prompt.startswith(self.added):
            raise Unsure("the generation prompt does not start where the tokenizer splits")
        self.prompt_tokens = total - through
        self.turn_start = []  # the last user message at or before each message (0 when none)
        for k, x in enumerate(self.m):
            self.turn_start.append(k if x.role == "user" else (self.turn_start[-1] if k else 0))
        groups: dict[tuple, list[int]] = {}
        for k in range(1, n):  # boundary k: between messages k-1 and k
            groups.setdefault((self.kind(k), self.turn_shape(k)), []).append(k)
        self.opening: dict[tuple, str | None] = {}
        self.mode: dict[tuple, str] = {}
        self._samples: dict[tuple, list[tuple[int, str]]] = {}
        for g, (key, at) in enumerate(groups.items()):
            if g < MAX_GROUPS:
                self._sample(key, at)
        self.cut = self._locate()
        self._lasts: dict[int, int | None] = {}
        for key in list(self._samples):
            self.mode[key] = self._judge(key)
        self.group_of = {k: key for key, at in groups.items() for k in at}
        self._splices: dict[tuple, bool] = {}
        self._splice_checked = False
        self._renders = 0
        self.seam_opening: dict[tuple, str | None] = {k: v for k, v in self.opening.items() if v is not None}
        self.seam_closing: dict[tuple, str] = {}
        self.seam_cut = dict(self.cut)  # boundaries located for slices left out (learned from their renders too)

    def kind(self, k: int) -> tuple:
        """The roles on either side of boundary ``k``, and whether each message makes tool calls."""
        before, after = self.m[k - 1], self.m[k]
        return before.role, bool(before.tool_calls), after.role, bool(after.tool_calls)

    def turn_shape(self, k: int) -> tuple:
        """Roles (and tool calls) of the turn boundary ``k`` ends: from its last user message to message ``k - 1``."""
        return tuple((x.role, bool(x.tool_calls)) for x in self.m[self.turn_start[k - 1]:k])

    def _tokens_before(self, offset: int) -> int | None:
        """Tokens of the whole render that end at or before ``offset``, where one ends exactly there and an added
        token is spelled right after it (the tokenizer splits the text there); else ``None``."""
        if offset == 0:
            return 0
        count = bisect_right(self.ends, offset)
        if not count or self.ends[count - 1] != offset:
            return None
        if count < len(self.starts) and (self.starts[count] < offset
                                         or not self.whole.startswith(self.added, offset)):
            return None
        return count

    # ---- learning, from this request's own boundaries

    def _sample(self, key: tuple, at: list[int]) -> None:
        """Render a few cuts of a group; where the cut is stable, learn its kind's opening from it."""
        cuts = []
        for k in sorted({at[0], at[len(at) // 2], at[-1]})[:SAMPLES_PER_GROUP]:
            try:
                cuts.append((k, self.counter.render_text(self.m[:k], self.tools)))
            except TemplateRefused:
                return  # never sampled: every prefix of the group is counted whole
        self._samples[key] = cuts
        kind = key[0]
        for k, cut in cuts:
            if not self._stable_cut(cut):
                continue
            found = self._opening(k, len(cut) - len(self.prompt))
            if found is not None and self.opening.setdefault(kind, found) != found:
                self.opening[kind] = None  # two boundaries of one kind opened otherwise: none is trusted

    def _stable_cut(self, cut: str) -> bool:
        return cut.endswith(self.prompt) and self.whole.startswith(cut[:len(cut) - len(self.prompt)])

    def _opening(self, k: int, offset: int) -> str | None:
        """The text between boundary ``k`` (at ``offset``) and where message ``k``'s own text is written."""
        found = [start for content in _spellings(self.m[k].content)
                 for start in [self.whole.find(content, offset)] if start >= 0]
        return self.whole[offset:min(found)] if found else None

    def _locate(self, openings: dict | None = None, closings: dict | None = None) -> dict[int, int]:
        """Boundary -> its offset in the whole render, for boundaries of kinds with a known opening, found in order;
        with ``closings`` (what follows the text of the message before a boundary of that kind), also the
        boundaries of kinds whose next message has no text (an assistant message of tool calls only)."""
        openings = self.opening if openings is None else openings
        cut: dict[int, int] = {}
        cursor = 0
        ended = None  # the message whose text ends at the cursor
        for k in range(1, self.n):
            opening = openings.get(self.kind(k)) or ""
            closing = (closings or {}).get(self.kind(k))
            if not opening and closing and ended == k - 1 and self.whole.startswith(closing, cursor):
                if self._tokens_before(cursor + len(closing)) is not None:
                    cut[k] = cursor + len(closing)
            found = [(start, len(content)) for content in _spellings(self.m[k].content)
                     for start in [self.whole.find(opening + content, cursor)] if start >= 0]
            if not found:
                continue
            start, length = min(found)  # the first place it is written (a text cut short can match further on)
            if opening and self._tokens_before(start) is not None:
                cut[k] = start
            cursor = start + len(opening) + length
            ended = k
        return cut

    def _judge(self, key: tuple) -> str:
        """``stable``, ``windowed`` or ``whole`` for one group, from its sampled cuts (the first counted whole)."""
        cuts = self._samples[key]
        if all(self._stable_cut(cut) and k in self.cut and self.cut[k] == len(cut) - len(self.prompt)
               for k, cut in cuts):
            k = cuts[0][0]
            stable = self._tokens_before(self.cut[k]) + self.prompt_tokens
            return "stable" if stable == self.counter.count(self.m[:k], self.tools) else "whole"
        for k, cut in cuts:
            block = self._last_block(k)
            if block is None or cut != self.whole[:self.cut[k - 1]] + block + self.prompt:
                return "whole"
        k = cuts[0][0]
        return "windowed" if self._windowed_count(k) == self.counter.count(self.m[:k], self.tools) else "whole"

    # ---- a template that writes the message ending the request otherwise

    def _last_block(self, k: int) -> str | None:
        """How message ``k - 1`` is written when it ends the request, from two renders of a window (the system
        message, if any, then the turn from its last user message): the window's text after message ``k - 2``."""
        if k < 2 or k - 1 not in self.cut:
            return None
        start = min(self.turn_start[k - 2], k - 2)
        head = self.m[:1] if self.m[0].role == "system" and start > 0 else []
        try:
            shorter = self.counter.render_text(head + self.m[start:k - 1], self.tools)
            longer = self.counter.render_text(head + self.m[start:k], self.tools)
        except TemplateRefused:
            return None
        g = len(self.prompt)
        if not (shorter.endswith(self.prompt) and longer.endswith(self.prompt)
                and longer.startswith(shorter[:len(shorter) - g])):
            return None
        block = longer[len(shorter) - g:len(longer) - g]
        return block if block.startswith(self.added) else None

    def _windowed_count(self, k: int) -> int | None:
        if k not in self._lasts:
            block = self._last_block(k)
            self._lasts[k] = None if block is None else \
                self._tokens_before(self.cut[k - 1]) + self.counter.text_count(block) + self.prompt_tokens
        return self._lasts[k]

    def count(self, start: int, end: int, *, cheap: bool = False) -> int | None:
        """The complete count of ``messages[:start] + messages[end:]``: prefixes (``end == n``), and slices left
        out between two located boundaries (``_spliced``). (Every answer is cheap: ``cheap`` is the mistral
        variants' word.)"""
        if start == 0:
            raise Unsure("a variant opening with another message")
        if end != self.n:
            return self._spliced(start, end)
        if start == self.n:
            return self.total
        mode = self.mode.get(self.group_of[start])
        if mode == "stable" and start in self.cut:
            return self._tokens_before(self.cut[start]) + self.prompt_tokens
        if mode == "windowed":
            counted = self._windowed_count(start)
            if counted is not None:
                return counted
        raise Unsure("a boundary the template is not known to be prefix-stable at")


    # ---- a slice left out of the middle

    def _spliced(self, start: int, end: int) -> int | None:
        """``messages[:start] + messages[end:]`` where both boundaries are located and fall where the tokenizer
        splits before an added token: if the template writes the variant as the whole render with the text
        between the two boundaries taken out, its count is the whole render's tokens before ``start``'s
        boundary and from ``end``'s on. Learned per pair of boundary groups and the roles meeting at the seam:
        the first variant of each is rendered and must read exactly so (the first of all also counted whole);
        a pair that reads otherwise is counted whole."""
        if start >= end:
            raise Unsure("nothing left out")
        cut = self.seam_cut
        if start not in cut or end not in cut:
            return self._learn_splice(start, end)
        before, after = self._tokens_before(cut[start]), self._tokens_before(cut[end])
        if before is None or after is None:
            raise Unsure("a boundary where the tokenizer does not split")
        key = self._splice_key(start, end)
        known = self._splices.get(key)
        value = before + self.total - after
        if known is None:
            variant = self.m[:start] + self.m[end:]
            try:
                text = self.counter.render_text(variant, self.tools)
            except TemplateRefused:
                return None  # the template refuses it (counted whole, it would be refused alike)
            known = text == self.whole[:cut[start]] + self.whole[cut[end]:]
            if known and not self._splice_checked:  # the tokenizer splits there as it does in the whole
                known = self._splice_checked = value == self.counter.count(variant, self.tools)
            self._splices[key] = known
        if not known:
            raise Unsure("the template writes this variant otherwise")
        return value

    def _splice_key(self, start: int, end: int) -> tuple:
        last_user = self.turn_start[-1]  # (a template may write what follows the request's last user message otherwise)
        return (self.group_of.get(start), self.group_of.get(end), self.kind_at(start - 1, end),
                start <= last_user < end and self.m[last_user].role == "user")

    def _learn_splice(self, start: int, end: int) -> int | None:
        """A variant with a boundary not yet located: rendered, and found to be the whole render with one run
        of its text taken out (where the tokenizer splits at both ends), or ``Unsure``. Where that run is
        unambiguous, its ends teach how boundaries of their kinds are written (an opening before the next
        message's text, or a closing after the text before), and the boundaries are located again."""
        if self._renders >= MAX_SPLICE_RENDERS:
            raise Unsure("too many variants rendered")
        self._renders += 1
        try:
            text = self.counter.render_text(self.m[:start] + self.m[end:], self.tools)
        except TemplateRefused:
            return None
        whole, d = self.whole, len(self.whole) - len(text)
        if d <= 0:
            raise Unsure("the variant is not shorter")
        lo, hi = len(text) - _common_suffix(whole, text), _common_prefix(whole, text)
        if lo > hi or hi - lo > 4096:
            raise Unsure("the variant is not the whole render with one run taken out")
        choices = [x for x in range(max(lo, 0), hi + 1)
                   if self._tokens_before(x) is not None and self._tokens_before(x + d) is not None]
        if not choices:
            raise Unsure("the run taken out does not end where the tokenizer splits")
        x = choices[0]
        value = self._tokens_before(x) + self.total - self._tokens_before(x + d)
        if not self._splice_checked:  # the tokenizer splits there as it does in the whole
            if value != self.counter.count(self.m[:start] + self.m[end:], self.tools):
                self._renders = MAX_SPLICE_RENDERS  # nothing is spliced here
                raise Unsure("a spliced count disagreed with the complete count")
            self._splice_checked = True
        # where the run is ambiguous (it may start at either of two added tokens), a located end fixes it
        if self.seam_cut.get(start) in choices:
            choices = [self.seam_cut[start]]
        elif end in self.seam_cut and self.seam_cut[end] - d in choices:
            choices = [self.seam_cut[end] - d]
        if len(choices) == 1:
            x = choices[0]
            learned = [self._learn_boundary(b, offset) for b, offset in ((start, x), (end, x + d))]
            if any(learned):
                self.seam_cut = self._locate(self.seam_opening, self.seam_closing)
            if self.seam_cut.get(start) == x and self.seam_cut.get(end) == x + d:
                self._splices[self._splice_key(start, end)] = True  # this very variant read so
        return value

    def _learn_boundary(self, b: int, offset: int) -> bool:
        """Learn how boundary ``b`` (at ``offset`` in the whole render) is written; ``True`` if something new."""
        kind = self.kind(b)
        if kind in self.seam_opening or kind in self.seam_closing:
            return False
        if self.m[b].content:
            opening = self._opening(b, offset)
            self.seam_opening[kind] = opening
            return opening is not None
        content = self.m[b - 1].content
        if not content:
            return False
        ends = [self.whole.rfind(c, 0, offset) + len(c) for c in _spellings(content) if self.whole.rfind(c, 0, offset) >= 0]
        if not ends:
            return False
        self.seam_closing[kind] = self.whole[max(ends):offset]
        return True

    def kind_at(self, i: int, j: int) -> tuple:
        """The roles (and tool calls) of messages ``i`` and ``j``, which a left-out slice makes neighbours."""
        a, b = self.m[i], self.m[j]
        return a.role, bool(a.tool_calls), b.role, bool(b.tool_calls), self.turn_start[i] == i


def variants(counter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
             total: int) -> HFVariants | None:
    """Prefix counts for a request whose complete count is ``total``, or ``None`` where they do not apply."""
    fields = counter.compared_message_fields()
    if fields - ID_FIELDS:
        return None  # what a message adds can depend on another's text
    ids = [c.id for m in messages for c in m.tool_calls]
    if fields and len(ids) != len(set(ids)):
        return None  # a template that matches results to calls by id, and a recording that reuses an id
    try:
        return HFVariants(counter, messages, tools, total)
    except Exception:  # noqa: BLE001 - Unsure, a slow tokenizer without offsets, a refusal: every variant whole
        return None


def _spellings(content: str | None) -> list[str]:
    """How a message's text may be written: as it is, trimmed (Gemma 4), or without the reasoning before its last
    ``</think>`` (Qwen3 and DeepSeek-R1 drop it from earlier replies). Only candidates: a boundary is located where
    the kind's opening and one of them are written, first after the message before."""
    if not content:
        return []
    out = [content, content.strip()]
    if "</think>" in content:
        after = content.split("</think>")[-1]
        out += [after, after.lstrip("\n"), after.strip()]
    return [s for i, s in enumerate(out) if s and s not in out[:i]]


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (a binary search of C-level comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:len(a) - lo] == b[len(b) - mid:len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo
