"""Mutation fuzzing shared by the format tests: one node of a decoded file replaced, removed or
emptied; the importer must either read the result or refuse it with our own error."""
from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from core import InputFileError
from core.formats.importing import import_parsed
from core.formats.source import Parsed

REPLACEMENTS = [None, True, 0, -1, 1.5, "", "x", "{\"a\": 1", [], {}, [None], {"type": None}, [[]], {"text": 3}]


def paths(value: Any, here: tuple = ()) -> list[tuple]:
    found = [here]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += paths(inner, here + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += paths(inner, here + (i,))
    return found


def mutated(value: Any, path: tuple, how: str, replacement: Any) -> Any:
    value = copy.deepcopy(value)
    if not path:
        return replacement
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if how == "delete":
        del parent[key]
    else:
        parent[key] = replacement
    return value


def mutations(value: Any):
    """Hypothesis strategy: ``value`` with one mutation (or a few, applied in turn)."""
    every = paths(value)

    @st.composite
    def one(draw):
        out = value
        for _ in range(draw(st.integers(1, 3))):
            current = paths(out) if out is not value else every
            path = current[draw(st.integers(0, len(current) - 1))]
            how = draw(st.sampled_from(["replace", "delete"])) if path else "replace"
            out = mutated(out, path, how, draw(st.sampled_from(REPLACEMENTS)))
        return out

    return one()


def import_or_refuse(data: Any, kind: str = "json") -> None:
    """Import ``data`` (a decoded file; for JSON Lines a list of lines); only our errors may escape."""
    if kind == "jsonl":
        records = [(i + 1, v) for i, v in enumerate(data)] if isinstance(data, list) else [(1, data)]
    else:
        records = [(None, data)]
    if kind == "jsonl" and not records:
        return
    try:
        imported = import_parsed(Parsed("<fuzz>", kind, records))
    except InputFileError:
        return
    for request in imported.requests:  # what was read is well-formed
        assert len(request.messages) == len(request.places) == len(request.sections)
        for message in request.messages:
            assert message.role in ("system", "user", "assistant", "tool")
