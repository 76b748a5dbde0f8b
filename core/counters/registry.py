"""Building a counter from its spec.

``mistral:<tokenizer>`` (bundled with mistral-common; the default), ``openai:<model>`` (tiktoken and
OpenAI's billed chat format), ``harmony:<model>`` (gpt-oss through openai-harmony),
``estimate:<model>`` (a proxy for a model whose tokenizer is not public), ``hf:<directory>`` (a local
Hugging Face tokenizer and its chat template) and ``auto`` (the counter the model registry names for
``model``; see ``models.py``).
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import CounterError
from .base import TokenCounter

DEFAULT_COUNTER = "mistral:tekken_240911"
AUTO = "auto"
KINDS = ("mistral", "openai", "harmony", "estimate", "hf", "auto")


def parse_template_kwargs(text: str | None) -> dict[str, Any]:
    """``enable_thinking=true,reasoning_effort=low`` -> ``{"enable_thinking": True, "reasoning_effort": "low"}``
    (values read as JSON where they parse: true/false/null, numbers, quoted strings; else as text)."""
    import json

    out: dict[str, Any] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise CounterError(f"--chat-template-kwargs: {part!r} is not key=value")
        try:
            out[key.strip()] = json.loads(value.strip())
        except json.JSONDecodeError:
            out[key.strip()] = value.strip()
    return out


def make_counter(spec: str | None = None, *, context_window: int | None = None, model: str | None = None,
                 chat_template_kwargs: Mapping[str, Any] | None = None) -> TokenCounter:
    """Build a counter from its spec (default: the embedded one). ``context_window`` declares the model's
    window (plans without ``budget_tokens`` budget from it); ``model`` is the model ``auto`` picks for;
    ``chat_template_kwargs`` go to an ``hf:`` counter's chat template."""
    spec = spec or DEFAULT_COUNTER
    if spec == AUTO:
        from .models import auto_counter_spec

        spec = auto_counter_spec(model)
    kind, _, arg = spec.partition(":")
    if chat_template_kwargs and kind != "hf":
        raise CounterError(f"{spec}: --chat-template-kwargs apply to hf: counters only")
    if kind == "mistral":
        from .mistral import MistralCounter

        counter: TokenCounter = MistralCounter(arg or "tekken_240911")
    elif kind == "openai":
        from .openai import OpenAICounter

        counter = OpenAICounter(arg or "gpt-4o")
    elif kind == "harmony":
        from .harmony import HarmonyCounter

        counter = HarmonyCounter(arg or "gpt-oss-20b")
    elif kind == "estimate":
        from .estimate import make_estimate

        counter = make_estimate(arg)
    elif kind == "hf":
        from .hf import HFCounter

        directory, _, recorded = arg.partition("?")  # a name from an identity: hf:<dir>?enable_thinking=true
        if not directory:
            raise CounterError("hf: needs a tokenizer directory, e.g. hf:/path/to/tokenizer")
        kwargs = {**parse_template_kwargs(recorded), **dict(chat_template_kwargs or {})}
        counter = HFCounter(directory, chat_template_kwargs=kwargs)
    else:
        raise CounterError(f"unknown counter {spec!r}: use mistral:<tokenizer>, openai:<model>, harmony:<model>, "
                           "estimate:<model>, hf:<directory> or auto")
    if context_window is not None:
        if context_window <= 0:
            raise CounterError(f"context_window must be positive, not {context_window}")
        counter.context_window = context_window
    return counter
