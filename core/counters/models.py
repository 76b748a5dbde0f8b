"""The model registry: a model name's context window, maximum output, provider, and the counter to use.

The table is a pinned copy of LiteLLM's maintained ``model_prices_and_context_window`` (see the
``_source`` entry of ``model_table.json``: the litellm 1.110.2 wheel, plus the older entries of
tokencost 0.1.26 that litellm has since dropped; both MIT), cut down to chat models and five fields.
The litellm package itself is far too heavy to depend on for one table. To regenerate: take
``litellm/model_prices_and_context_window_backup.json`` from a newer wheel and keep the same fields.

A person adds or overrides entries in a JSON file of their own: ``$CONTEXT_ASSEMBLER_MODELS``, else
``~/.config/context-assembler/models.json``, shaped like the table::

    {"my-finetune": {"max_input_tokens": 32768, "max_output_tokens": 4096,
                     "litellm_provider": "openai", "counter": "openai:gpt-4o"}}

A name is looked up as given, then without a provider prefix (``openai/gpt-4o``), then without a
date or version suffix (``gpt-4.1-2025-04-14`` -> ``gpt-4.1``, ``claude-3-5-haiku-20241022``).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import CounterError
from .registry import DEFAULT_COUNTER

TABLE = Path(__file__).with_name("model_table.json")
USER_TABLE_ENV = "CONTEXT_ASSEMBLER_MODELS"
USER_TABLE = Path("~/.config/context-assembler/models.json")
# Suffixes a provider adds to a model's base name: dates, versions, "-latest".
_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-v\d+(:\d+)?|-latest|-\d{3,4})$")
OPENAI_PROVIDERS = {"openai", "azure", "text-completion-openai"}
ESTIMATE_PROVIDERS = {"anthropic", "vertex_ai-anthropic_models", "bedrock", "bedrock_converse", "gemini",
                      "vertex_ai-language-models", "vertex_ai"}


@dataclass(frozen=True)
class ModelInfo:
    name: str  # as asked
    key: str  # the table entry it matched
    context_window: int | None
    max_output: int | None
    provider: str | None
    counter: str  # a counter spec for make_counter
    source: str  # "table" | "tokencost" | the user file's path

    @property
    def estimate(self) -> bool:
        return self.counter.startswith("estimate:")


def user_table_path() -> Path:
    value = os.environ.get(USER_TABLE_ENV)
    return Path(value).expanduser() if value else USER_TABLE.expanduser()


@lru_cache(maxsize=1)
def _bundled() -> dict[str, dict]:
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    data.pop("_source", None)
    return data


@lru_cache(maxsize=1)
def _by_bare_name() -> dict[str, str]:
    """Last path part of a routed name (``fireworks_ai/.../gpt-oss-120b``) -> that key, where the bare name has
    no entry of its own; the first in sorted order wins."""
    out: dict[str, str] = {}
    table = _bundled()
    for key in sorted(table):
        bare = key.rsplit("/", 1)[-1]
        if bare != key and bare not in table:
            out.setdefault(bare, key)
    return out


def _user(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CounterError(f"{path}: not a readable JSON model table ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise CounterError(f"{path}: a model table is an object of model name -> {{max_input_tokens, ...}}")
    return data


def _candidates(name: str) -> list[str]:
    out = [name]
    bare = name.split("/", 1)[1] if "/" in name else name
    while True:
        if bare not in out:
            out.append(bare)
        shorter = _SUFFIX.sub("", bare)
        if shorter == bare:
            return out
        bare = shorter


def counter_for(name: str, provider: str | None) -> str:
    """The counter spec for a model: its own tokenizer where public, else an estimate."""
    from .openai import encoding_for

    bare = name.rsplit("/", 1)[-1]
    lowered = bare.lower()
    if lowered.startswith("gpt-oss"):
        return "harmony:" + bare
    try:
        encoding_for(bare)
        if provider is None or provider in OPENAI_PROVIDERS or lowered.startswith(("gpt-", "o1", "o3", "o4")):
            return f"openai:{bare}"
    except CounterError:
        pass
    if provider == "mistral" or lowered.startswith(("mistral", "codestral", "ministral", "open-mistral")):
        return DEFAULT_COUNTER
    return f"estimate:{bare}"


def _find(name: str) -> tuple[str, dict, str] | None:
    """(the name form that matched, its table entry, where it came from), the person's own file first."""
    path = user_table_path()
    tables = [(_user(path), str(path)), (_bundled(), "table")]
    for candidate in _candidates(name):
        for table, source in tables:
            entry = table.get(candidate)
            if entry is None and source == "table" and candidate in _by_bare_name():
                entry = table[_by_bare_name()[candidate]]
            if entry is not None:
                return candidate, entry, source
    return None


def lookup(name: str | None) -> ModelInfo | None:
    """The registry's entry for a model name, the person's own file first; ``None`` if neither knows it."""
    found = _find(name) if name else None
    if found is None:
        return None
    candidate, entry, source = found
    provider = entry.get("litellm_provider")
    window = entry.get("max_input_tokens")
    output = entry.get("max_output_tokens")
    return ModelInfo(name=name, key=candidate, context_window=window if isinstance(window, int) else None,
                     max_output=output if isinstance(output, int) else None, provider=provider,
                     counter=entry.get("counter") or counter_for(name, provider),
                     source=entry.get("from", source) if source == "table" else source)


def input_cost_per_token(name: str | None) -> float | None:
    """US dollars per input token from the table (``input_cost_per_token``); ``None`` where it has none."""
    found = _find(name) if name else None
    price = found[1].get("input_cost_per_token") if found else None
    return float(price) if isinstance(price, (int, float)) and not isinstance(price, bool) else None


def auto_counter_spec(model: str | None) -> str:
    """What ``--counter auto`` uses for a model name: the registry's counter, or from the name alone."""
    info = lookup(model)
    if info is not None:
        return info.counter
    if not model:
        return DEFAULT_COUNTER
    return counter_for(model, None)
