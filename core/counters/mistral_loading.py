"""What ``MistralCounter`` loads and remembers once per process: the tokenizer file, the instruct class's source
(its template fingerprint) and the tool sets mistral-common's schema check has passed; where its tokenizer files
are, and the tool call ids it takes."""
from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path


@functools.lru_cache(maxsize=None)
def _class_source(cls: type) -> str:
    """The source of mistral-common's instruct tokenizer class, which the counter's template fingerprint hashes:
    read once per process. ``inspect.getsource`` parses the whole module with ``ast`` on every call, and under
    CPython 3.11 a parse after a caught RecursionError elsewhere in the process can fail with "AST constructor
    recursion depth mismatch" (seen once in a full test run, at the hundredth counter made)."""
    import inspect

    return inspect.getsource(cls)


@functools.lru_cache(maxsize=4)
def _load_tokenizer(path: str, mtime_ns: int, size: int):
    """A tokenizer file loaded once per process (tekken takes seconds to load; every command, sweep worker
    and inspector counter would load it again). Keyed by the file's time and size: a changed file loads anew."""
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    return MistralTokenizer.from_file(path)


def _memoised_tool_check(check, each_tool: bool = False):
    """mistral-common checks every tool's JSON schema on every encode; a tool set passes or fails
    the same way each time, so remember the sets that passed (failures are raised every time). Where its
    check is tool by tool (``each_tool``), remember each tool that passed: the tools are checked in order
    and the first failing one raises, as the whole set's check would."""
    passed: set[str] = set()

    def key_of(tools):
        return json.dumps([t.model_dump(mode="json") for t in tools], sort_keys=True) if tools else ""

    def cached(tools):
        if each_tool and len(tools) > 1:
            for tool in tools:
                cached([tool])
            return None
        key = key_of(tools)
        if key in passed:
            return None
        outcome = check(tools)
        passed.add(key)
        return outcome

    return cached


_MISTRAL_ID = re.compile(r"^[A-Za-z0-9]{9}$")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def mistral_tool_call_id(call_id: str) -> str:
    """Mistral requires 9 alphanumeric characters; other ids map to a stable 9-character one."""
    if _MISTRAL_ID.match(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).digest()[:8], "big")
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
