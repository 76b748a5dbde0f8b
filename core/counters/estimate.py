"""``estimate:<model>``: models whose tokenizer is not public (Claude 3 and later, Gemini, others).

No exact count is possible outside the provider, so this counts with a proxy and says so: OpenAI's
``o200k_base`` with OpenAI's chat format (``openai.OpenAICounter``), or, when that encoding is not in
the tiktoken cache, the bundled Mistral tekken tokenizer. Its identity's ``kind`` is ``estimate`` and
its notes name the proxy. Where a file records the provider's own input tokens, that figure is the
authoritative one (``count_imported`` says so on the result).
"""
from __future__ import annotations

from ..errors import CounterError
from .base import CounterIdentity
from .mistral import MistralCounter
from .openai import OpenAICounter
from .tiktoken_cache import cached_path

PROXY_ENCODING = "o200k_base"


def _why(model: str) -> str:
    lowered = model.lower()
    if "claude" in lowered:
        return "Anthropic does not publish the tokenizer of Claude 3 and later"
    if "gemini" in lowered:
        return "Google does not publish Gemini's tokenizer for local use"
    return "no public tokenizer for this model is bundled or configured"


class _EstimateMixin:
    reason: str | None = None  # why there is no exact count, where it is not the model's unpublished tokenizer

    def _estimate_identity(self, model: str, proxy: str, base: CounterIdentity) -> CounterIdentity:
        return base.model_copy(update={
            "name": f"estimate:{model}", "kind": "estimate", "model": model,
            "notes": f"an estimate: {self.reason or _why(model)}; counted with {proxy} as a proxy"})


# Anthropic documents the system prompt it adds when a request offers tools (tool_choice auto/none), per model:
# Claude 3 Opus 530, Claude 3 Haiku 264, Claude 3.5 and later 346 (its "Tool use" pricing notes).
CLAUDE_TOOL_PROMPT = (("claude-3-opus", 530), ("claude-3-haiku", 264), ("claude", 346))
TOOL_PROMPT_TEXT = "[the provider's tool-use system prompt: {n} tokens, not published]\n"


def claude_tool_prompt(model: str) -> int:
    lowered = model.lower()
    return next((n for prefix, n in CLAUDE_TOOL_PROMPT if prefix in lowered), 0)


class EstimateCounter(_EstimateMixin, OpenAICounter):
    """o200k_base and OpenAI's chat format standing in for a model's own tokenizer; for Claude with tools, the
    tool-use system prompt Anthropic documents is added as that many tokens."""

    def __init__(self, model: str, reason: str | None = None) -> None:
        super().__init__(PROXY_ENCODING)
        self.model, self.reason = model, reason
        self._tool_prompt = self.tools_fixed_tokens = claude_tool_prompt(model)
        extra = (f"; with tools, {self._tool_prompt} tokens for Anthropic's documented tool-use system prompt"
                 if self._tool_prompt else "")
        self._identity = self._estimate_identity(
            model, f"{PROXY_ENCODING} (OpenAI's tokenizer and chat format){extra}", self._identity)

    def token_ids(self, messages, tools) -> list[int]:
        ids = super().token_ids(messages, tools)
        return ids + [self._enc.n_vocab + 99] * self._tool_prompt if tools else ids

    def render_text(self, messages, tools) -> str:
        text = super().render_text(messages, tools)
        return TOOL_PROMPT_TEXT.format(n=self._tool_prompt) + text if tools and self._tool_prompt else text


class TekkenEstimateCounter(_EstimateMixin, MistralCounter):
    """The bundled Mistral tokenizer standing in, when o200k_base is not in the tiktoken cache."""

    def __init__(self, model: str, reason: str | None = None) -> None:
        super().__init__()
        self.model, self.reason = model, reason
        self._identity = self._estimate_identity(
            model, f"{self._identity.name} (bundled; o200k_base is not in the tiktoken cache)", self._identity)


def make_estimate(model: str, reason: str | None = None):
    """An estimate for ``model``; ``reason`` says why there is no exact count when it is not that the model's
    tokenizer is unpublished (``auto``'s fallback: the model's own counter cannot be built here)."""
    if not model:
        raise CounterError("estimate: needs a model name, e.g. estimate:claude-sonnet-4-6")
    if cached_path(PROXY_ENCODING) is not None:
        return EstimateCounter(model, reason)
    return TekkenEstimateCounter(model, reason)
