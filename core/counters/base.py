"""What every counter is: an identity (who counted) and a whole-request count with its caches."""
from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections import OrderedDict
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..contracts import ChatMessage, ToolDefinition
from .spellings import SpellingScan

class CounterIdentity(BaseModel):
    """Who counted: enough to tell whether two counts are comparable."""

    model_config = ConfigDict(extra="allow")

    name: str
    kind: str = "unknown"
    model: str | None = None
    revision: str | None = None
    template_sha256: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    notes: str | None = None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Message fields a template may compare by value without one message's cost depending on another's text: a
# request's tool call ids are unique (validation refuses a repeat). See ``compared_message_fields``.
ID_FIELDS = frozenset({"tool_calls", "tool_call_id", "id"})


class TokenCounter(ABC):
    """Counts a complete request (messages + tools) exactly as the model would receive it."""

    cache_size = 4096

    def __init__(self) -> None:
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._text_cache: dict[str, int] = {}
        self.full_counts = 0  # complete-request tokenisations actually performed (cache misses)
        self.item_counts = 0  # single-text tokenisations actually performed (cache misses)

    @property
    @abstractmethod
    def identity(self) -> CounterIdentity: ...

    @property
    def name(self) -> str:
        return self.identity.name

    # The model's context window, where known: set by the caller (``make_counter(spec,
    # context_window=N)``) or, for hf: directories, read from the tokenizer's model_max_length.
    context_window: int | None = None
    # Tokens a provider adds once to a request that offers tools (Anthropic's tool-use system prompt, in an
    # estimate); the count of an imported request puts them in the template entry, not on the first tool.
    tools_fixed_tokens: int = 0

    @property
    def declared_context_window(self) -> int | None:
        return self.context_window

    @abstractmethod
    def token_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int]:
        """Token ids of the rendered request, generation prefix included."""

    @abstractmethod
    def render_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> str:
        """The request as text, control tokens written out, as the model sees it."""

    def count_whole(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]
                    ) -> tuple[int, list[int] | None]:
        """One complete tokenisation of the request, uncached: ``len(token_ids(...))``, and the ids where
        ``text_of_ids`` can use them (``None`` otherwise: a counter may count without keeping them)."""
        ids = self.token_ids(messages, tools)
        return len(ids), (ids if type(self).text_of_ids is not TokenCounter.text_of_ids else None)

    def text_of_ids(self, ids: Sequence[int]) -> str | None:
        """``render_text`` of a request from the ids ``token_ids`` gave for it, where this counter turns ids
        back into exactly that text (so a caller holding the ids need not render again); else ``None``."""
        return None

    @abstractmethod
    def control_token_strings(self) -> list[str]:
        """Literal spellings of the tokenizer's control (special) tokens."""

    @abstractmethod
    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        """Control-token literals in ``text`` that this tokenizer would read as control tokens,
        as ``(literal, start, end)`` character spans."""

    def untrusted_spellings(self) -> list[str]:
        """Every spelling this tokenizer reads out of raw text as one token of its own (control tokens,
        and added role or structure markers): what untrusted text is neutralised against (core.neutralise)."""
        return self.control_token_strings()

    def holds_untrusted_spelling(self, text: str) -> bool:
        """Whether ``text`` holds any of ``untrusted_spellings`` as written: one scan of the text (the
        spellings are compiled once per counter), before anything costlier looks at it."""
        return self.spelling_scan(self.untrusted_spellings, "untrusted").any_in(text)

    def spelling_scan(self, spellings, key: str) -> SpellingScan:
        """The scan for one set of this counter's spellings (``spellings`` is called once, on first use)."""
        scans = self.__dict__.setdefault("_spelling_scans", {})
        scan = scans.get(key)
        if scan is None:
            scan = scans[key] = SpellingScan(spellings())
        return scan

    def text_is_never_control(self) -> bool:
        """Whether this tokenizer reads no text at all as a control or marker token (``reads_as_control`` is
        False for every text): then untrusted text needs no neutralising, and is not scanned to learn that."""
        return False

    def reads_as_control(self, text: str) -> bool:
        """Whether this tokenizer reads any part of ``text`` (on its own) as a control or marker token."""
        return bool(self.control_tokens_in(text))

    def control_token_ids(self) -> set[int]:
        """Ids of the tokens ``untrusted_spellings`` become (empty when this tokenizer reads none of them
        out of text): the audit counts them in the emitted ids."""
        return set()
    def role_marker_strings(self) -> list[str]:
        """Added tokens the chat template uses as role or structure markers without flagging them special
        (Qwen's ``<tool_call>``, DeepSeek's ``<｜User｜>``...): text spelling one is read as that token."""
        return []

    def role_markers_in(self, text: str) -> list[tuple[str, int, int]]:
        """Spans of ``role_marker_strings`` in ``text`` that this tokenizer reads as the marker's own token."""
        return []

    @abstractmethod
    def text_token_count(self, text: str) -> int:
        """Tokens of ``text`` on its own, no control tokens added (the tokenizer's plain encoding)."""

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens ``text_token_count`` counts, in order, as (token id, start, end) character spans of
        ``text`` (a token inside one multi-byte character spans it, as the one before or after does).
        ``core.token_view`` shows them."""
        from ..errors import CapabilityError

        raise CapabilityError(f"{self.name} cannot list the tokens of a text")

    def text_count(self, text: str) -> int:
        """``text_token_count`` cached by content: an item's text is tokenised once per counter."""
        hit = self._text_cache.get(text)
        if hit is None:
            hit = self.text_token_count(text)
            self.item_counts += 1
            if len(self._text_cache) >= 65536:
                self._text_cache.clear()
            self._text_cache[text] = hit
        return hit

    def counted_texts(self):
        """A lookup of the texts ``text_count`` has counted (a text's count, ``None`` where it has not), without a call
        a text, for a loop over thousands of them; one that finds none where a counter counts texts its own way."""
        return self._text_cache.get if type(self).text_count is TokenCounter.text_count else {}.get

    def text_counts(self, texts: Sequence[str]) -> list[int]:
        """``text_count`` of each of ``texts`` in one pass: the cached ones looked up, the others counted together
        (``text_token_counts``) and cached, each distinct text once."""
        cache = self._text_cache
        found = list(map(cache.get, texts))
        if None not in found:
            return found
        missing = list(dict.fromkeys(text for text, hit in zip(texts, found) if hit is None))
        counted = dict(zip(missing, self.text_token_counts(missing)))
        self.item_counts += len(missing)
        if len(cache) + len(missing) >= 65536:
            cache.clear()
        cache.update(counted)
        return [counted[text] if hit is None else hit for text, hit in zip(texts, found)]

    def text_token_counts(self, texts: Sequence[str]) -> list[int]:
        """``text_token_count`` of each of ``texts`` (a counter whose tokenizer counts several at once says so here)."""
        return [self.text_token_count(text) for text in texts]

    def compared_message_fields(self) -> frozenset[str]:
        """Message fields the chat template compares between messages by value (``"message"``: whole
        messages; ``"content"``, ``"tool_call_id"``...): where two messages hold equal values there, what one
        adds to the count can depend on the other. Empty for templates that render each message on its own."""
        return frozenset()

    def variant_counts(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition], total: int,
                       rendered: str | None = None):
        """An object whose ``count(start, end)`` gives the exact complete count of ``messages[:start] +
        messages[end:]`` (``None`` when the template refuses it) faster than counting it whole, raising an
        exception where it cannot say; ``None`` when this counter has none (every variant is counted whole).
        ``total`` is the complete count of ``messages`` and ``tools``; ``rendered``, where the caller has it, their
        ``render_text`` (``count_and_render_text`` gave both), so it is not rendered again."""
        return None

    @staticmethod
    def request_key(messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> str:
        """The request's content as one string: what the count cache is keyed by. Keys keep their order (a
        template writes a tool's schema and a call's arguments in their order: reordered, they count anew)."""
        return json.dumps([[m.to_json() for m in messages], [t.model_dump() for t in tools]], ensure_ascii=False)

    def last_token_ids(self, key: str) -> list[int] | None:
        """The ids of the last request ``count`` tokenised, if its key is ``key`` (an audit recounts a request
        and then renders it: one tokenisation serves both)."""
        last = self.__dict__.get("_last_ids")  # None where the count kept no ids (``count_whole``)
        return last[1] if last is not None and last[0] == key else None

    def count(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> int:
        key = self.request_key(messages, tools)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        value, ids = self.count_whole(messages, tools)
        self._last_ids = (key, ids) if ids is not None else None
        self.full_counts += 1
        self._cache[key] = value
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return value

    def count_reusing_texts(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> int:
        """A complete count of the request that may reuse this counter's text counts for the spans the request
        renders into (the span memo), where a counter can vouch that this is still the whole request's count
        (``MistralCounter``: every span between control tokens is encoded on its own; ``HFCounter``: every piece
        between added tokens, where its tokenizer tokenises them apart). Opt-in: the default
        assembly's counts use it; ``token_ids``, ``count``, ``count_whole`` and the reference assembly never do.
        Here (every other counter): ``count``."""
        return self.count(messages, tools)

    def refuses_surely(self, messages: Sequence[ChatMessage]) -> bool:
        """Whether this counter's chat template refuses ``messages`` whatever their texts and the tools, known
        without rendering them (a probe that only asks whether a prompt is taken need not count it). False where
        the counter cannot tell: ``count`` then says."""
        return False

    def rewritten_by_template(self, text: str) -> bool:
        """Whether the chat template may write ``text`` otherwise than as it is, by what it holds (Qwen3 leaves the
        reasoning before ``</think>`` out of earlier replies: ``core.counters.template_rewrites``): an item whose
        text does is counted in its place, not predicted from its text count."""
        test = self.rewrite_test()
        return test is not None and test(text)

    def rewrite_test(self):
        """``rewritten_by_template`` as a ``text -> bool`` to call for each of many texts, or ``None`` where the
        template writes every text as it is (here: a template of this project's own)."""
        return None

    def carried_state(self) -> tuple[str, ...]:
        """What the chat template carries from one message to the next (``ns.is_first``: the official DeepSeek-R1
        template writes the conversation's first tool call otherwise than every later one;
        ``core.counters.template_state``): where a request holds tool calls, what one item adds then depends on the
        items before it, and the assemblies count it with the reference method. Empty here (the templates of this
        project's own counters carry none)."""
        return ()

    def splits_between_messages(self) -> bool:
        """Whether the chat template writes a token the tokenizer reads out of text wherever it stands between one
        message's text and the next (``core.counters.template_state``), so no message's text runs into the next
        one's: the default assemblies price items apart only where it does. True here."""
        return True

    def starts_alike_in_place(self) -> bool:
        """Whether the tokens of a message's text in the prompt are its own tokens plus a constant of its place,
        whatever word the text starts with (``core.counters.template_probes``): not so where the template's own text
        runs into a message's first word, or the tokenizer marks the start of each stretch of text between added tokens
        and the template writes text right before a message's.
        The default assemblies price items apart only where it holds. True here."""
        return True

    def state_outside_tools(self) -> tuple[str, ...]:
        """The part of ``carried_state`` that messages other than tool calls and results change (DeepSeek V4 tracks
        whether the message before was a user's): then a request without tool calls is counted with the reference
        method too. Empty here."""
        return ()

    def reasoning_by_position(self) -> bool:
        """Whether the chat template writes a reply whose text it rewrites otherwise once a question or another reply
        follows it (Qwen3 and GLM keep reasoning after the last question only; DeepSeek-R1 drops it wherever the reply
        stands). False here."""
        return False

    def rewrites_by_later_reply(self) -> bool:
        """Whether the chat template writes a reply whose text it rewrites (``rewrite_test``) otherwise once another
        reply follows it (LFM2.5 keeps the reasoning of the last reply only; Qwen3 of every reply after the last
        question, whatever follows): an entry or turn that adds a reply then changes an earlier one. False here."""
        return False

    def tool_call_text_by_later_reply(self) -> bool:
        """Whether the chat template writes the text beside a tool call otherwise once a reply without tool calls
        follows it (gpt-oss keeps it as analysis only while no final reply follows): what a turn adds then depends on
        the turns after it, so the assemblies count such requests with the reference method and make no variant
        counts for them (``core.repeats.call_text_moves``). False here."""
        return False

    def writes_by_turn(self) -> bool:
        """Whether this counter's chat template may write a message otherwise by whether a user message comes
        before it (Qwen3 writes the reply that ends a prompt after a user message with an empty thinking block):
        a plan's small prompts then carry the user message that opens the turn. True where the counter cannot
        tell (a template of its own, a renderer it does not know)."""
        return True

    counts_with_text = False  # whether ``count_and_render_text`` costs what ``count_reusing_texts`` costs (``HFCounter``)

    def count_and_render_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]
                              ) -> tuple[int, str] | None:
        """``(count_reusing_texts(...), render_text(...))`` from one rendering of the request, where a counter can
        give both at once (``MistralCounter``, ``HFCounter``; a complete count, told in ``full_counts`` as
        ``count_reusing_texts`` tells it); ``None`` here: they are asked apart."""
        return None

    def count_whole_reusing_texts(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]
                                  ) -> tuple[int, list[int] | None]:
        """``count_whole`` with the span memo of ``count_reusing_texts``, uncached; here: ``count_whole``."""
        return self.count_whole(messages, tools)


def byte_pieces_as_spans(text: str, pieces: list[tuple[int, bytes]]) -> list[tuple[int, int, int]]:
    """(id, UTF-8 bytes) tokens of ``text`` as (id, start, end) character spans. A token that begins or
    ends inside a character is widened to the whole character."""
    starts: list[int] = []  # the character each byte belongs to
    for index, char in enumerate(text):
        starts.extend([index] * len(char.encode("utf-8")))
    spans, offset = [], 0
    for token_id, piece in pieces:
        end_byte = offset + len(piece)
        start = starts[offset] if offset < len(starts) else len(text)
        end = starts[end_byte - 1] + 1 if 0 < end_byte <= len(starts) else start
        spans.append((token_id, start, end))
        offset = end_byte
    return spans


def literal_spans(text: str, literals: Sequence[str]) -> list[tuple[str, int, int]]:
    spans: list[tuple[str, int, int]] = []
    taken = [False] * len(text)
    for literal in sorted(literals, key=len, reverse=True):
        if not literal:
            continue
        start = text.find(literal)
        while start != -1:
            end = start + len(literal)
            if not any(taken[start:end]):
                spans.append((literal, start, end))
                for i in range(start, end):
                    taken[i] = True
            start = text.find(literal, start + 1)
    return sorted(spans, key=lambda s: s[1])
