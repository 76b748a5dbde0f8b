"""Building a counter from its spec: ``mistral:<tokenizer>``, ``hf:<directory>``..."""
from __future__ import annotations

from ..errors import CounterError
from .base import TokenCounter
from .hf import HFCounter
from .mistral import MistralCounter

DEFAULT_COUNTER = "mistral:tekken_240911"


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
