"""``harmony:<model>``: gpt-oss counted with ``openai-harmony``, OpenAI's own renderer of its harmony format.

gpt-oss's Hugging Face Jinja template differs from harmony (by 22 to 65 tokens on this project's
fixtures), so the reference encoder counts here, the way ``mistral:`` uses mistral-common. The request is
rendered as a server renders a chat completion for gpt-oss: harmony's default system message, the
request's system text and tool definitions as the developer message, then the conversation, primed for
the assistant. openai-harmony reads ``o200k_base`` from a folder it is pointed at; this counter points it
at the tiktoken cache (``context-assembler tokenizers fetch o200k_base``), so nothing is downloaded.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import CounterError, TemplateRefused
from .base import CounterIdentity, TokenCounter, literal_spans, sha256_file
from .tiktoken_cache import cached_path, load_encoding

_ENCODING = None


def _harmony_encoding():
    global _ENCODING
    if _ENCODING is None:
        try:
            import openai_harmony as harmony
        except ImportError:
            raise CounterError("harmony: counters need the 'openai-harmony' package") from None
        load_encoding("o200k_base")  # the same check and message as openai: counters
        source = cached_path("o200k_base")
        folder = Path(tempfile.mkdtemp(prefix="harmony-"))
        (folder / "o200k_base.tiktoken").symlink_to(source)
        before = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
        os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
        try:
            _ENCODING = harmony.load_harmony_encoding(harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
        except Exception as exc:
            raise CounterError(f"harmony: cannot load the gpt-oss encoding ({exc})") from None
        finally:
            if before is None:
                os.environ.pop("TIKTOKEN_ENCODINGS_BASE", None)
            else:
                os.environ["TIKTOKEN_ENCODINGS_BASE"] = before
    return _ENCODING


class HarmonyCounter(TokenCounter):
    def __init__(self, model: str = "gpt-oss-20b") -> None:
        super().__init__()
        import openai_harmony

        self.model = model
        self._enc = _harmony_encoding()
        path = cached_path("o200k_base")
        self._identity = CounterIdentity(
            name=f"harmony:{model}", kind="openai-harmony", model=model,
            revision=f"openai-harmony {getattr(openai_harmony, '__version__', '?')}, o200k_harmony",
            files={"o200k_base.tiktoken": sha256_file(path)} if path else {},
            notes="the harmony format as openai-harmony renders it: default system message, the request's system "
                  "text and tools as the developer message, conversation, assistant prefix")
        specials = self._enc.special_tokens_set
        specials = specials() if callable(specials) else specials
        self._specials = sorted((s for s in specials if not s.startswith("<|reserved")), key=lambda s: (-len(s), s))

    @property
    def identity(self) -> CounterIdentity:
        return self._identity

    def _conversation(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition]):
        import openai_harmony as h

        out = [h.Message.from_role_and_content(h.Role.SYSTEM, h.SystemContent.new())]
        instructions = "\n\n".join(m.content or "" for m in messages if m.role == "system")
        if instructions or tools:
            developer = h.DeveloperContent.new()
            if instructions:
                developer = developer.with_instructions(instructions)
            if tools:
                developer = developer.with_function_tools([
                    h.ToolDescription.new(t.name, t.description or "", parameters=t.parameters) for t in tools])
            out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, developer))
        names: dict[str, str] = {}
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "user":
                out.append(h.Message.from_role_and_content(h.Role.USER, m.content or ""))
            elif m.role == "assistant":
                if m.content:
                    out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, m.content).with_channel("final"))
                for call in m.tool_calls:
                    names[call.id] = call.name
                    out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, json.dumps(call.arguments))
                               .with_channel("commentary").with_recipient(f"functions.{call.name}")
                               .with_content_type("<|constrain|>json"))
            else:
                name = names.get(m.tool_call_id or "", "tool")
                out.append(h.Message.from_author_and_content(h.Author.new(h.Role.TOOL, f"functions.{name}"),
                                                             m.content or "")
                           .with_channel("commentary").with_recipient("assistant"))
        return h.Conversation.from_messages(out)

    def token_ids(self, messages, tools) -> list[int]:
        import openai_harmony as h

        try:
            return list(self._enc.render_conversation_for_completion(self._conversation(messages, tools),
                                                                     h.Role.ASSISTANT))
        except Exception as exc:
            raise TemplateRefused(self.name, f"{type(exc).__name__}: {exc}") from None

    def render_text(self, messages, tools) -> str:
        return self._enc.decode(self.token_ids(messages, tools))

    def text_token_count(self, text: str) -> int:
        return len(self._enc.encode(text, allowed_special=set()))

    def control_token_strings(self) -> list[str]:
        return list(self._specials)

    def control_tokens_in(self, text: str) -> list[tuple[str, int, int]]:
        return []  # harmony's renderer encodes message text as plain text
