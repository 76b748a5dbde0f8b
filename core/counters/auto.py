"""``--counter auto``: each imported request counted with the counter its model calls for.

The model registry (``models.py``) names the counter; counters are built once per spec. When the
named counter cannot be built here (its tiktoken encoding is not in the cache, a tokenizer directory
is gone), the request is counted as an estimate (``estimate:<model>``: o200k_base as a proxy, or the
bundled tekken when that is not cached either), never downloaded, and the reason is kept, so the result
says so in words and names what to run. Nothing is ever fetched on its own.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import CounterError
from .base import TokenCounter
from .models import auto_counter_spec
from .registry import AUTO, DEFAULT_COUNTER, make_counter


class AutoCounter:
    """Picks and caches a counter per model name. ``name`` is ``auto``."""

    name = AUTO

    def __init__(self, *, chat_template_kwargs: Mapping[str, Any] | None = None) -> None:
        self._built: dict[str, TokenCounter | CounterError] = {}
        self._kwargs = dict(chat_template_kwargs or {})
        self._fallbacks: dict[str, TokenCounter] = {}  # estimates standing in, by model name

    def _build(self, spec: str) -> TokenCounter:
        if spec not in self._built:
            try:
                kwargs = self._kwargs if spec.startswith("hf:") else None
                self._built[spec] = make_counter(spec, chat_template_kwargs=kwargs)
            except CounterError as exc:
                self._built[spec] = exc
        built = self._built[spec]
        if isinstance(built, CounterError):
            raise built
        return built

    def pick(self, model: str | None) -> tuple[TokenCounter, str | None]:
        """The counter for ``model`` and, when it is a fallback (an estimate), why."""
        spec = auto_counter_spec(model)
        try:
            return self._build(spec), None
        except CounterError as exc:
            if spec == DEFAULT_COUNTER or spec.startswith("estimate:"):
                raise
            why = f"auto picked {spec} for {model}, which cannot be used here ({exc})"
            name = model or spec.partition(":")[2] or spec
            if name not in self._fallbacks:
                from .estimate import make_estimate

                self._fallbacks[name] = make_estimate(name, reason=f"{spec} cannot be used here: {exc}")
            return self._fallbacks[name], why + f"; counted as an estimate ({self._fallbacks[name].name}) instead"


def resolve(counter: "TokenCounter | AutoCounter", model: str | None) -> tuple[TokenCounter, str | None]:
    if isinstance(counter, AutoCounter):
        return counter.pick(model)
    return counter, None
