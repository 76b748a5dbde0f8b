"""Slices left out of the middle of a request for ``hf:`` variant counts (``core.counters.hf_variants``): the
request's whole render with the text between two boundaries taken out, where the template is seen to write the
variant so and the tokenizer splits before an added token at both ends (a mixin of ``HFVariants``)."""
from __future__ import annotations

from ..errors import TemplateRefused

MAX_SPLICE_RENDERS = 24  # variants rendered to learn how boundaries are written, per request
SPLICE_SAMPLES = 2  # variants of each pair of boundary kinds rendered before the rest are trusted
STRICT_CHARS = 16  # a message text shorter than this is located only where an added token follows it


class Unsure(Exception):
    """This variant is counted whole."""


class Splices:
    """The slice-left-out counts of ``HFVariants`` (its state: ``seam_cut``, ``seam_opening``, ``seam_closing``,
    ``_splices``, ``_splice_checked``, ``_renders``, ``_finder``, set there)."""

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
        if (start not in cut or end not in cut) and not self._judged and self._renders >= MAX_SPLICE_RENDERS // 2:
            self._judge_prefixes()  # half the renders spent learning: the openings the groups' other samples teach
            cut = self.seam_cut
        if start not in cut or end not in cut:
            try:
                return self._learn_splice(start, end)
            except Unsure:
                if self._judged:
                    raise
            self._judge_prefixes()  # (as above) and asked again
            if start not in self.seam_cut or end not in self.seam_cut:
                raise Unsure("a boundary not located") from None
            return self._spliced(start, end)
        before, after = self._tokens_before(cut[start]), self._tokens_before(cut[end])
        if before is None or after is None:
            raise Unsure("a boundary where the tokenizer does not split")
        key = self._splice_key(start, end)
        seen = self._splices.get(key, 0)  # variants of this pair rendered and read so (``None``: one read otherwise)
        value = before + self.total - after
        if seen is not None and seen < SPLICE_SAMPLES:
            variant = self.m[:start] + self.m[end:]
            try:
                text = self.counter.render_text(variant, self.tools)
            except TemplateRefused:
                return None  # the template refuses it (counted whole, it would be refused alike)
            same = text == self.whole[:cut[start]] + self.whole[cut[end]:]
            if same and not self._splice_checked:  # the tokenizer splits there as it does in the whole
                same = self._splice_checked = value == self.counter.count(variant, self.tools)
            seen = self._splices[key] = seen + 1 if same else None
        if seen is None:
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
                key = self._splice_key(start, end)
                if self._splices.get(key, 0) is not None:
                    self._splices[key] = self._splices.get(key, 0) + 1  # this very variant read so
        return value

    def _learn_boundary(self, b: int, offset: int) -> bool:
        """Learn how boundary ``b`` (at ``offset`` in the whole render) is written; ``True`` if something new."""
        kind = self.kind(b)
        if kind in self.seam_opening or kind in self.seam_closing:
            return False
        if self.m[b].content:  # what is written between the boundary and the message's text (an added token first)
            found = [start for content in _spellings(self.m[b].content)
                     for start in [self._find(content, offset + 1 + len(next(a for a in self.added
                                                                             if self.whole.startswith(a, offset))), True)]
                     if start >= 0]
            opening = self.whole[offset:min(found)] if found else None
            written = bool(opening) and opening.startswith(self.added) and self._written_at(b, min(found))
            self.seam_opening[kind] = _general(opening, self.m[b]) if written else None
            return written
        content = self.m[b - 1].content
        if not content:
            return False
        # what is written between the text of the message before and the boundary (an added token first)
        ends = [self.whole.rfind(c, 0, offset) + len(c) for c in _spellings(content) if self.whole.rfind(c, 0, offset) >= 0]
        if not ends or not self.whole.startswith(self.added, max(ends)) or not self._written_at(b - 1, max(ends), True):
            return False
        self.seam_closing[kind] = self.whole[max(ends):offset]
        return True

    def kind_at(self, i: int, j: int) -> tuple:
        """The roles (and tool calls) of messages ``i`` and ``j``, which a left-out slice makes neighbours."""
        a, b = self.m[i], self.m[j]
        return a.role, bool(a.tool_calls), b.role, bool(b.tool_calls), self.turn_start[i] == i

    def _find(self, text: str, cursor: int, strict: bool, stop: int | None = None) -> int:
        """Where ``text`` is first written from ``cursor`` (with ``stop``: ending by it, else -1); ``strict``
        (boundaries for slices left out): a short text only where an added token follows it (a message's text ends
        where the template's closing token starts, so a short text is not found inside a role marker)."""
        whole = self.whole
        # (``str.find``, without a scan to the end each time; a bounded look is a plain one)
        start = self._finder.find(text, cursor) if stop is None else whole.find(text, cursor, stop)
        if strict and len(text) < STRICT_CHARS:
            for _ in range(64):
                if start < 0 or whole.startswith(self.added, start + len(text)):
                    break
                start = whole.find(text, start + 1) if stop is None else whole.find(text, start + 1, stop)
            else:
                return -1
        return start


    def _first_spelling(self, opening: str, spellings: list[str], cursor: int, strict: bool) -> tuple[int, int] | None:
        """The least ``(start, length)`` of ``opening`` and a spelling written from ``cursor`` on (``_find``), or
        ``None``. The spellings are looked for last first (the text without its reasoning, which a template may leave
        out, is written where the whole is not), each after the first only up to where it would start no later than
        the least so far: a spelling the render does not hold is not looked for to its end."""
        best: tuple[int, int] | None = None
        for content in reversed(spellings):
            text = opening + content
            start = self._find(text, cursor, strict, None if best is None else best[0] + len(text))
            if start >= 0 and (best is None or (start, len(content)) < best):
                best = (start, len(content))
        return best


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


_ID = "\x00\x01tool_call_id\x01\x00"  # where an opening writes the tool result's own call id


def _general(opening: str, message) -> str:
    """An opening learned at one boundary, with the tool result's call id it writes (Qwen3 and this project's toy
    template write ``tool <id>``) marked, so that boundaries of its kind are looked for with their own id."""
    ident = getattr(message, "tool_call_id", None)
    return opening.replace(ident, _ID) if ident and ident in opening else opening


def _specific(opening: str, message) -> str | None:
    """``opening`` as written before ``message`` (its own call id in the mark's place); ``None`` where it has none."""
    if _ID not in opening:
        return opening
    ident = getattr(message, "tool_call_id", None)
    return opening.replace(_ID, ident) if ident else None


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
