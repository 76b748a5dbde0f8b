"""Token ids of many calls of one session, with text shared between calls tokenised once.

An agent session sends the same system prompt, tools and history again with every call. The ids of
each call are the counter's own (same template, same tokenizer), but the text pieces the template
tokenises are remembered by content: for the ``mistral:`` counters the tokenizer's ``encode`` of each
piece is memoised under mistral-common's own instruct encoder, so a piece seen in an earlier call
costs a dictionary look-up. Other counters render and tokenise each call whole (still exact).

The longest common prefix of two calls' ids (what a provider's prompt cache can reuse) is found on
the packed ids by bisection on slice equality, so it costs a few memory compares, not a loop.
"""
from __future__ import annotations

import copy
from array import array
from typing import Any, Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..counting import TokenCounter
from ..errors import TemplateRefused
from ..formats.adapt import adapt, step_sets  # the adaptations count_imported makes, in the same order

MEMO_LIMIT = 200_000  # text pieces remembered per session; past it the memo starts afresh


class _MemoEncoder:
    """A tokenizer whose ``encode`` remembers each text piece; everything else is the tokenizer's own."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._memo: dict[tuple[str, bool, bool], tuple[int, ...]] = {}
        self.encoded = 0  # pieces actually tokenised (memo misses)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def encode(self, text: str, bos: bool, eos: bool) -> list[int]:
        key = (text, bos, eos)
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) >= MEMO_LIMIT:
                self._memo.clear()
            hit = self._memo[key] = tuple(self._raw.encode(text, bos, eos))
            self.encoded += 1
        return list(hit)


class SessionTokens:
    """Token ids of a session's calls under one counter; ``pack`` gives them in the form ``common_prefix`` reads."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._mistral = self._memoised_mistral(counter)
        self.renders = 0  # calls rendered

    @staticmethod
    def _memoised_mistral(counter: TokenCounter) -> tuple[Any, Any, Any, _MemoEncoder] | None:
        path = getattr(counter, "_counting_path", None)
        fast = path() if callable(path) else None
        if not fast or not hasattr(counter, "_request"):
            return None
        validator, normaliser, instruct = fast
        memo = _MemoEncoder(instruct.tokenizer)
        instruct = copy.copy(instruct)
        instruct.tokenizer = memo
        return validator, normaliser, instruct, memo

    @property
    def pieces_tokenised(self) -> int | None:
        return self._mistral[3].encoded if self._mistral else None

    def token_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int]:
        """The counter's ids of the rendered request; raises ``TemplateRefused`` as the counter does."""
        self.renders += 1
        if self._mistral is None:
            return self.counter.token_ids(messages, tools)
        validator, normaliser, instruct, _ = self._mistral
        try:
            request = validator.validate_request(self.counter._request(messages, tools))  # type: ignore[attr-defined]
            return list(instruct.encode_instruct(normaliser.from_chat_completion_request(request)).tokens)
        except Exception as exc:  # mistral-common's own refusal (ordering, ids, roles)
            raise TemplateRefused(self.counter.name, f"{type(exc).__name__}: {exc}") from None

    def call_ids(self, messages: list[ChatMessage], tools: list[ToolDefinition]) -> tuple[list[int], list[str]]:
        """Ids of a recorded call, adapted the way ``count_imported`` adapts what the template refuses
        (the notes say how); raises ``TemplateRefused`` with the template's first refusal."""
        first: TemplateRefused | None = None
        for steps in step_sets(messages, self.counter):  # fewest adaptations first, as count_imported tries them
            counted, _, notes = adapt(messages, steps, self.counter)
            if not counted:
                continue
            try:
                return self.token_ids(counted, tools), notes
            except TemplateRefused as exc:
                first = first or exc
        raise first or TemplateRefused(self.counter.name, "there is nothing to count")


def pack(ids: Sequence[int]) -> bytes:
    return array("I", ids).tobytes()


def common_prefix(a: bytes, b: bytes) -> int:
    """Length in tokens of the longest common prefix of two packed id arrays."""
    width = array("I").itemsize
    low, high = 0, min(len(a), len(b)) // width  # a[:low] == b[:low] holds; the answer is <= high
    if a[:high * width] == b[:high * width]:
        return high
    while high - low > 1:
        mid = (low + high) // 2
        if a[low * width:mid * width] == b[low * width:mid * width]:
            low = mid
        else:
            high = mid
    return low
