"""The complete count of a ``mistral:`` tekken request in one pass over our own messages.

mistral-common's ``encode_chat_completion`` builds pydantic messages, validates them, builds normalised
copies, encodes each span, offsets every token id in a Python loop (``[t + self.num_special_tokens for t in
tokens]``, a property read per token) and then decodes the whole request back to text it does not need for
a count. For the instruct template the bundled tekken files use (``InstructTokenizerV3`` over a
``Tekkenizer``, ``InstructRequestNormalizer``, ``MistralRequestValidatorV3``) this module does the same
steps on plain strings: the same aggregation of same-role runs and system prompts, the same JSON of tool
calls and tool results, the same control tokens, and each text span encoded by tekken's tiktoken core
with the id offset applied in one C-level step (``map``).

It only ever answers for requests mistral-common accepts: every check its validator makes is made here,
and any request this path is not sure of (a check failing, an exception, a tokenizer of another kind)
raises ``Unsure`` so the caller runs mistral-common's own path, which then accepts or refuses in its own
words. ``tests/test_mistral_render.py`` checks the ids against ``encode_chat_completion`` request by request.
"""
from __future__ import annotations

import json
import re
from operator import add
from functools import partial
from typing import Any, Callable, Sequence

from ..contracts import ChatMessage, ToolDefinition

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CALL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_FOLLOWS = {"system": {"user", "assistant", "system"}, "user": {"assistant", "system", "user"},
            "assistant": {"assistant", "user", "tool"}, "tool": {"assistant", "tool", "user"}}


# tekken's pre-tokenising pattern (the bundled files' ``pattern``): BPE runs within each match it finds.
TEKKEN_PATTERN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
                  r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|"
                  r"\s+(?!\S)|\s+")
SLICE = 1 << 12  # characters: a span longer than this is counted a slice at a time
_CUT = ">\n<"
_SURROGATE = re.compile("[\ud800-\udfff]")  # the only code points UTF-8 cannot encode


def _slices(text: str):
    r"""``text`` in slices of at least ``SLICE`` characters, each cut after a ``>\n`` that a ``<`` follows (the seam
    between two evidence blocks). Under ``TEKKEN_PATTERN`` a match ends there, in the whole text and in the slice
    before it alike: no alternative takes a newline and then a character that is neither space nor ``\r\n/``; the
    ``>`` before it is taken by `` ?[^\s\p{L}\p{N}]+[\r\n/]*`` with its newline whatever follows; and the pattern
    looks behind nothing, so the slice after it is matched as the whole text is from there."""
    start = 0
    while len(text) - start > SLICE:
        cut = text.find(_CUT, start + SLICE)
        if cut < 0:
            break
        yield text[start:cut + 2]
        start = cut + 2
    yield text[start:]


class Unsure(Exception):
    """This path cannot vouch for the request: run mistral-common's own."""


def fast_renderer(mistral_tokenizer: Any, map_id: Callable[[str], str],
                  tools_json: Callable[[Sequence[ToolDefinition]], str]) -> "V3Tekken | None":
    """The renderer for a loaded ``MistralTokenizer`` whose parts are exactly the ones this module mirrors."""
    try:
        from mistral_common.protocol.instruct.normalize import InstructRequestNormalizer
        from mistral_common.protocol.instruct.validator import MistralRequestValidatorV3, ValidationMode
        from mistral_common.tokens.tokenizers.instruct import InstructTokenizerV3
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    except ImportError:  # a later mistral-common moved them: its own path only
        return None
    instruct = mistral_tokenizer.instruct_tokenizer
    validator = getattr(mistral_tokenizer, "_chat_completion_request_validator", None)
    normaliser = getattr(mistral_tokenizer, "_instruct_request_normalizer", None)
    raw = instruct.tokenizer
    if (type(instruct) is not InstructTokenizerV3 or type(raw) is not Tekkenizer
            or type(normaliser) is not InstructRequestNormalizer or type(validator) is not MistralRequestValidatorV3
            or getattr(validator, "mode", None) != ValidationMode.test or raw.model_settings_builder is not None
            or getattr(raw._model, "_special_tokens", None)):
        return None
    return V3Tekken(instruct, raw, map_id, tools_json)


class V3Tekken:
    """``InstructTokenizerV3.encode_instruct`` of a validated, normalised request, straight from ``ChatMessage``s."""

    def __init__(self, instruct: Any, raw: Any, map_id: Callable[[str], str],
                 tools_json: Callable[[Sequence[ToolDefinition]], str]) -> None:
        self._encode = raw._model.encode_ordinary  # no special tokens registered: the ids of ``encode``
        self._decode = raw._model.decode
        self._control_text: dict[int, str] = {}  # a control id's spelling, looked up when first written
        self._id_to_piece = raw.id_to_piece
        self._offset = partial(add, raw.num_special_tokens)
        self.bos, self.eos = raw.bos_id, raw.eos_id
        self.inst, self.end_inst = instruct.BEGIN_INST, instruct.END_INST
        self.tools_begin, self.tools_end = instruct.BEGIN_AVAILABLE_TOOLS, instruct.END_AVAILABLE_TOOLS
        self.result_begin, self.result_end = instruct.BEGIN_TOOL_RESULTS, instruct.END_TOOL_RESULTS
        self.calls = instruct.TOOL_CALLS
        self._map_id = map_id
        self._tools_json = tools_json
        self._sliceable = raw._model._pat_str == TEKKEN_PATTERN

    def token_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int]:
        out: list[int] = []
        encode, offset = self._encode, self._offset
        for piece in self._pieces(messages, tools):
            if piece.__class__ is int:
                out.append(piece)
            else:
                out.extend(map(offset, encode(piece)))
        return out

    def count(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> int:
        """``len(token_ids(...))``: every span encoded as ``token_ids`` encodes it, without offsetting or keeping ids.
        A long span is encoded in slices cut where tekken's pre-tokeniser always cuts (``_slices``), so no id list
        of a whole long request is ever held: the same ids, a slice at a time."""
        encode, total = self._encode, 0
        for piece in self._pieces(messages, tools):
            if piece.__class__ is int:
                total += 1
            elif len(piece) <= SLICE or not self._sliceable:
                total += len(encode(piece))
            else:
                total += sum(len(encode(part)) for part in _slices(piece))
        return total

    def render_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> str:
        """mistral-common's decode of the ids with control tokens kept: each span between control tokens decodes
        to its own text (byte-level BPE is lossless on UTF-8; text tiktoken had to repair goes through it)."""
        out = []
        for piece in self._pieces(messages, tools):
            if piece.__class__ is int:
                text = self._control_text.get(piece)
                if text is None:
                    text = self._control_text[piece] = self._id_to_piece(piece)
                out.append(text)
            elif piece.isascii() or _SURROGATE.search(piece) is None:  # UTF-8 encodes it: no copy made to learn that
                out.append(piece)
            else:
                out.append(self._decode(self._encode(piece)))
        return "".join(out)

    def _pieces(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int | str]:
        """The request as control token ids (``int``) and non-empty text spans (``str``), in order."""
        self._validate(messages)
        tools_text = self._tools_json(tools) if tools else ""  # mistral-common's own tool checks, memoised
        system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
        runs = self._runs(messages)
        last_user = max(i for i, (role, _) in enumerate(runs) if role == "user")
        out: list[int | str] = [self.bos]
        for i, (role, group) in enumerate(runs):
            if role == "user":
                content = _joined(group)
                if i == last_user:
                    if tools_text:
                        out += [self.tools_begin, tools_text, self.tools_end]
                    if system:
                        content = system + "\n\n" + content
                out += [self.inst, content, self.end_inst]
            elif role == "assistant":
                content = _joined(group)
                calls = [c for m in group for c in m.tool_calls]
                if calls and content:
                    raise Unsure("text and tool calls in one aggregated assistant turn")
                if calls:
                    out += [self.calls, json.dumps([self._call(c) for c in calls], ensure_ascii=False)]
                else:
                    out.append(content.rstrip(" "))
                out.append(self.eos)
            else:
                for m in group:
                    result = {"content": _parsed(_normalised(m.content)), "call_id": self._map_id(m.tool_call_id or "")}
                    out += [self.result_begin, json.dumps(result, ensure_ascii=False), self.result_end]
        return [p for p in out if p != ""]

    def _call(self, call: Any) -> dict[str, Any]:
        arguments = _parsed(_normalised(json.dumps(call.arguments, ensure_ascii=False)))
        return {"name": call.name, "arguments": arguments, "id": self._map_id(call.id)}

    @staticmethod
    def _runs(messages: Sequence[ChatMessage]) -> list[tuple[str, list[ChatMessage]]]:
        """The normaliser's aggregation: runs of one role (a system message ends a run and is dropped; tool
        results stay one each), an empty user turn first when the conversation does not open with one."""
        runs: list[tuple[str, list[ChatMessage]]] = []
        role = None
        for m in messages:
            if m.role != role:
                role = m.role
                runs.append((role, []))
            runs[-1][1].append(m)
        runs = [r for r in runs if r[0] != "system"]
        if not runs or runs[0][0] != "user":
            runs.insert(0, ("user", [ChatMessage(role="user", content="")]))
        return runs

    def _validate(self, messages: Sequence[ChatMessage]) -> None:
        """``MistralRequestValidatorV3`` in test mode, as strict or stricter: a request it refuses is never
        answered here."""
        if not messages:
            raise Unsure("no messages")
        if len(messages) == 1 and messages[0].role not in ("user", "system"):
            raise Unsure("a single message that is not user or system")
        if len(messages) > 1 and messages[-1].role == "assistant":
            raise Unsure("ends with an assistant message")
        previous = None
        expected = 0
        for n, m in enumerate(messages):
            if previous is not None and m.role not in _FOLLOWS[previous]:
                raise Unsure(f"{m.role} after {previous}")
            if n:
                if m.role == "tool":
                    expected -= 1
                elif m.role == "assistant":
                    if expected:
                        raise Unsure("calls and results do not pair")
                    if m.tool_calls:
                        expected = len(m.tool_calls)
            previous = m.role
            if m.role == "assistant":
                if bool(m.content) == bool(m.tool_calls):
                    raise Unsure("an assistant message needs text or tool calls, not both")
                for c in m.tool_calls:
                    if not _NAME.fullmatch(c.name) or not _CALL_ID.fullmatch(self._map_id(c.id)):
                        raise Unsure("a tool call name or id mistral-common checks")
            elif m.role == "tool" and not _CALL_ID.fullmatch(self._map_id(m.tool_call_id or "")):
                raise Unsure("a tool result id mistral-common checks")
            elif m.role in ("user", "system") and m.tool_calls:
                raise Unsure("tool calls on a user or system message")


def _joined(group: Sequence[ChatMessage]) -> str:
    """The normaliser's join of a run's texts: empty ones skipped, the rest joined by a blank line."""
    return "\n\n".join(m.content for m in group if m.content)


def _normalised(content: str | None) -> str:
    """``InstructRequestNormalizer._normalize_json_content``."""
    if not content:
        return "{}"
    try:
        return json.dumps(json.loads(content), ensure_ascii=False)
    except json.JSONDecodeError:
        return content


def _parsed(content: str) -> Any:
    """``InstructTokenizerV2._parse_json_content``."""
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return content
