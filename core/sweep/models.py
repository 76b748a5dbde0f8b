"""Which counter counts a request, and what its input costs: the model registry where there is one.

``--counter auto`` picks each request's counter from its model name through the model registry;
a prices table gives the input price per token. Where the registry is not installed (or does not
know the model), the default counter is used and the cost is left out, and the sweep says so.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from ..counting import DEFAULT_COUNTER, TokenCounter, make_counter


def _registry() -> Any | None:
    for name in ("core.counters.models", "core.registry", "core.counters.registry"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(module, "lookup") or hasattr(module, "model_info"):
            return module
    return None


def _info(model: str) -> Any | None:
    registry = _registry()
    if registry is None or not model:
        return None
    find = getattr(registry, "lookup", None) or getattr(registry, "model_info")
    try:
        return find(model)
    except Exception:  # an unknown model: no registry entry
        return None


def auto_available() -> bool:
    return _registry() is not None


def input_price(model: str) -> float | None:
    """US dollars per input token for ``model``, from the registry; ``None`` where unknown."""
    info = _info(model)
    if info is None:
        return None
    for name, scale in (("input_price_per_token", 1.0), ("input_cost_per_token", 1.0),
                        ("input_price_per_mtok", 1e-6), ("input_per_million", 1e-6)):
        value = info.get(name) if isinstance(info, dict) else getattr(info, name, None)
        if isinstance(value, (int, float)):
            return float(value) * scale
    return None


def counter_spec(spec: str | None, model: str | None) -> str:
    """The counter spec for a request of ``model`` under ``--counter spec``."""
    if spec != "auto":
        return spec or DEFAULT_COUNTER
    info = _info(model or "")
    chosen = (info.get("counter") if isinstance(info, dict) else getattr(info, "counter", None)) if info else None
    return chosen or DEFAULT_COUNTER


def counters(spec: str | None) -> Callable[[str | None], TokenCounter]:
    """model -> counter, each counter built once (per process) and reused."""
    built: dict[str, TokenCounter] = {}

    def get(model: str | None) -> TokenCounter:
        chosen = counter_spec(spec, model)
        if chosen not in built:
            built[chosen] = make_counter(chosen)
        return built[chosen]

    get(None)  # build the default one now: a bad --counter fails before any request is read
    return get
