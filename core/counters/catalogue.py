"""Every counter this installation can build, for a picker or ``context-assembler tokenizers list``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..errors import CounterError
from .mistral import bundled_mistral_tokenizers
from .models import _user, user_table_path
from .tiktoken_cache import ENCODINGS, cached_path

OPENAI_MODELS = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "o3", "o4-mini",
                 "gpt-4", "gpt-3.5-turbo")
ESTIMATE_MODELS = ("claude-sonnet-4-6", "claude-3-5-sonnet-20241022", "gemini-2.5-pro", "gemini-2.5-flash")


@dataclass(frozen=True)
class CounterEntry:
    spec: str
    description: str
    available: bool = True  # False: listed, but needs something first (the description says what)
    estimate: bool = False


def available_counters(hf_dirs: Iterable[str] = ()) -> list[CounterEntry]:
    from .openai import encoding_for

    out = [CounterEntry("auto", "the counter the model registry names for each request's model")]
    out += [CounterEntry(f"mistral:{name}", "bundled with mistral-common") for name in bundled_mistral_tokenizers()]
    for model in OPENAI_MODELS:
        encoding = encoding_for(model)
        cached = cached_path(encoding) is not None
        out.append(CounterEntry(f"openai:{model}", f"tiktoken {encoding}" + (
            "" if cached else f" (not cached: context-assembler tokenizers fetch {encoding})"), cached))
    for encoding in sorted(ENCODINGS):
        cached = cached_path(encoding) is not None
        out.append(CounterEntry(f"openai:{encoding}", "the encoding alone, OpenAI's chat format" + (
            "" if cached else f" (not cached: context-assembler tokenizers fetch {encoding})"), cached))
    harmony_ok = cached_path("o200k_base") is not None
    out.append(CounterEntry("harmony:gpt-oss-20b", "gpt-oss through openai-harmony" + (
        "" if harmony_ok else " (needs o200k_base in the tiktoken cache)"), harmony_ok))
    proxy = "o200k_base" if harmony_ok else "the bundled tekken tokenizer"
    out += [CounterEntry(f"estimate:{model}", f"an estimate: no public tokenizer; {proxy} as a proxy", True, True)
            for model in ESTIMATE_MODELS]
    out += [CounterEntry(f"hf:{d}", "a local Hugging Face tokenizer directory used before") for d in hf_dirs]
    listed = {e.spec for e in out}
    for spec, models in _configured().items():  # named by the person's own model table
        if spec not in listed:
            out.append(CounterEntry(spec, f"named in your model table {user_table_path()} for {', '.join(models)}",
                                    estimate=spec.startswith("estimate:")))
    return out


def _configured() -> dict[str, list[str]]:
    """Counter spec -> the models the person's own model table names it for (none where it is unreadable:
    counting with it reports that)."""
    try:
        table = _user(user_table_path())
    except CounterError:
        return {}
    out: dict[str, list[str]] = {}
    for model, entry in table.items():
        spec = entry.get("counter")
        if isinstance(spec, str) and spec:
            out.setdefault(spec, []).append(model)
    return out
