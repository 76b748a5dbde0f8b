"""``hf:<dir>``: a local Hugging Face tokenizer directory and its chat template, through ``transformers``.

An optional ``tokenizer-manifest.json`` pins the files and the template by sha256. Nothing here reaches
the network."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import CapabilityError, CounterError, ManifestMismatch, TemplateRefused
from . import template_limits
from .hf_template import TemplateReading
from .base import CounterIdentity, TokenCounter, literal_spans, sha256_file
from .hf_manifest import EXTRA_TEMPLATES_DIR, MANIFEST_NAME, read_manifest, write_manifest  # noqa: F401
from .hf_manifest import (_quiet_transformers, _template_sha256, files_on_disk, format_template_kwargs,
                          loaded_tokenizer)
from .hf_direct import DirectRender, conversation_items
from .hf_pieces import BATCH, count_pieces, encode_by_pieces, keeps_ascii


def _as_given(value: Any) -> Any:
    return value


class HFCounter(TemplateReading, TokenCounter):
    """A local Hugging Face tokenizer directory and its chat template, through ``transformers``."""

    def __init__(self, directory: str | Path, *, verify: bool = True,
                 chat_template_kwargs: Mapping[str, Any] | None = None) -> None:
        """``chat_template_kwargs`` go to the template as a server passes them (``enable_thinking``...); none
        given, the template renders with its own defaults, as a server does by default."""
        super().__init__()
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        directory = Path(directory).expanduser()
        if not directory.is_dir():
            raise CounterError(f"hf:{directory}: not a directory")
        manifest = read_manifest(directory) if verify else None
        on_disk = files_on_disk(directory)  # every file transformers may read, hashed
        if manifest is not None:
            for filename, expected in sorted(manifest["files"].items()):
                target = directory / filename
                actual = on_disk.get(filename) or (sha256_file(target) if target.is_file() else None)
                if actual != expected:
                    raise ManifestMismatch(str(directory), filename, expected, actual)
        files = dict(manifest["files"]) if manifest is not None else on_disk
        transformers = _quiet_transformers()
        try:
            tokenizer = loaded_tokenizer(directory, on_disk, lambda: transformers.AutoTokenizer.from_pretrained(
                str(directory), local_files_only=True), lambda: files_on_disk(directory))
        except Exception as exc:
            raise CounterError(f"hf:{directory}: cannot load a tokenizer ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
        templates = tokenizer.chat_template
        template = templates
        if isinstance(template, dict):
            template = template.get("default") or next(iter(template.values()), None)
        if not template:
            raise CounterError(f"hf:{directory}: the tokenizer has no chat template")
        template_sha = _template_sha256(templates)
        if manifest is not None and manifest.get("template_sha256") and manifest["template_sha256"] != template_sha:
            raise ManifestMismatch(str(directory), "chat template", manifest["template_sha256"], template_sha)
        self._tokenizer = tokenizer
        self._template = template
        self._templates = templates
        self.template_note = template_limits.install(templates)  # a time and size limit on every render
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < 10_000_000:  # transformers uses 1e30 for "unknown"
            self.context_window = limit
        self._identity = CounterIdentity(
            name=f"hf:{directory}" + (f"?{format_template_kwargs(self.chat_template_kwargs)}"
                                      if self.chat_template_kwargs else ""), kind="transformers",
            model=(manifest or {}).get("model") or directory.name,
            revision=(manifest or {}).get("revision"), template_sha256=template_sha, files=files,
            notes=None if manifest is not None else "no manifest: files are hashed but not pinned",
            chat_template_kwargs=self.chat_template_kwargs or None)
        specials = set(tokenizer.all_special_tokens)
        for token in getattr(tokenizer, "added_tokens_decoder", {}).values():
            if getattr(token, "special", False):
                specials.add(str(token.content))
        self._specials = sorted((s for s in specials if s), key=lambda s: (-len(s), s))
        sources = templates.values() if isinstance(templates, dict) else [templates]
        markers = {str(t.content) for t in getattr(tokenizer, "added_tokens_decoder", {}).values()
                   if not getattr(t, "special", False) and str(t.content).strip()}
        self._markers = sorted((m for m in markers - specials if any(m in src for src in sources if src)),
                               key=lambda s: (-len(s), s))
        # Added tokens, special or not, are read out of raw text: role and structure markers among them
        # (DeepSeek's <｜User｜>, Qwen's <tool_call>, Gemma 4's <|tool_call>) as much as control tokens.
        added = {int(i): str(t.content) for i, t in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items()
                 if _marker_like(str(t.content)) or getattr(t, "special", False)
                 or str(t.content) in self._markers}
        self._added = sorted(set(added.values()) | set(self._specials), key=lambda s: (-len(s), s))
        self._added_ids = set(added)

    @property
    def identity(self) -> CounterIdentity:
        return self._identity

    @staticmethod
    def conversation(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        return conversation_items(messages, _as_given)

    @staticmethod
    def tool_schemas(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]] | None:
        if not tools:
            return None
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}} for t in tools]

    def _apply(self, messages, tools, *, generation: bool = True) -> str:
        """The text ``apply_chat_template(..., tokenize=False)`` gives: rendered from the compiled template where that
        is checked to give the same (``hf_direct``), else through transformers."""
        if getattr(self, "_limit_error", None):  # a template that ran past a limit once is not run again
            raise CounterError(self._limit_error)
        try:
            direct = self._direct()
            schemas = self.tool_schemas(tools)
            conversation = conversation_items(messages, direct.plain)
            text = direct.render(conversation, tools, schemas, generation)
            return text if text is not None else self._slow_render(conversation, schemas, generation)
        except template_limits.TemplateLimitExceeded as exc:
            self._limit_error = f"{self.name}: {exc}"
            raise CounterError(self._limit_error) from None
        except Exception as exc:  # the template's own raise_exception(), or a structure it cannot render
            message = str(exc) or type(exc).__name__
            raise TemplateRefused(self.name, message) from None
        except BaseException as exc:  # the tokenizer's Rust panic (pyo3's PanicException) is no Exception
            if type(exc).__name__ != "PanicException":
                raise
            raise CounterError(f"{self.name}: the tokenizer failed on this request ({str(exc)[:200]})") from None

    def _slow_render(self, conversation: list[dict[str, Any]], schemas: Any, generation: bool) -> str:
        return self._tokenizer.apply_chat_template(conversation, tools=schemas, add_generation_prompt=generation,
                                                   tokenize=False, return_dict=False, **self.chat_template_kwargs)

    def _direct(self) -> DirectRender:
        """The template rendered without transformers' copies of the conversation (``hf_direct``), made once."""
        direct = self.__dict__.get("_direct_render")
        if direct is None:
            direct = self._direct_render = DirectRender(self._tokenizer, self.chat_template_kwargs, self._slow_render)
        return direct

    def token_ids(self, messages, tools) -> list[int]:
        """The ids ``apply_chat_template(..., tokenize=True)`` gives: the rendered text tokenised with
        ``add_special_tokens=False`` (``_tokenised``)."""
        return self._tokenised(self._apply(messages, tools), want_ids=True)[1]

    def render_text(self, messages, tools) -> str:
        return self._apply(messages, tools)

    def count_whole(self, messages, tools) -> tuple[int, list[int] | None]:
        """One complete tokenisation, as ``token_ids`` makes it (``apply_chat_template`` renders the template,
        then tokenises the text with ``add_special_tokens=False``), keeping the text for ``text_of_ids`` of these
        very ids: the assembly's check for what the template left out then needs no second render."""
        text = self._apply(messages, tools)
        total, ids = self._tokenised(text, want_ids=True)
        self._last_render = (ids, text)
        return total, ids

    def count_and_render_text(self, messages, tools) -> tuple[int, str]:
        """``count_whole``'s count and the rendered text, without the id list (one int object a token, 41 bytes
        each: for a long request the largest thing the default assembly would hold), not kept in ``count``'s cache;
        the pieces of the text counted before (by a check, or alone as a text: an evidence block) are not
        tokenised again (``hf_pieces.count_known``), as mistral's span memo does. A complete count, told in
        ``full_counts`` as mistral's is."""
        text = self._apply(messages, tools)
        value = self._tokenised(text, want_ids=False, reuse=True)[0]
        self.full_counts += 1
        return value, text

    def count_reusing_texts(self, messages, tools) -> int:
        """A complete count whose pieces counted before (by a check, a probe, or alone as a text) are not tokenised
        again (``count_and_render_text``); ``token_ids``, ``count`` and ``count_whole`` tokenise every piece. A
        complete count, told in ``full_counts`` (the assemblies' probe tallies) by ``count_and_render_text``."""
        return self.count_and_render_text(messages, tools)[0]

    @property
    def counts_with_text(self) -> bool:
        """``count_reusing_texts`` is ``count_and_render_text``'s count: asking the pair costs nothing more."""
        return type(self).count_reusing_texts is HFCounter.count_reusing_texts

    @property
    def texts_as_pieces(self) -> bool:
        """Whether ``text_token_count`` is the call that tokenises a piece (the Rust tokenizer's batch encode): its
        counts then serve as the counts of pieces with the same text (``hf_pieces.count_known``)."""
        return type(self).text_token_count is HFCounter.text_token_count and self._backend() is not None

    def _tokenised(self, text: str, *, want_ids: bool, reuse: bool = False) -> tuple[int, list[int] | None]:
        """The token count of a rendered ``text`` and, if ``want_ids``, its ids: from its pieces between added
        tokens where they tokenise apart (``encode_by_pieces``: linear in the text, the pieces' counts kept for the
        next near-allowance checks), else the text tokenised whole. A text the tokenizer refuses is the request
        refused, as transformers words it, never an exception of ours."""
        try:
            try:
                pieced = encode_by_pieces(self, text, want_ids=want_ids, reuse=reuse)
            except (TypeError, UnicodeError):  # refused (a lone surrogate): transformers' call below says why
                pieced = None
            if pieced is not None:
                return pieced
            encoding = self._encoding(text)  # what the call below gives, where it can be had
            if encoding is None:
                ids = self._tokenizer(text, add_special_tokens=False)["input_ids"]
                return len(ids), (ids if want_ids else None)
            return len(encoding), (encoding.ids if want_ids else None)
        except Exception as exc:  # a lone surrogate: TypeError
            raise TemplateRefused(self.name, str(exc) or type(exc).__name__) from None
        except BaseException as exc:  # a Rust panic is no Exception
            if type(exc).__name__ != "PanicException":
                raise
            raise CounterError(f"{self.name}: the tokenizer failed on this request ({str(exc)[:200]})") from None

    def _encoding(self, text: str):
        """The Rust tokenizer's encoding of ``text`` (``_backend``: the ids transformers' call gives), or ``None``
        where there is no such tokenizer or it refuses the text (transformers' call then says why, in its words)."""
        backend = self._backend()
        try:
            return None if backend is None else backend.encode(text, add_special_tokens=False)
        except Exception:  # noqa: BLE001 - refused: asked again through transformers, whose refusal is reported
            return None

    def count_check(self, messages, tools) -> int | None:
        """``len(token_ids(...))`` from the counts of the rendered text's pieces between added tokens, each cached by
        content (``core.counters.hf_pieces``), where this tokenizer is known to tokenise them apart; else ``None``.
        For the default assembly's near-allowance checks (``count_check_and_text``)."""
        both = self.count_check_and_text(messages, tools)
        return None if both is None else both[0]

    def count_check_and_text(self, messages, tools) -> tuple[int, str] | None:
        """``count_check`` and the text it counted: where the last check was of the final request, that is its final
        count (what ``count_and_render_text`` would give of the same text) and the text the template check reads."""
        text: list[str] = []
        try:
            value = count_pieces(self, lambda: text.append(self._apply(messages, tools)) or text[0])
        except CounterError:  # the template's refusal, a limit, a Rust panic: already named
            raise
        except Exception as exc:  # a text the tokenizer refuses (a lone surrogate: TypeError), as _tokenised says
            raise TemplateRefused(self.name, str(exc) or type(exc).__name__) from None
        return None if value is None else (value, text[0])

    def text_of_ids(self, ids: Sequence[int]) -> str | None:
        """The rendered text of the ids the last ``count_whole`` gave (those very ids), else ``None``."""
        last = self.__dict__.get("_last_render")
        return last[1] if last is not None and last[0] is ids else None

    def render_prompt(self, messages, tools, *, generation: bool) -> str:
        """``render_text``, with or without the generation prompt."""
        return self._apply(messages, tools, generation=generation)

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """(start, end) character offsets of the tokens ``token_ids`` makes of a rendered ``text``: from the Rust
        tokenizer where it stands for ``encode`` (transformers' call wraps it in Python over every token: a tenth of
        a plan on tool-call turns), else from transformers' call."""
        backend = self._backend()
        if backend is not None:
            try:
                return backend.encode(text, add_special_tokens=False).offsets
            except BaseException as exc:  # a Rust panic is no Exception
                if type(exc).__name__ != "PanicException":
                    raise
                raise CounterError(f"{self.name}: the tokenizer failed on this text ({str(exc)[:200]})") from None
        encoded = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [(int(a), int(b)) for a, b in encoded["offset_mapping"]]

    def eos_spelling(self) -> str | None:
        token = getattr(self._tokenizer, "eos_token", None)
        return str(token) if token else None

    def variant_counts(self, messages, tools, total, rendered=None):
        from .hf_variants import variants

        return variants(self, messages, tools, total, rendered)

    def _backend(self):
        """The Rust tokenizer under a fast tokenizer, where calling it directly gives what ``encode`` gives (no
        truncation or padding set, control tokens read as ``encode`` reads them), else None."""
        backend = getattr(self._tokenizer, "_tokenizer", None) if getattr(self._tokenizer, "is_fast", False) else None
        if backend is None or backend.truncation is not None or backend.padding is not None:
            return None
        if backend.encode_special_tokens != bool(getattr(self._tokenizer, "split_special_tokens", False)):
            return None
        return backend

    def text_token_count(self, text: str) -> int:
        backend = self._backend()  # transformers' encode wraps this call in ~30 us of Python per text
        try:
            if backend is not None:  # without offsets where the binding can (a tenth less work)
                fast = getattr(backend, "encode_batch_fast", None)
                return len(fast([text], add_special_tokens=False)[0] if fast else backend.encode(
                    text, add_special_tokens=False))
            return len(self._tokenizer.encode(text, add_special_tokens=False))
        except BaseException as exc:  # a Rust panic is no Exception
            if type(exc).__name__ != "PanicException":
                raise
            raise CounterError(f"{self.name}: the tokenizer failed on this text ({str(exc)[:200]})") from None

    def text_token_counts(self, texts) -> list[int]:
        """``text_token_count`` of each text in one call to the Rust tokenizer (an assembly counts every passage's
        block); a batch it refuses is counted text by text, which names the refusal as ``text_token_count`` does."""
        fast = getattr(self._backend(), "encode_batch_fast", None)
        if fast is None or type(self).text_token_count is not HFCounter.text_token_count or len(texts) < 2:
            return super().text_token_counts(texts)
        texts, out = list(texts), []
        try:
            for at in range(0, len(texts), BATCH):  # the binding's encodings held a batch at a time
                out.extend(len(e) for e in fast(texts[at:at + BATCH], add_special_tokens=False))
            return out
        except BaseException as exc:  # noqa: BLE001 - a lone surrogate (TypeError) or a Rust panic: one by one
            if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
                raise
            return super().text_token_counts(texts)

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        if not getattr(self._tokenizer, "is_fast", False):
            raise CapabilityError(f"{self.name}: a slow (Python) tokenizer gives no character offsets")
        encoded = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [(int(i), int(a), int(b)) for i, (a, b) in zip(encoded["input_ids"], encoded["offset_mapping"])]

    def boundary_tokens(self) -> dict[str, tuple[bool, bool]]:
        """Added tokens spelled like markers that the tokenizer reads out of text wherever they stand (not
        normalised, not only as a whole word), each with whether it strips the whitespace on its left and on
        its right: the text between two of them is encoded on its own (``core.assembly_tools`` counts a
        tool-call turn's runs between them)."""
        known = self.__dict__.get("_boundaries")
        if known is None:
            decoder = getattr(self._tokenizer, "added_tokens_decoder", {}) or {}
            known = self._boundaries = {
                str(t.content): (bool(getattr(t, "lstrip", False)), bool(getattr(t, "rstrip", False)))
                for t in decoder.values() if _marker_like(str(t.content))
                and not (getattr(t, "single_word", True) or getattr(t, "normalized", True))}
        return dict(known)

    def control_token_strings(self) -> list[str]:
        return list(self._specials)

    def untrusted_spellings(self) -> list[str]:
        return list(self._added)

    def control_token_ids(self) -> set[int]:
        return set(self._added_ids)

    def reads_as_control(self, text: str) -> bool:
        """Whether tokenising ``text`` gives one of the added tokens' ids; without tokenising where neither the text
        nor the text as the tokenizer normalises it spells any of those tokens (``_spells_no_added``): a token is
        read out of raw or normalised text by its spelling, and a model's token is a piece of the normalised text,
        so an id whose spelling is nowhere in either cannot come out (an evidence passage is asked this once)."""
        if self._spells_no_added(text):
            return False
        return not self._added_ids.isdisjoint(self._tokenizer.encode(text, add_special_tokens=False))

    def _spells_no_added(self, text: str) -> bool:
        backend = getattr(self._tokenizer, "backend_tokenizer", None) if getattr(self._tokenizer, "is_fast", False) \
            else None
        if backend is None or self._byte_fallback(backend):  # byte tokens (<0x0A>) come out of text never spelling them
            return False
        scan = self.spelling_scan(lambda: [self._tokenizer.convert_ids_to_tokens(i) for i in self._added_ids]
                                  + [str(t.content) for i, t in self._tokenizer.added_tokens_decoder.items()
                                     if i in self._added_ids], "added ids")
        if scan.any_in(text):
            return False
        normalizer = backend.normalizer
        if normalizer is None or (text.isascii() and keeps_ascii(self)):  # the normalised text is the text
            return True
        return not scan.any_in(normalizer.normalize_str(text))

    def _byte_fallback(self, backend) -> bool:
        """Whether the tokenizer's model spells an unknown character as byte tokens (or cannot be read: taken so),
        read once per counter: a BPE model says so itself; another is asked through its serialised state, which
        for a large vocabulary takes half a second."""
        known = self.__dict__.get("_byte_fallback_known")
        if known is None:
            model = backend.model
            known = getattr(model, "byte_fallback", None)
            if not isinstance(known, bool):
                try:
                    known = bool(json.loads(model.__getstate__()).get("byte_fallback", False))
                except Exception:  # noqa: BLE001
                    known = True
            self._byte_fallback_known = known
        return known

    def role_marker_strings(self) -> list[str]:
        return list(self._markers)

    def role_markers_in(self, text: str) -> list[tuple[str, int, int]]:
        return self._read_as_tokens(text, self._markers, "markers")

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        return self._read_as_tokens(text, self._specials, "specials")

    def _read_as_tokens(self, text: str, literals: Sequence[str], key: str) -> list[tuple[str, int, int]]:
        """Spans of ``literals`` in ``text`` that the tokenizer turns into the literal's own token."""
        if not self.spelling_scan(lambda: literals, key).any_in(text):
            return []  # one scan of the text, no tokenising, for the common text that spells none of them
        spans = literal_spans(text, literals)
        if not spans:
            return []
        ids = set(self._tokenizer.encode(text, add_special_tokens=False))
        return [s for s in spans if self._tokenizer.convert_tokens_to_ids(s[0]) in ids]


def _marker_like(text: str) -> bool:
    """An added token spelled like a marker (``<tool_call>``, ``[INST]``, ``<|im_end|>``), not a plain
    word or a run of spaces some vocabularies add: only those are neutralised in untrusted text."""
    return len(text) >= 3 and any(ch in "<>[]|" for ch in text) and not text.isspace()
