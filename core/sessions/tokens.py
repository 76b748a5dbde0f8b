"""Token ids of many calls of one session, with text shared between calls tokenised once.

An agent session sends the same system prompt, tools and history again with every call. The ids of
each call are the counter's own (same template, same tokenizer), but what repeats is remembered by
content: for the ``mistral:`` counters, under mistral-common's own validation, normalisation and
instruct encoder, the tokenizer's ``encode`` of each text piece, the encoding of each tool result and
assistant message (by its fields and place flags) and the conversion of each message are memoised, so
what an earlier call sent costs dictionary look-ups. Other counters render and tokenise each call whole
(still exact).

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
from ..formats.adapt import adapt, step_sets
from .diffing import message_key, tool_text  # the adaptations count_imported makes, in the same order

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


def _call_key(call: Any) -> tuple | None:
    function = getattr(call, "function", None)
    arguments = getattr(function, "arguments", None)
    if not isinstance(arguments, str):
        return None
    return (getattr(call, "id", None), getattr(call, "type", None), function.name, arguments)


def _memoise_messages(instruct: Any) -> None:
    """Tool results and assistant messages encode to the same tokens whenever their fields and place
    flags are the same: remember them by those (the encoder's own method computes each once). Messages
    of another shape (content chunks, images) go to the encoder every time."""
    memo: dict[tuple, tuple] = {}
    encode_tool, encode_assistant = instruct.encode_tool_message, instruct.encode_assistant_message

    def tool(message: Any, is_before_last_user_message: bool) -> Any:
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            return encode_tool(message, is_before_last_user_message)
        key = ("tool", content, getattr(message, "tool_call_id", None), getattr(message, "name", None),
               is_before_last_user_message)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = encode_tool(message, is_before_last_user_message)
        tokens, images, audios = hit
        return list(tokens), list(images), list(audios)

    def assistant(message: Any, is_before_last_user_message: bool = False, **rest: Any) -> Any:
        content = getattr(message, "content", None)
        calls = [_call_key(c) for c in getattr(message, "tool_calls", None) or []]
        if rest or not (content is None or isinstance(content, str)) or None in calls:
            return encode_assistant(message=message, is_before_last_user_message=is_before_last_user_message, **rest)
        key = ("assistant", content, tuple(calls), getattr(message, "prefix", False), is_before_last_user_message)
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = encode_assistant(message=message, is_before_last_user_message=is_before_last_user_message)
        return list(hit)

    instruct.encode_tool_message, instruct.encode_assistant_message = tool, assistant


class SessionTokens:
    """Token ids of a session's calls under one counter; ``pack`` gives them in the form ``common_prefix`` reads."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._mistral = self._memoised_mistral(counter)
        self.renders = 0  # calls rendered
        # mistral-common's message and tool objects, built once per distinct message or tool list
        self._messages: dict[tuple, Any] = {}
        self._tools: dict[tuple, Any] = {}

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
        _memoise_messages(instruct)
        return validator, normaliser, instruct, memo

    def _mistral_request(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> Any:
        """The counter's own request object, assembled from message and tool objects made once each
        (by the counter's own conversion, one message at a time)."""
        from mistral_common.protocol.instruct.request import ChatCompletionRequest

        convert = self.counter._request  # type: ignore[attr-defined]
        objects = []
        for m in messages:
            key = message_key(m)
            found = self._messages.get(key)
            if found is None:
                if len(self._messages) >= MEMO_LIMIT:
                    self._messages.clear()
                found = self._messages[key] = convert([m], []).messages[0]
            objects.append(found)
        tool_key = tuple(tool_text(t) for t in tools)
        made = self._tools.get(tool_key)
        if made is None:
            made = self._tools[tool_key] = convert([], tools).tools
        return ChatCompletionRequest(messages=objects, tools=made)

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
            request = validator.validate_request(self._mistral_request(messages, tools))
            return list(instruct.encode_instruct(normaliser.from_chat_completion_request(request)).tokens)
        except Exception as exc:  # mistral-common's own refusal (ordering, ids, roles)
            raise TemplateRefused(self.counter.name, f"{type(exc).__name__}: {exc}") from None

    def call_ids(self, messages: list[ChatMessage], tools: list[ToolDefinition]) -> tuple[list[int], list[str], int]:
        """Ids of a recorded call, adapted the way ``count_imported`` adapts what the template refuses
        (the notes say how), and the tokens of text counted apart from the template's render (text the
        template will not take beside tool calls); raises ``TemplateRefused`` with the first refusal."""
        try:  # as recorded first: what step_sets would try first, without working out the steps
            return self.token_ids(messages, tools), [], 0
        except TemplateRefused as exc:
            first: TemplateRefused | None = exc
        for steps in step_sets(messages, self.counter)[1:]:  # fewest adaptations first, as count_imported tries them
            counted, units, notes = adapt(messages, steps, self.counter)
            if not counted:
                continue
            try:
                return self.token_ids(counted, tools), notes, sum(u.extra for u in units)
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
