"""What ``MistralCounter`` loads and remembers once per process: the tokenizer file, the instruct class's source
(its template fingerprint) and the tool sets mistral-common's schema check has passed."""
from __future__ import annotations

import functools
import json


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
