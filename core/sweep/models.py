"""Which counter counts a request, and what its input costs: the model registry (``core.counters.models``).

``--counter auto`` picks each request's counter from its model name (the registry's counter, else one
from the name alone; a counter that cannot be built here falls back to the default, and the sweep's
notes say so). Input cost uses the registry's ``input_cost_per_token``; a model it does not price is
left out of the cost (and ``priced_input_tokens`` says how many tokens were priced).
"""
from __future__ import annotations

from typing import Callable

from ..counters.models import auto_counter_spec, input_cost_per_token
from ..counting import DEFAULT_COUNTER, TokenCounter, make_counter
from ..errors import CounterError

AUTO = "auto"


def input_price(model: str) -> float | None:
    """US dollars per input token for ``model``; ``None`` where the registry has no price."""
    return input_cost_per_token(model)


def counter_spec(spec: str | None, model: str | None) -> str:
    """The counter spec for a request of ``model`` under ``--counter spec``."""
    if spec != AUTO:
        return spec or DEFAULT_COUNTER
    return auto_counter_spec(model)


def counters(spec: str | None) -> Callable[[str | None], TokenCounter]:
    """model -> counter, each counter built once (per process) and reused. Under ``auto`` a counter
    that cannot be built here (a tokenizer not installed) is replaced by an estimate for the model
    (``estimate:<model>``, named as such in the results), as ``count`` and the inspector do."""
    built: dict[str, TokenCounter] = {}

    def get(model: str | None) -> TokenCounter:
        chosen = counter_spec(spec, model)
        if chosen not in built:
            try:
                built[chosen] = make_counter(chosen)
            except CounterError as exc:
                if spec != AUTO or chosen == DEFAULT_COUNTER or chosen.startswith("estimate:"):
                    raise
                from ..counters.estimate import make_estimate

                name = model or chosen.partition(":")[2] or chosen
                built[chosen] = make_estimate(name, reason=f"{chosen} cannot be used here: {exc}")
        return built[chosen]

    get(None)  # build the default one now: a bad --counter fails before any request is read
    return get
