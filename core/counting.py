"""Token counters: the target model's own tokenizer and chat template, applied to a whole request.

``mistral:<tokenizer>`` uses the tokenizer files shipped inside ``mistral-common`` (offline, the
embedded default). ``hf:<dir>`` loads a local Hugging Face tokenizer directory with
``transformers`` and applies its chat template; an optional ``tokenizer-manifest.json`` pins
the files and the template by sha256. Nothing here reaches the network.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .contracts import ChatMessage, ToolDefinition
from .errors import CapabilityError, CounterError, ManifestMismatch, TemplateRefused

DEFAULT_COUNTER = "mistral:tekken_240911"
MANIFEST_NAME = "tokenizer-manifest.json"


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

    @property
    def declared_context_window(self) -> int | None:
        return self.context_window

    @abstractmethod
    def token_ids(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> list[int]:
        """Token ids of the rendered request, generation prefix included."""

    @abstractmethod
    def render_text(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> str:
        """The request as text, control tokens written out, as the model sees it."""

    @abstractmethod
    def control_token_strings(self) -> list[str]:
        """Literal spellings of the tokenizer's control (special) tokens."""

    @abstractmethod
    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        """Control-token literals in ``text`` that this tokenizer would read as control tokens,
        as ``(literal, start, end)`` character spans."""

    @abstractmethod
    def text_token_count(self, text: str) -> int:
        """Tokens of ``text`` on its own, no control tokens added (the tokenizer's plain encoding)."""

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        """The tokens ``text_token_count`` counts, in order, as (token id, start, end) character spans of
        ``text`` (a token inside one multi-byte character spans it, as the one before or after does)."""
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

    def count(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]) -> int:
        key = json.dumps([[m.to_json() for m in messages], [t.model_dump() for t in tools]],
                         sort_keys=True, ensure_ascii=False)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        value = len(self.token_ids(messages, tools))
        self.full_counts += 1
        self._cache[key] = value
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return value


# --------------------------------------------------------------------------------------------
# mistral-common

_MISTRAL_ID = re.compile(r"^[A-Za-z0-9]{9}$")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def mistral_tool_call_id(call_id: str) -> str:
    """Mistral requires 9 alphanumeric characters; other ids map to a stable 9-character one."""
    if _MISTRAL_ID.match(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode("utf-8")).digest()[:8], "big")
    out = ""
    for _ in range(9):
        number, digit = divmod(number, 62)
        out += _BASE62[digit]
    return out


def mistral_data_dir() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data"


def bundled_mistral_tokenizers() -> list[str]:
    names = []
    for path in sorted(mistral_data_dir().iterdir()):
        if path.is_file() and not path.name.startswith("."):
            names.append(path.name[:-5] if path.name.endswith(".json") else path.name)
    return names


class MistralCounter(TokenCounter):
    """The embedded default: a tokenizer file shipped with ``mistral-common``."""

    def __init__(self, tokenizer: str = "tekken_240911") -> None:
        super().__init__()
        try:
            from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
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
            self._tokenizer = MistralTokenizer.from_file(str(path))
        except ImportError as exc:
            raise CounterError(f"mistral:{tokenizer}: {exc}") from None
        except Exception as exc:  # a corrupt or foreign file
            raise CounterError(f"mistral:{tokenizer}: {path} is not a mistral-common tokenizer file "
                               f"({type(exc).__name__}: {exc})") from None
        import inspect

        import mistral_common

        instruct = self._tokenizer.instruct_tokenizer
        raw = instruct.tokenizer
        template_source = inspect.getsource(type(instruct))
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
                validator._validate_tools = _memoised_tool_check(validator._validate_tools)
                self._fast = (validator, normaliser, instruct)
        return self._fast

    def token_ids(self, messages, tools) -> list[int]:
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

        tokens = self._encode(messages, tools).tokens
        return self._tokenizer.decode(tokens, special_token_policy=SpecialTokenPolicy.KEEP)

    def text_token_count(self, text: str) -> int:
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        model = getattr(raw, "_model", None)  # tekken's tiktoken core: same length, no id offsetting
        if model is not None and hasattr(model, "encode_ordinary") and not getattr(model, "_special_tokens", None):
            return len(model.encode_ordinary(text))  # with no special tokens registered, same ids as encode()
        if model is not None and hasattr(model, "encode"):
            return len(model.encode(text))
        return len(raw.encode(text, bos=False, eos=False))

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        ids = raw.encode(text, bos=False, eos=False)
        return _byte_pieces_as_spans(text, [(i, raw.id_to_byte_piece(i)) for i in ids])

    def control_token_strings(self) -> list[str]:
        return list(self._specials)

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        raw = self._tokenizer.instruct_tokenizer.tokenizer
        ids = raw.encode(text, bos=False, eos=False)
        if not any(i < self._num_special for i in ids):
            return []  # tekken reads control-token spellings in text as plain text
        return _literal_spans(text, self._specials)


def _byte_pieces_as_spans(text: str, pieces: list[tuple[int, bytes]]) -> list[tuple[int, int, int]]:
    """(id, UTF-8 bytes) tokens of ``text`` as (id, start, end) character spans. A token that begins or
    ends inside a character is widened to the whole character."""
    starts = []  # the character each byte belongs to
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


def _memoised_tool_check(check):
    """mistral-common checks every tool's JSON schema on every encode; a tool set passes or fails
    the same way each time, so remember the sets that passed (failures are raised every time)."""
    passed: set[str] = set()

    def cached(tools):
        key = json.dumps([t.model_dump(mode="json") for t in tools], sort_keys=True) if tools else ""
        if key in passed:
            return None
        outcome = check(tools)
        passed.add(key)
        return outcome

    return cached


def _literal_spans(text: str, literals: Sequence[str]) -> list[tuple[str, int, int]]:
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


# --------------------------------------------------------------------------------------------
# Hugging Face tokenizer directory


def _quiet_transformers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        import transformers
    except ImportError:  # the standalone (PyInstaller) application leaves it out
        raise CounterError("hf: counters need the 'transformers' package, which this installation does not "
                           "include; use mistral:<tokenizer>, or a pip install of context-inspector") from None

    transformers.logging.set_verbosity_error()
    return transformers


def read_manifest(directory: Path) -> dict | None:
    path = directory / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CounterError(f"{path}: not a readable JSON manifest ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise CounterError(f"{path}: a manifest needs a 'files' object of filename -> sha256")
    return data


EXTRA_TEMPLATES_DIR = "additional_chat_templates"  # transformers loads named templates (e.g. tool_use) from here


def _tokenizer_files(directory: Path) -> dict[str, str]:
    """sha256 of each file transformers may read: the directory's files and its named chat templates."""
    paths = [p for p in directory.iterdir() if p.is_file() and p.name != MANIFEST_NAME]
    extra = directory / EXTRA_TEMPLATES_DIR
    if extra.is_dir():
        paths += [p for p in extra.glob("*.jinja") if p.is_file()]
    return {p.relative_to(directory).as_posix(): sha256_file(p)
            for p in sorted(paths, key=lambda p: p.relative_to(directory).as_posix())}


def _template_sha256(template: str | dict) -> str:
    """One template: the sha256 of its text. Named templates (``default``, ``tool_use``...): the sha256 of
    all of them, since transformers picks ``tool_use`` by itself whenever tools are passed."""
    if isinstance(template, dict):
        return sha256_text(json.dumps(template, sort_keys=True, ensure_ascii=False))
    return sha256_text(template)


def write_manifest(directory: str | Path, *, model: str, revision: str | None = None) -> dict:
    """Pin every file of a tokenizer directory (and its chat template) in a manifest."""
    directory = Path(directory)
    files = _tokenizer_files(directory)
    counter = HFCounter(directory, verify=False)
    manifest = {"model": model, "revision": revision, "files": files,
                "template_sha256": counter.identity.template_sha256}
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


class HFCounter(TokenCounter):
    """A local Hugging Face tokenizer directory and its chat template, through ``transformers``."""

    def __init__(self, directory: str | Path, *, verify: bool = True) -> None:
        super().__init__()
        directory = Path(directory).expanduser()
        if not directory.is_dir():
            raise CounterError(f"hf:{directory}: not a directory")
        manifest = read_manifest(directory) if verify else None
        if manifest is not None:
            for filename, expected in sorted(manifest["files"].items()):
                target = directory / filename
                actual = sha256_file(target) if target.is_file() else None
                if actual != expected:
                    raise ManifestMismatch(str(directory), filename, expected, actual)
        transformers = _quiet_transformers()
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
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
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < 10_000_000:  # transformers uses 1e30 for "unknown"
            self.context_window = limit
        files = (dict(manifest["files"]) if manifest is not None else
                 _tokenizer_files(directory))
        self._identity = CounterIdentity(
            name=f"hf:{directory}", kind="transformers",
            model=(manifest or {}).get("model") or directory.name,
            revision=(manifest or {}).get("revision"), template_sha256=template_sha, files=files,
            notes=None if manifest is not None else "no manifest: files are hashed but not pinned")
        specials = set(tokenizer.all_special_tokens)
        for token in getattr(tokenizer, "added_tokens_decoder", {}).values():
            if getattr(token, "special", False):
                specials.add(str(token.content))
        self._specials = sorted((s for s in specials if s), key=lambda s: (-len(s), s))

    @property
    def identity(self) -> CounterIdentity:
        return self._identity

    @staticmethod
    def conversation(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        names: dict[str, str] = {}
        out = []
        for m in messages:
            item: dict[str, Any] = {"role": m.role, "content": m.content if m.content is not None else ""}
            if m.tool_calls:
                item["tool_calls"] = [{"id": c.id, "type": "function",
                                       "function": {"name": c.name, "arguments": c.arguments}}
                                      for c in m.tool_calls]
                names.update({c.id: c.name for c in m.tool_calls})
            if m.tool_call_id is not None:
                item["tool_call_id"] = m.tool_call_id
                if m.tool_call_id in names:
                    item["name"] = names[m.tool_call_id]
            out.append(item)
        return out

    @staticmethod
    def tool_schemas(tools: Sequence[ToolDefinition]) -> list[dict[str, Any]] | None:
        if not tools:
            return None
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}} for t in tools]

    def _apply(self, messages, tools, *, tokenize: bool):
        try:
            return self._tokenizer.apply_chat_template(
                self.conversation(messages), tools=self.tool_schemas(tools), add_generation_prompt=True,
                tokenize=tokenize, return_dict=False, enable_thinking=False)
        except Exception as exc:  # the template's own raise_exception(), or a structure it cannot render
            message = str(exc) or type(exc).__name__
            raise TemplateRefused(self.name, message) from None

    def token_ids(self, messages, tools) -> list[int]:
        ids = self._apply(messages, tools, tokenize=True)
        if ids and isinstance(ids[0], list):  # batched shape
            ids = ids[0]
        return list(ids)

    def render_text(self, messages, tools) -> str:
        return self._apply(messages, tools, tokenize=False)

    def text_token_count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def text_token_spans(self, text: str) -> list[tuple[int, int, int]]:
        if not getattr(self._tokenizer, "is_fast", False):
            raise CapabilityError(f"{self.name}: a slow (Python) tokenizer gives no character offsets")
        encoded = self._tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [(int(i), int(a), int(b)) for i, (a, b) in zip(encoded["input_ids"], encoded["offset_mapping"])]

    def control_token_strings(self) -> list[str]:
        return list(self._specials)

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        spans = _literal_spans(text, self._specials)
        if not spans:
            return []
        ids = set(self._tokenizer.encode(text, add_special_tokens=False))
        return [s for s in spans if self._tokenizer.convert_tokens_to_ids(s[0]) in ids]


def make_counter(spec: str | None = None, *, context_window: int | None = None) -> TokenCounter:
    """Build a counter from ``mistral:<tokenizer>`` or ``hf:<directory>`` (default: the embedded one).
    ``context_window`` declares the model's window (plans without ``budget_tokens`` budget from it)."""
    spec = spec or DEFAULT_COUNTER
    kind, _, arg = spec.partition(":")
    if kind == "mistral":
        counter: TokenCounter = MistralCounter(arg or "tekken_240911")
    elif kind == "hf":
        if not arg:
            raise CounterError("hf: needs a tokenizer directory, e.g. hf:/path/to/tokenizer")
        counter = HFCounter(arg)
    else:
        raise CounterError(f"unknown counter {spec!r}: use mistral:<tokenizer> or hf:<directory>")
    if context_window is not None:
        if context_window <= 0:
            raise CounterError(f"context_window must be positive, not {context_window}")
        counter.context_window = context_window
    return counter
