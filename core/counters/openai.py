"""``openai:<model>``: a chat request counted the way OpenAI bills it (``usage.prompt_tokens``).

The text is tokenised with tiktoken in the model's encoding (``o200k_base`` for gpt-4o, gpt-4.1, gpt-5
and the o-series; ``cl100k_base`` for gpt-4 and gpt-3.5-turbo). Around it, the chat format OpenAI
wraps each message in, which it does not publish but which its billing shows:

- each message: 3 tokens (start, separator, end) plus its role; a ``name``: its tokens plus 1;
- a tool result: named by the function it answers (the call with its ``tool_call_id``);
- each tool call of an assistant message: its function name, its JSON arguments, and 3 tokens;
- the reply is primed with 3 tokens (``<|im_start|>assistant<|im_sep|>``), 2 for gpt-5 (its recorded
  usage is one lower on every request; the o-series is not measured here and keeps 3);
- tool definitions: rendered as a ``namespace functions`` block (``openai_tools``) after a 5-token
  header, inside the first system (or developer) message, whose text then gains a newline; without
  one, in a system message of their own.

The rendered text spells the wrapper with ChatML's ``<|im_start|>``/``<|im_sep|>``/``<|im_end|>``; those
and the tools header are counted as the placeholder ids above the encoding's vocabulary, since
the real ids are not public. ``README.md`` has the table of this count against recorded usage.
"""
from __future__ import annotations

import json
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import CounterError
from .base import CounterIdentity, TokenCounter, byte_pieces_as_spans
from .openai_tools import render_namespace
from .tiktoken_cache import encoding_file, load_encoding

# Model name (or prefix) -> encoding. tiktoken has its own table; this one also covers names it does not
# know yet and provider-prefixed names (``openai/gpt-4o``, ``azure/gpt-4o``).
O200K_PREFIXES = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "ft:gpt-4o")
CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "ft:gpt-4", "ft:gpt-3.5")

START, SEP, END, NAME, CALL, ARGS, CALL_END = ("<|im_start|>", "<|im_sep|>", "<|im_end|>", "<|name|>",
                                               "<|call|>", "<|args|>", "<|call_end|>")
TOOLS_HEADER = "\n\n# Tools\n\n## functions\n\n"
TOOLS_HEADER_TOKENS = 5
MARKERS = (START, SEP, END, NAME, CALL, ARGS, CALL_END, TOOLS_HEADER)
SYSTEM_ROLES = ("system", "developer")
SHORT_PRIMING_PREFIXES = ("gpt-5",)


def encoding_for(model: str) -> str:
    """The tiktoken encoding of an OpenAI chat model name; ``CounterError`` for one it cannot place."""
    bare = model.rsplit("/", 1)[-1].lower()
    if bare in ENCODINGS_BY_NAME:
        return bare
    if bare.startswith(O200K_PREFIXES):
        return "o200k_base"
    if bare.startswith(CL100K_PREFIXES):
        return "cl100k_base"
    raise CounterError(f"openai:{model}: not an OpenAI chat model this counter knows (gpt-3.5, gpt-4, gpt-4o, "
                       "gpt-4.1, gpt-5, o1/o3/o4...); or name an encoding: openai:o200k_base, openai:cl100k_base")


ENCODINGS_BY_NAME = ("o200k_base", "cl100k_base")


class OpenAICounter(TokenCounter):
    """tiktoken plus OpenAI's billed chat format (see the module docstring)."""

    def __init__(self, model: str = "gpt-4o") -> None:
        super().__init__()
        self.model = model
        self.encoding_name = encoding_for(model)
        self._enc = load_encoding(self.encoding_name)
        self._short_priming = model.rsplit("/", 1)[-1].lower().startswith(SHORT_PRIMING_PREFIXES)
        base = self._enc.n_vocab
        self._marker_id = {m: base + i for i, m in enumerate(MARKERS)}
        import tiktoken

        self._identity = CounterIdentity(
            name=f"openai:{model}", kind="openai-tiktoken", model=model,
            revision=f"tiktoken {tiktoken.__version__}, {self.encoding_name}",
            files={f"{self.encoding_name}.tiktoken": encoding_file(self.encoding_name).sha256},  # checked on load
            notes="tiktoken with OpenAI's billed chat format (per-message and reply overhead, names, tool calls, "
                  "tool definitions as a namespace of TypeScript-like types), calibrated against recorded usage")

    @property
    def identity(self) -> CounterIdentity:
        return self._identity

    # ---- the rendering, as (text, ids) pieces

    def _pieces(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[tuple[str, bool]]:
        """(text, is_marker) pieces of the request; markers count one token each (the header five)."""
        out: list[tuple[str, bool]] = []
        names: dict[str, str] = {}
        namespace = render_namespace(tools) if tools else None
        if namespace is not None and not any(m.role in SYSTEM_ROLES for m in messages):
            out += self.tools_system_pieces(namespace)
            namespace = None
        for m in messages:
            name = names.get(m.tool_call_id) if m.role == "tool" and m.tool_call_id else None
            here = namespace if m.role in SYSTEM_ROLES else None
            out += self.message_pieces(m, name, here)
            if here is not None:
                namespace = None
            names.update((call.id, call.name) for call in m.tool_calls)
        return out + self.priming_pieces()

    @staticmethod
    def tools_system_pieces(namespace: str) -> list[tuple[str, bool]]:
        """The system message of its own the tool definitions get when the request has none."""
        return [(START, True), ("system", False), (SEP, True), (TOOLS_HEADER, True), (namespace, False), (END, True)]

    def priming_pieces(self) -> list[tuple[str, bool]]:
        return [(START, True), ("assistant", False)] + ([] if self._short_priming else [(SEP, True)])

    @staticmethod
    def message_pieces(m: ChatMessage, name: str | None, namespace: str | None) -> list[tuple[str, bool]]:
        """One message's pieces: ``name`` for a tool result (its call's function), ``namespace`` for the first
        system message of a request with tools."""
        out = [(START, True), (m.role, False)]
        if name:
            out += [(NAME, True), (name, False)]
        out.append((SEP, True))
        content = m.content or ""
        if namespace is not None:
            out += [(content + "\n", False), (TOOLS_HEADER, True), (namespace, False)]
        elif content:
            out.append((content, False))
        for call in m.tool_calls:
            arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(
                call.arguments, ensure_ascii=False)
            out += [(CALL, True), (call.name, False), (ARGS, True), (arguments, False), (CALL_END, True)]
        out.append((END, True))
        return out

    def pieces_count(self, pieces: list[tuple[str, bool]]) -> int:
        """Tokens of pieces, as ``token_ids`` emits them (texts through the per-text cache)."""
        return sum((TOOLS_HEADER_TOKENS if text == TOOLS_HEADER else 1) if marker else
                   (self.text_count(text) if text else 0) for text, marker in pieces)

    def variant_counts(self, messages, tools, total, rendered=None):
        from .openai_variants import variants

        return variants(self, messages, tools, total)

    def token_ids(self, messages, tools) -> list[int]:
        ids: list[int] = []
        for text, marker in self._pieces(messages, tools):
            if marker:
                ids += [self._marker_id[text]] * (TOOLS_HEADER_TOKENS if text == TOOLS_HEADER else 1)
            elif text:
                ids += self._enc.encode_ordinary(text)
        return ids

    def render_text(self, messages, tools) -> str:
        return "".join(text for text, _ in self._pieces(messages, tools))

    def text_token_count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        ids = self._enc.encode_ordinary(text)
        return byte_pieces_as_spans(text, [(i, self._enc.decode_single_token_bytes(i)) for i in ids])

    def control_token_strings(self) -> list[str]:
        return sorted((m for m in MARKERS if m != TOOLS_HEADER), key=lambda s: (-len(s), s))

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        return []  # the API reads special-token spellings in message text as plain text
