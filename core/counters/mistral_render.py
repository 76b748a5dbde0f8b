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

``count`` is ``len(token_ids(...))`` without the id list (a long span is encoded a slice at a time, cut where
tekken's pre-tokeniser always cuts: ``tests/test_assembly_shortcuts.py``), and ``render_text`` writes the spans
as they are, the text mistral-common's decode of the ids gives (so an assembly's final check needs no ids).

The span memo (``count``'s ``known``, opt-in: only the default assembly's counts pass it, through
``MistralCounter.count_reusing_texts``). What is reused: the count of a span, by its exact string, from the
counter's text counts (``TokenCounter.text_count``, which counts with the same ``encode_ordinary`` of the same
tekken core, no special tokens registered; a long span's slices give the same count), to which the spans this
count encodes are added (short ones only). Why the total is still the whole request's count: the request is
rendered into its pieces each time exactly as ``token_ids`` renders it, and mistral-common encodes each text
span between control tokens on its own, so the total is the sum of the spans' counts plus one per control
token; only the per-span tokenisation is memoised, and a span not found is encoded. A span the normaliser joins
from several texts (a run of one role, the system prompt before the last user turn) is counted from each
text's count and the stretches between tekken's cuts across each join (``core.counters.tekken_cuts``): where a
text has no cut near its edges it stays in the stretch encoded. ``tests/test_span_memo.py`` checks every count
against ``len(token_ids(...))``.
"""
from __future__ import annotations

import json
import re
from operator import add
from functools import partial
from typing import Any, Callable, Sequence

from ..contracts import ChatMessage, ToolDefinition
from .mistral_checks import Unsure, V3Checks, _joined, _normalised, _parsed
from .tekken_cuts import JOIN, TEKKEN_PATTERN, Joined, _plain, joined_count, joined_whole



# tekken's pre-tokenising pattern (the bundled files' ``pattern``, ``tekken_cuts.TEKKEN_PATTERN``): BPE runs within
# each match it finds.
SLICE = 1 << 12  # characters: a span longer than this is counted a slice at a time
_CUT = ">\n<"
LONG_KEPT, LONG_MAX = 4, 1 << 16  # long uncut texts whose counts a renderer remembers, and their largest size
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


_TURN_END = ChatMessage(role="user", content="Next")  # what follows a history turn in ``V3Tekken.turn_pieces``


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


class V3Tekken(V3Checks):
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
        self._json_memo: dict[tuple, str] = {}  # tool calls' and results' JSON by content
        self._cuts: dict[str, tuple] = {}  # a joined text's first and last cut (``_joined_count``)
        self._long: dict[str, int] = {}  # long texts without a cut -> their count (``_long_count``)
        self._passed: set = set()  # tool call (name, id) pairs and result ids that passed ``_validate``'s checks

    def token_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int]:
        out: list[int] = []
        encode, offset = self._encode, self._offset
        for piece in self._pieces(messages, tools):
            if piece.__class__ is int:
                out.append(piece)
            else:
                out.extend(map(offset, encode(piece)))
        return out

    def count(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
              known: dict[str, int] | None = None, tally: list[int] | None = None) -> int:
        """``len(token_ids(...))``: every span encoded as ``token_ids`` encodes it, without offsetting or keeping ids.
        A long span is encoded in slices cut where tekken's pre-tokeniser always cuts (``_slices``), so no id list
        of a whole long request is ever held: the same ids, a slice at a time.

        ``known`` (the span memo, opt-in): counts of texts by content, each ``len(encode_ordinary(text))`` with
        this renderer's own encoder (the caller vouches for that: ``MistralCounter.count_reusing_texts``). The
        request is rendered into its spans exactly as without it; a span whose exact string is in ``known`` takes
        its count from there, any other is encoded. Each span is encoded on its own either way (mistral-common
        encodes the text between two control tokens by itself), so the total is still the whole request's count.
        ``tally``, if given, gets the spans found in ``known`` and those encoded added to its two entries."""
        encode, total = self._encode, 0
        hits = misses = 0
        for piece in self._pieces(messages, tools, parts=known is not None):
            if piece.__class__ is int:
                total += 1
                continue
            if piece.__class__ is Joined:
                value, found = self._joined_count(piece, known)
                total += value
                hits += found
                misses += not found
                continue
            if known is not None:
                value = known.get(piece)
                if value is not None:
                    total += value
                    hits += 1
                    continue
                misses += 1
                total += self._span_count(piece, known)
                continue
            if len(piece) <= SLICE or not self._sliceable:
                total += len(encode(piece))
            else:
                total += sum(len(encode(part)) for part in _slices(piece))
        if tally is not None:
            tally[0] += hits
            tally[1] += misses
        return total

    def count_and_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
                       known: dict[str, int], tally: list[int] | None = None) -> tuple[int, str | None]:
        """``count(messages, tools, known)`` and ``render_text(messages, tools)`` from one rendering of the request
        into its pieces (an audit recounts a request, then looks for each sent text in the prompt): the same
        pieces as that count, each span counted as it counts it; the text joins them as the normaliser does
        (``JOIN.join`` of a joined span's texts). The text is ``None`` where a span holds a code point UTF-8
        cannot encode (``render_text`` writes what tiktoken's repair of it decodes to: asked for apart)."""
        total, out = 0, []
        for piece in self._pieces(messages, tools, parts=True):
            if piece.__class__ is int:
                total += 1
                text = self._control_text.get(piece)
                if text is None:
                    text = self._control_text[piece] = self._id_to_piece(piece)
                out.append(text)
                continue
            if piece.__class__ is Joined:
                value, found = self._joined_count(piece, known)
                total += value
                if tally is not None:
                    tally[0 if found else 1] += 1
                for n, text in enumerate(piece):  # its texts, not one more copy of them joined (a run of users)
                    if not (text.isascii() or _SURROGATE.search(text) is None):
                        return total, None
                    if n:
                        out.append(JOIN)
                    out.append(text)
                continue
            else:
                value = known.get(piece)
                found = value is not None
                total += value if found else self._span_count(piece, known)
                text = piece
            if tally is not None:
                tally[0 if found else 1] += 1
            if not (text.isascii() or _SURROGATE.search(text) is None):
                return total, None
            out.append(text)
        return total, "".join(out)

    def _joined_count(self, parts: Joined, known: dict[str, int]) -> tuple[int, bool]:
        """The count of ``JOIN.join(parts)`` (``tekken_cuts.joined_count``), with whether every text was in ``known``;
        a short joined text counted whole before (``MistralCounter.turn_count``) is taken from ``known`` as it is."""
        if sum(map(len, parts)) + len(JOIN) * (len(parts) - 1) <= SLICE:
            value = known.get(JOIN.join(parts))
            if value is not None:
                return value, True
        if not self._sliceable or not all(map(_plain, parts)):  # another pattern, or text tiktoken must repair
            return self._span_count(JOIN.join(parts), known), False
        if joined_whole(parts, known):
            return self._span_count(JOIN.join(parts), known), False
        if len(self._cuts) >= 65536:
            self._cuts.clear()
        return joined_count(parts, known, lambda text: self._span_count(text, known), self._cuts)

    def _span_count(self, text: str, known: dict[str, int]) -> int:
        """One text's count, from ``known`` or encoded (and remembered there when short). A long text is not kept
        (its memory): where the pattern is the one ``_slices`` knows, it is counted slice by slice, cut at every
        seam ``_slices`` cuts at (between two evidence blocks), each slice from ``known`` where it is there (a
        passage's block, counted alone) or encoded."""
        value = known.get(text)
        if value is not None:
            return value
        if len(text) > SLICE:
            if not self._sliceable:
                return len(self._encode(text))
            if _CUT not in text:  # encoded whole (the tool list's JSON, in every complete count): a few remembered
                return self._long_count(text)
            total, start = 0, 0
            while True:
                cut = text.find(_CUT, start)
                part = text[start:] if cut < 0 else text[start:cut + 2]
                value = known.get(part)
                total += len(self._encode(part)) if value is None else value
                if cut < 0:
                    return total
                start = cut + 2
        if len(known) >= 65536:
            known.clear()
        value = known[text] = len(self._encode(text))
        return value

    def turn_pieces(self, messages: Sequence[Any]) -> list[int | str] | None:
        """The pieces (``_pieces``: control ids and text spans) a history turn renders to where it opens with a user
        message, ends with another role, holds no system message and answers each of its calls, and a user message
        follows it (a turn of the assembly: the next turn's or the current one): its runs as ``_pieces`` writes every
        run but the last user one, validated as that turn and one user message after it. Every text span is encoded
        on its own, so the turn adds one token per control id and each span's count wherever it stands. ``None``
        where this path is not sure of it."""
        if not messages or messages[0].role != "user" or messages[-1].role == "user":
            return None
        calls = results = 0
        for m in messages:
            if m.role == "system":
                return None
            calls += len(m.tool_calls)
            results += m.role == "tool"
        if calls != results:  # a call left without its result: whether the request pairs them depends on what follows
            return None
        out: list = []
        try:
            self._validate([*messages, _TURN_END])
            for role, group in self._runs(messages):
                self._run_pieces(role, group, out)
        except Exception:  # noqa: BLE001 - not sure of it: no pieces
            return None
        return [p for p in out if p != ""]

    def _long_count(self, text: str) -> int:
        """``len(encode(text))`` of a long text without a cut, the last ``LONG_KEPT`` of them (up to ``LONG_MAX``
        characters each) remembered: the tool list's JSON is the same long span in every count of a request."""
        value = self._long.get(text)
        if value is None:
            value = len(self._encode(text))
            if len(text) <= LONG_MAX:
                if len(self._long) >= LONG_KEPT:
                    self._long.pop(next(iter(self._long)))
                self._long[text] = value
        return value

    def render_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> str:
        """mistral-common's decode of the ids with control tokens kept: each span between control tokens decodes
        to its own text (byte-level BPE is lossless on UTF-8; text tiktoken had to repair goes through it)."""
        out = []
        for piece in self._pieces(messages, tools, apart=True):
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

    def _pieces(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition], apart: bool = False,
                parts: bool = False) -> list[int | str | Joined]:
        """The request as control token ids (``int``) and non-empty text spans (``str``), in order. ``apart``
        (for the text, not the ids): the system prompt and the last user turn it opens are two pieces, so a long
        last turn is not copied to join them (the text joins every piece anyway). ``parts`` (for the span memo's
        count only): a span the normaliser joins from several texts is given as those texts (``Joined``)."""
        self._validate(messages)
        tools_text = self._tools_json(tools) if tools else ""  # mistral-common's own tool checks, memoised
        systems = [m.content for m in messages if m.role == "system" and m.content]
        system = "\n\n".join(systems)
        runs = self._runs(messages)
        last_user = max(i for i, (role, _) in enumerate(runs) if role == "user")
        out: list[int | str | Joined] = [self.bos]
        for i, (role, group) in enumerate(runs):
            if i != last_user:
                self._run_pieces(role, group, out, parts)
                continue
            if tools_text:
                out += [self.tools_begin, tools_text, self.tools_end]
            if not system:
                self._run_pieces(role, group, out, parts)
            elif apart:
                out += [self.inst, system + "\n\n", _joined(group), self.end_inst]
            elif parts:  # the system texts, then the run's (an empty run: the join's blank line)
                out += [self.inst, Joined(systems + ([m.content for m in group if m.content] or [""])), self.end_inst]
            else:
                out += [self.inst, system + "\n\n" + _joined(group), self.end_inst]
        return [p for p in out if p != ""]

    def _run_pieces(self, role: str, group: Sequence[ChatMessage], out: list, parts: bool = False) -> None:
        """The pieces of one run of ``role`` that is not the last user run (``_pieces``; ``parts`` as there)."""
        if role == "user":
            content = _joined(group)
            if parts and len(group) > 1:
                texts = [m.content for m in group if m.content]
                if len(texts) > 1:
                    content = Joined(texts)
            out += [self.inst, content, self.end_inst]
        elif role == "assistant":
            content = _joined(group)
            calls = [c for m in group for c in m.tool_calls]
            if calls and content:
                raise Unsure("text and tool calls in one aggregated assistant turn")
            if calls:  # json.dumps of the list: each call's own dump joined by ", "
                out += [self.calls, "[" + ", ".join(self._call_json(c) for c in calls) + "]"]
            else:
                texts = [m.content for m in group if m.content] if parts and len(group) > 1 else ()
                if len(texts) > 1 and texts[-1].rstrip(" "):  # the strip takes from the last text only
                    out.append(Joined(texts[:-1] + [texts[-1].rstrip(" ")]))
                else:
                    out.append(content.rstrip(" "))
            out.append(self.eos)
        else:
            for m in group:
                out += [self.result_begin, self._result_json(m.content, m.tool_call_id or ""), self.result_end]

    def _call(self, call: Any) -> dict[str, Any]:
        arguments = _parsed(_normalised(json.dumps(call.arguments, ensure_ascii=False)))
        return {"name": call.name, "arguments": arguments, "id": self._map_id(call.id)}

    def _call_json(self, call: Any) -> str:
        """``json.dumps(self._call(call))``, written once per call's content (a probe renders a turn again and again)."""
        key = (call.name, call.id, json.dumps(call.arguments, ensure_ascii=False))
        text = self._json_memo.get(key)
        if text is None:
            text = self._remember(key, json.dumps(self._call(call), ensure_ascii=False))
        return text

    def _result_json(self, content: str | None, call_id: str) -> str:
        """A tool result as mistral-common writes it, once per content and id."""
        key = (content, call_id)
        text = self._json_memo.get(key)
        if text is None:
            result = {"content": _parsed(_normalised(content)), "call_id": self._map_id(call_id)}
            text = self._remember(key, json.dumps(result, ensure_ascii=False))
        return text

    def _remember(self, key: tuple, text: str) -> str:
        if len(self._json_memo) >= 65536:
            self._json_memo.clear()
        self._json_memo[key] = text
        return text

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
