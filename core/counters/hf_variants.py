"""Exact complete counts of the prefixes ``count_imported`` asks for, for ``hf:``, from one render and one
tokenisation of the whole request, where the chat template is prefix-stable.

A template is prefix-stable at a boundary when the request cut there renders as the whole request's text up
to the boundary, then the generation prompt. Most templates are, at most boundaries: each message is written
from its own fields and its position. Not every one everywhere: Qwen3 writes an empty thinking block into an
assistant message that ends the request, and closes a run of tool results only at its last; Mistral Nemo moves
the tool list and the system prompt to the last user message. So stability is learned per kind of boundary
(the roles on either side of it): for each kind, a few boundaries of this request (its first, middle and last)
are rendered cut there, and the cut must read exactly as the whole render up to that point; the first of them
is also counted whole. Every other boundary of a stable kind is found in the whole render as the text that
opens its next message there (the same for every boundary of the kind, followed by that message's text), and
must fall between two tokens of the whole tokenisation that the tokenizer splits apart (an added token right
after it). The prefix's count is then the whole render's tokens before the boundary plus the generation
prompt's. A boundary not known this way raises ``Unsure``, and that variant is counted whole; so does every
variant that leaves a slice out of the middle.

A template that compares message texts with one another (``compared_message_fields``) gets no variants.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import TemplateRefused

SAMPLES_PER_KIND = 3


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
        if through is None:
            raise Unsure("the generation prompt does not start at a token boundary")
        self.prompt_tokens = total - through
        # boundary k: between messages k-1 and k (1 <= k < n); its kind is the two roles
        kinds: dict[tuple[str, str], list[int]] = {}
        for k in range(1, n):
            kinds.setdefault((self.m[k - 1].role, self.m[k].role), []).append(k)
        self.opening = {kind: self._learn(at) for kind, at in kinds.items()}
        self.cut = self._locate()
        self._lasts: dict[int, int | None] = {}
        self.windowed = {kind for kind, at in kinds.items() if self.opening[kind] is None and self._learn_window(at)}

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

    def _learn(self, at: list[int]) -> str | None:
        """The text that opens the message after a boundary of one kind (``at``: every boundary of it), or
        ``None`` where the template is not prefix-stable there: a sampled cut renders otherwise than the whole
        render up to it and the generation prompt, the template refuses it, or (the first) its count differs."""
        opening = None
        for i, k in enumerate(sorted({at[0], at[len(at) // 2], at[-1]})[:SAMPLES_PER_KIND]):
            try:
                cut = self.counter.render_text(self.m[:k], self.tools)
            except TemplateRefused:
                return None
            offset = len(cut) - len(self.prompt)
            if not cut.endswith(self.prompt) or not self.whole.startswith(cut[:offset]):
                return None
            found = self._opening(k, offset)
            if found is None or (opening is not None and found != opening):
                return None
            opening = found
            if i == 0:
                before = self._tokens_before(offset)
                if before is None or before + self.prompt_tokens != self.counter.count(self.m[:k], self.tools):
                    return None
        return opening

    def _opening(self, k: int, offset: int) -> str | None:
        """The text between boundary ``k`` (at ``offset``) and where message ``k``'s own text is written."""
        content = self.m[k].content
        if not content:
            return None
        start = self.whole.find(content, offset)
        return None if start < 0 else self.whole[offset:start]

    def _locate(self) -> dict[int, int]:
        """Boundary -> its offset in the whole render, for boundaries of stable kinds found unambiguously in order."""
        cut: dict[int, int] = {}
        cursor = 0
        for k in range(1, self.n):
            opening = self.opening.get((self.m[k - 1].role, self.m[k].role))
            content = self.m[k].content
            if opening is None or not content:
                found = self.whole.find(content, cursor) if content else -1
                cursor = cursor if found < 0 else found + len(content)
                continue
            start = self.whole.find(opening + content, cursor)
            if start < 0:
                continue
            if self._tokens_before(start) is not None:
                cut[k] = start
            cursor = start + len(opening) + len(content)
        return cut

    # ---- a template that writes the last message otherwise (Qwen3's empty thinking block in a final reply)

    def _last_block(self, k: int) -> str | None:
        """How message ``k - 1`` is written when it ends the request, from two renders of a window (the system
        message, if any, and messages ``k - 2`` and ``k - 1``): the window's text after message ``k - 2``."""
        if k < 2 or k - 1 not in self.cut or not self.prompt.startswith(self.added):
            return None
        head = self.m[:1] if self.m[0].role == "system" and k > 2 else []
        try:
            shorter = self.counter.render_text(head + self.m[k - 2:k - 1], self.tools)
            longer = self.counter.render_text(head + self.m[k - 2:k], self.tools)
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

    def _learn_window(self, at: list[int]) -> bool:
        """Whether the window gives the prefixes of one kind of boundary: sampled cuts rendered whole must read
        as the whole render up to the message before, the window's last block and the generation prompt (the
        first also counted whole)."""
        usable = [k for k in at if k - 1 in self.cut]
        if not usable:
            return False
        for i, k in enumerate(sorted({usable[0], usable[len(usable) // 2], usable[-1]})[:SAMPLES_PER_KIND]):
            block = self._last_block(k)
            if block is None:
                return False
            try:
                cut = self.counter.render_text(self.m[:k], self.tools)
            except TemplateRefused:
                return False
            if cut != self.whole[:self.cut[k - 1]] + block + self.prompt:
                return False
            if i == 0 and self._windowed_count(k) != self.counter.count(self.m[:k], self.tools):
                return False
        return True

    def count(self, start: int, end: int) -> int | None:
        """The complete count of ``messages[:start] + messages[end:]``: prefixes only (``end == n``)."""
        if end != self.n or start == 0:
            raise Unsure("only prefixes are known here")
        if start == self.n:
            return self.total
        offset = self.cut.get(start)
        if offset is not None and self.opening.get((self.m[start - 1].role, self.m[start].role)) is not None:
            return self._tokens_before(offset) + self.prompt_tokens
        if (self.m[start - 1].role, self.m[start].role) in self.windowed:
            counted = self._windowed_count(start)
            if counted is not None:
                return counted
        raise Unsure("a boundary the template is not known to be prefix-stable at")


def variants(counter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
             total: int) -> HFVariants | None:
    """Prefix counts for a request whose complete count is ``total``, or ``None`` where they do not apply."""
    fields = counter.compared_message_fields()
    if fields - {"tool_calls", "tool_call_id", "id"}:
        return None  # what a message adds can depend on another's text
    try:
        return HFVariants(counter, messages, tools, total)
    except Exception:  # noqa: BLE001 - Unsure, a slow tokenizer without offsets, a refusal: every variant whole
        return None
