"""``mistral:<tokenizer>``: a tokenizer file shipped inside ``mistral-common`` (offline, the embedded default)."""
from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import CounterError, TemplateRefused
from .base import CounterIdentity, TokenCounter, byte_pieces_as_spans, literal_spans, sha256_file, sha256_text
from .mistral_checks import knows_structure, refused_by_structure
from .mistral_loading import (_class_source, _load_tokenizer, _memoised_tool_check, bundled_mistral_tokenizers,
                              mistral_data_dir, mistral_tool_call_id)

_TEXT_COUNTS = ("text_token_count", "text_token_counts", "text_count", "text_counts")  # what the span memo relies on
class MistralCounter(TokenCounter):
    """The embedded default: a tokenizer file shipped with ``mistral-common``."""

    def __init__(self, tokenizer: str = "tekken_240911") -> None:
        super().__init__()
        try:
            importlib.import_module("mistral_common.tokens.tokenizers.mistral")  # the dependency is there
        except ImportError as exc:  # pragma: no cover - dependency is declared
            raise CounterError(f"mistral-common is not installed: {exc}") from None
        path = Path(tokenizer)
        if not path.is_file():
            data = mistral_data_dir()
            candidates = [data / tokenizer, data / f"{tokenizer}.json"]
            path = next((c for c in candidates if c.is_file()), None)  # type: ignore[assignment]
            if path is None:
                raise CounterError(
                    f"mistral:{tokenizer}: no such tokenizer in mistral-common; bundled: "
                    + ", ".join(bundled_mistral_tokenizers()))
        try:
            stat = path.stat()
            self._tokenizer = _load_tokenizer(str(path), stat.st_mtime_ns, stat.st_size)
        except ImportError as exc:
            raise CounterError(f"mistral:{tokenizer}: {exc}") from None
        except Exception as exc:  # a corrupt or foreign file
            raise CounterError(f"mistral:{tokenizer}: {path} is not a mistral-common tokenizer file "
                               f"({type(exc).__name__}: {exc})") from None
        import mistral_common

        instruct = self._tokenizer.instruct_tokenizer
        raw = instruct.tokenizer
        template_source = _class_source(type(instruct))
        stem = path.name[:-5] if path.name.endswith(".json") else path.name
        self._identity = CounterIdentity(
            name=f"mistral:{stem}", kind="mistral-common",
            model=f"mistral-common/{stem}", revision=f"mistral-common {mistral_common.__version__}",
            template_sha256=sha256_text(template_source), files={path.name: sha256_file(path)},
            notes=f"{type(instruct).__name__}, tokenizer {raw.version.value if hasattr(raw.version, 'value') else raw.version}; "
                  "tool call ids that are not 9 alphanumerics are mapped to stable 9-character ids")
        self._num_special = int(getattr(raw, "num_special_tokens", 0) or 0)
        self._specials = self._collect_specials(raw)

    @staticmethod
    def _collect_specials(raw: Any) -> list[str]:
        specials = []
        count = int(getattr(raw, "num_special_tokens", 0) or 0)
        for i in range(count):
            try:
                piece = raw.id_to_piece(i)
            except Exception:  # some ids are placeholders
                continue
            if piece and not piece.startswith("<SPECIAL_"):
                specials.append(piece)
        if not specials:
            for name in ("bos", "eos", "unk"):
                token_id = getattr(raw, f"{name}_id", None)
                if token_id is not None:
                    try:
                        specials.append(raw.id_to_piece(token_id))
                    except Exception:
                        pass
        return sorted(set(specials), key=lambda s: (-len(s), s))

    @property
    def identity(self) -> CounterIdentity:
        return self._identity

    def _request(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]):
        from mistral_common.protocol.instruct.messages import (AssistantMessage, SystemMessage,
                                                               ToolMessage, UserMessage)
        from mistral_common.protocol.instruct.request import ChatCompletionRequest
        from mistral_common.protocol.instruct.tool_calls import Function, FunctionCall, Tool, ToolCall

        out = []
        for m in messages:
            if m.role == "system":
                out.append(SystemMessage(content=m.content or ""))
            elif m.role == "user":
                out.append(UserMessage(content=m.content or ""))
            elif m.role == "assistant":
                calls = [ToolCall(id=mistral_tool_call_id(c.id),
                                  function=FunctionCall(name=c.name, arguments=json.dumps(c.arguments, ensure_ascii=False)))
                         for c in m.tool_calls]
                out.append(AssistantMessage(content=m.content, tool_calls=calls or None))
            else:
                out.append(ToolMessage(content=m.content or "", tool_call_id=mistral_tool_call_id(m.tool_call_id or "")))
        mtools = [Tool(function=Function(name=t.name, description=t.description, parameters=t.parameters)) for t in tools]
        return ChatCompletionRequest(messages=out, tools=mtools or None)

    def _encode(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]):
        try:
            return self._tokenizer.encode_chat_completion(self._request(messages, tools))
        except Exception as exc:  # mistral-common's own refusal (ordering, ids, roles)
            raise TemplateRefused(self.name, f"{type(exc).__name__}: {exc}") from None

    def writes_by_turn(self) -> bool:
        """mistral-common writes each message from its role and text alone (the one move, the system text to the
        last run of user messages, the plans follow apart)."""
        return False

    def refuses_surely(self, messages: Sequence[ChatMessage]) -> bool:
        """mistral-common's own structure check, on the roles alone (``mistral_checks.refused_by_structure``)."""
        known = self.__dict__.get("_structure_known")
        if known is None:
            validator = getattr(self._tokenizer, "_chat_completion_request_validator", None)
            known = self._structure_known = validator is not None and knows_structure(validator)
        return known and refused_by_structure([m.role for m in messages])

    def _counting_path(self):
        """mistral-common's own validate -> normalise -> encode_instruct steps, on a copy of the
        instruct tokenizer whose eager decode of the text (40% of the time, unused to count) is off.
        Falls back to ``encode_chat_completion`` if a later mistral-common moves these parts."""
        if not hasattr(self, "_fast"):
            import copy

            validator = getattr(self._tokenizer, "_chat_completion_request_validator", None)
            normaliser = getattr(self._tokenizer, "_instruct_request_normalizer", None)
            instruct = copy.copy(self._tokenizer.instruct_tokenizer)
            if (validator is None or normaliser is None or not hasattr(instruct, "encode_instruct")
                    or not hasattr(validator, "_validate_tools")):
                self._fast = None
            else:
                instruct.decode = lambda tokens, special_token_policy=None: ""
                validator = copy.copy(validator)
                validator._validate_tools = _memoised_tool_check(validator._validate_tools, self._checks_each_tool())
                self._fast = (validator, normaliser, instruct)
        return self._fast

    def _renderer(self):
        """The one-pass count of ``core.counters.mistral_render`` where this tokenizer's template is the one it
        mirrors, else ``None``."""
        if not hasattr(self, "_fast_render"):
            from .mistral_render import fast_renderer

            self._tools_text: dict[str, str] = {}
            self._fast_render = fast_renderer(self._tokenizer, mistral_tool_call_id, self._tools_json)
        return self._fast_render

    def _tools_json(self, tools: Sequence[ToolDefinition]) -> str:
        """The tool list as mistral-common writes it into the last user turn, after its own schema checks.
        mistral-common checks each tool on its own (``_validate_tools`` loops over ``_validate_function``) and
        writes the list with ``json.dumps``, whose items are each one's own dump joined by ", ": so each tool is
        checked and written once per counter, however many subsets of the tools the probes render."""
        if not self._checks_each_tool():
            return self._tools_json_whole(tools)
        pieces = []
        for tool in tools:
            known = self._tool_text.get(id(tool))
            if known is None or known[0] is not tool:  # the object is held: its id is not reused
                known = self._tool_text[id(tool)] = (tool, self._tools_json_whole([tool])[1:-1])
            pieces.append(known[1])
        return "[" + ", ".join(pieces) + "]"

    def _checks_each_tool(self) -> bool:
        """Whether mistral-common's tool check is its base class's loop over the tools, one at a time (no check
        across tools, such as of duplicate names, that a tool-by-tool check would miss)."""
        if not hasattr(self, "_each_tool"):
            from mistral_common.protocol.instruct.validator import MistralRequestValidator

            validator = getattr(self._tokenizer, "_chat_completion_request_validator", None)
            self._each_tool = (validator is not None and type(validator)._validate_tools
                               is MistralRequestValidator._validate_tools)
            self._tool_text: dict[int, tuple[ToolDefinition, str]] = {}
        return self._each_tool

    def _tools_json_whole(self, tools: Sequence[ToolDefinition]) -> str:
        key = json.dumps([t.model_dump() for t in tools], ensure_ascii=False)  # in key order: it writes them so
        text = self._tools_text.get(key)
        if text is None:
            validator = self._counting_path()[0]
            request = self._request([], tools)
            validator._validate_tools(request.tools or [])
            text = json.dumps([t.model_dump(exclude={"function": {"strict": True}}) for t in request.tools],
                              ensure_ascii=False)
            self._tools_text[key] = text
        return text

    def token_ids(self, messages, tools) -> list[int]:
        renderer = self._renderer()
        if renderer is not None:
            try:
                return renderer.token_ids(messages, tools)
            except Exception:  # not sure of it (or mistral-common refuses it): mistral-common's own path says
                pass
        return self._stock_ids(messages, tools)

    def count_whole(self, messages, tools) -> tuple[int, list[int] | None]:
        """The one pass's count without building the id list (``render_text`` writes the text without them),
        else mistral-common's ids, which ``text_of_ids`` decodes."""
        renderer = self._renderer()
        if renderer is not None:
            try:
                return renderer.count(messages, tools), None
            except Exception:  # not sure of it (or mistral-common refuses it): mistral-common's own path says
                pass
        ids = self._stock_ids(messages, tools)
        return len(ids), ids

    def _span_memo(self) -> dict[str, int] | None:
        """The text-count cache as the one-pass renderer's span memo, where each of its entries is exactly the
        count the renderer's encoding of that string gives: ``text_count`` is the base's, ``text_token_count`` this
        class's own, and its encoder the renderer's (tekken's ``encode_ordinary``, no special tokens registered;
        the renderer slices a long span only where the pre-tokeniser cuts anyway, the same count). Else ``None``."""
        if "_span_memo_ok" not in self.__dict__:
            renderer = self._renderer()
            encode = self.__dict__.get("_text_encode")
            if encode is None:
                encode = self._text_encode = self._text_encoder()
            self._span_memo_ok = renderer is not None and encode == renderer._encode and all(getattr(type(self), name) is (
                getattr(MistralCounter if "token" in name else TokenCounter, name)) for name in _TEXT_COUNTS)
            self.span_tally = [0, 0]  # spans found in the text counts, spans encoded (``count_reusing_texts``)
        return self._text_cache if self._span_memo_ok else None

    def count_whole_reusing_texts(self, messages, tools) -> tuple[int, list[int] | None]:
        """The one pass's count, each span's count taken from the text counts where that exact string was counted
        there (``V3Tekken.count``'s ``known``), every other span encoded; else ``count_whole``."""
        known = self._span_memo()
        if known is not None:
            try:
                return self._fast_render.count(messages, tools, known, self.span_tally), None
            except Exception:  # not sure of it (or mistral-common refuses it): count_whole says
                pass
        return self.count_whole(messages, tools)

    def count_and_render_text(self, messages, tools) -> tuple[int, str] | None:
        """``count_reusing_texts`` and ``render_text`` of one request from one rendering of it
        (``V3Tekken.count_and_text``); ``None`` where this counter cannot vouch for both at once (the two are then asked apart)."""
        known = self._span_memo()
        if known is None:
            return None
        try:
            value, text = self._fast_render.count_and_text(messages, tools, known, self.span_tally)
        except Exception:  # not sure of it (or mistral-common refuses it): asked apart
            return None
        self.full_counts += 1
        return None if text is None else (value, text)

    @property
    def counts_with_text(self) -> bool:
        """``count_and_render_text`` costs a few per cent more than ``count_reusing_texts`` here, and a render as much as
        the count: a plan whose emitted prompt was counted last keeps its text rather than render it again."""
        kind = type(self)
        return (kind.count_reusing_texts is MistralCounter.count_reusing_texts
                and kind.count_and_render_text is MistralCounter.count_and_render_text)

    def count_reusing_texts(self, messages, tools) -> int:
        """``count_whole_reusing_texts``, not looked up in ``count``'s cache nor kept there (a span-memo count answers
        only the default assembly, whose counts by selection are remembered by the builder): with every span it
        counted before remembered, counting again costs the rendering, which keying the request would cost too."""
        value = self.count_whole_reusing_texts(messages, tools)[0]
        self.full_counts += 1
        return value

    def turn_count(self, messages) -> tuple[int, int] | None:
        """What a history turn of ``messages`` adds to a request wherever it stands, where it opens with a user
        message, ends with another role and a user message follows it: (its control tokens, the tokens of its text
        spans, each by ``text_count``), from the one-pass renderer (``V3Tekken.turn_pieces``: each span is encoded on
        its own). A span the normaliser joins from several texts (two assistant messages in a row) is counted as
        the joined text, which the final count's span memo finds (``V3Tekken._joined_count``). ``None`` where the
        renderer is not sure of the turn or the text counts are not its encoder's (``_span_memo``)."""
        known = self._span_memo()
        if known is None:
            return None
        pieces = self._fast_render.turn_pieces(messages)
        if pieces is None:
            return None
        controls = text = 0
        for piece in pieces:
            if piece.__class__ is int:
                controls += 1
            else:
                text += self.text_count(piece)
        return controls, text

    def variant_counts(self, messages, tools, total, rendered=None):
        from .mistral_variants import variants

        return variants(self._renderer(), messages, tools, self.text_count, total)

    def _stock_ids(self, messages, tools) -> list[int]:
        fast = self._counting_path()
        if fast is None:
            return list(self._encode(messages, tools).tokens)
        validator, normaliser, instruct = fast
        try:
            request = validator.validate_request(self._request(messages, tools))
            return list(instruct.encode_instruct(normaliser.from_chat_completion_request(request)).tokens)
        except Exception as exc:  # mistral-common's own refusal (ordering, ids, roles)
            raise TemplateRefused(self.name, f"{type(exc).__name__}: {exc}") from None

    def render_text(self, messages, tools) -> str:
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        renderer = self._renderer()
        if renderer is not None:  # the spans as written: no tokenisation, no per-token decode
            try:
                return renderer.render_text(messages, tools)
            except Exception:  # noqa: BLE001 - not sure of it: mistral-common's own encode and decode
                pass
        tokens = self.last_token_ids(self.request_key(messages, tools))  # the recount's, in an audit
        if tokens is None:
            tokens = self._encode(messages, tools).tokens
        return self._tokenizer.decode(tokens, special_token_policy=SpecialTokenPolicy.KEEP)

    def text_of_ids(self, ids: Sequence[int]) -> str | None:
        """``render_text``'s decode (control tokens kept) of ids ``token_ids`` gave. For tekken, tekken's own
        steps (each run of plain ids decoded at once, each control id spelled) without its per-id Python calls."""
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        raw = self._tokenizer.instruct_tokenizer.tokenizer
        model, specials, n = getattr(raw, "_model", None), getattr(raw, "_all_special_tokens", None), self._num_special
        if type(raw).__name__ != "Tekkenizer" or not hasattr(model, "decode") or specials is None:
            return self._tokenizer.decode(list(ids), special_token_policy=SpecialTokenPolicy.KEEP)
        pieces, start = [], 0
        for at in [i for i, t in enumerate(ids) if t < n] + [len(ids)]:
            if start < at:
                pieces.append(model.decode([t - n for t in ids[start:at]]))
            if at < len(ids):
                pieces.append(specials[ids[at]]["token_str"])
            start = at + 1
        return "".join(pieces)

    def text_token_count(self, text: str) -> int:
        encode = self.__dict__.get("_text_encode")
        if encode is None:  # chosen once per counter: an assembly counts every item's text
            encode = self._text_encode = self._text_encoder()
        return len(encode(text))

    def text_token_counts(self, texts) -> list[int]:
        """``text_token_count`` of each text in one loop (tiktoken's core: its wrapper repairs what fails here first)."""
        if type(self).text_token_count is not MistralCounter.text_token_count or not texts:
            return super().text_token_counts(texts)
        self.text_token_count(texts[0])  # the encoder, chosen once per counter
        encode = self._text_encode
        core = getattr(getattr(encode, "__self__", None), "_core_bpe", None)
        try:
            return list(map(len, map(encode if core is None else core.encode_ordinary, texts)))
        except UnicodeEncodeError:
            return list(map(len, map(encode, texts)))

    def _text_encoder(self):
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        model = getattr(raw, "_model", None)  # tekken's tiktoken core: same length, no id offsetting
        if model is not None and hasattr(model, "encode_ordinary") and not getattr(model, "_special_tokens", None):
            return model.encode_ordinary  # with no special tokens registered, same ids as encode()
        if model is not None and hasattr(model, "encode"):
            return model.encode
        return lambda text: raw.encode(text, bos=False, eos=False)

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        ids = raw.encode(text, bos=False, eos=False)
        return byte_pieces_as_spans(text, [(i, raw.id_to_byte_piece(i)) for i in ids])

    def control_token_strings(self) -> list[str]:
        return list(self._specials)

    def control_token_ids(self) -> set[int]:
        return set(range(self._num_special))

    def text_is_never_control(self) -> bool:
        """Tekken offsets every id of its text encoding past the control tokens: text never is one (asked once
        per counter: the tokenizer it looks at is loaded once)."""
        never = self.__dict__.get("_never_control")
        if never is None:
            raw = self._tokenizer.instruct_tokenizer.tokenizer
            model = getattr(raw, "_model", None)
            never = self._never_control = (type(raw).__name__ == "Tekkenizer" and model is not None
                                           and hasattr(model, "encode_ordinary")
                                           and not getattr(model, "_special_tokens", None))
        return never

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        if self.text_is_never_control():  # tekken: no text is read as a control token, so none is scanned for one
            return []
        if not self.spelling_scan(lambda: self._specials, "control").any_in(text):
            return []  # no spelling in it: no span to report, and no need to tokenise it to learn that
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        ids = raw.encode(text, bos=False, eos=False)
        if not any(i < self._num_special for i in ids):
            return []  # tekken reads control-token spellings in text as plain text
        return literal_spans(text, self._specials)
