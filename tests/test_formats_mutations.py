"""Mutation fuzzing of the importers: every fixture in fixtures/formats/ and every real file in
../shared/realworld*/ is decoded, then changed at random places (a value replaced by one of another
type, a key removed, a list emptied or cut, JSON text inside a string changed the same way) and
imported again. The import may read the file or refuse it, but only with our own errors (a
``FormatError`` naming the place), never a ``TypeError`` or any other exception. Bounded: a fixed
seed and a few dozen mutations per file."""
from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from formats_support import REPLACEMENTS, mutated, paths
from support import FIXTURES, SHARED

from core.errors import InputFileError
from core.formats.importing import import_parsed
from core.formats.show import show_json
from core.formats.source import Parsed, parse_file

MUTATIONS_PER_FILE = 40


def files() -> list[Path]:
    found = sorted(p for p in (FIXTURES / "formats").iterdir() if p.is_file())
    for folder in ("realworld", "realworld2"):
        root = SHARED / folder
        if root.is_dir():
            found += sorted(p for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md"
                            and p.parent.name != "chat-templates")
    return found


def _mutate(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """``value`` with one random change (``formats_fuzz``'s kinds of change); JSON text inside a string
    (span attributes, cassette bodies) is changed inside and written back."""
    path = rng.choice(paths(value))
    current = value
    for key in path:
        current = current[key]
    if path and isinstance(current, str) and depth < 2 and current.strip()[:1] in ("{", "["):
        try:
            inner = json.loads(current)
        except json.JSONDecodeError:
            inner = None
        if inner is not None:
            return mutated(value, path, "replace", json.dumps(_mutate(inner, rng, depth + 1)))
    how = "delete" if path and not isinstance(path[-1], int) and rng.random() < 0.15 else "replace"
    return mutated(value, path, how, copy.deepcopy(rng.choice(REPLACEMENTS)))


@pytest.mark.parametrize("path", files(), ids=lambda p: p.name)
def test_mutated_files_raise_only_our_errors(path):
    parsed = parse_file(path)
    rng = random.Random(path.name)
    for n in range(MUTATIONS_PER_FILE):
        records = copy.deepcopy(parsed.records)
        i = rng.randrange(len(records))
        line, data = records[i]
        for _ in range(rng.randint(1, 3)):
            data = _mutate(data, rng)
        records[i] = (line, data)
        mutated = Parsed(parsed.path, parsed.kind, records, list(parsed.notes), parsed.one_line)
        try:
            show_json(import_parsed(mutated))
        except InputFileError:
            continue
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"{path.name}, mutation {n}: {type(exc).__name__}: {exc}")


def _one_change(name: str, change) -> str:
    data = json.loads((FIXTURES / "formats" / name).read_text(encoding="utf-8"))
    change(data)
    from core.formats import import_data

    try:
        imported = import_data(data, source=name)
    except InputFileError as exc:
        return str(exc)
    return " | ".join(str(f) for f in imported.failed)


@pytest.mark.parametrize("name, change, expected", [
    ("anthropic_body.json", lambda d: d["messages"][1].__setitem__("content", 7),
     "anthropic-messages: messages[1].content: content must be a string or a list of parts, found int"),
    ("openai_request_response.json", lambda d: d["request"].__setitem__("tools", 3),
     "request.tools: tool definitions must be a list, found int"),
    ("langfuse_trace.json", lambda d: d["observations"][1].__setitem__("input", 12.5),
     "observations[1].input: the recorded input is not messages (found float)"),
    ("otlp_traces.json", lambda d: d["resourceSpans"][0]["scopeSpans"][0]["spans"][1].__setitem__("attributes", 4),
     "resourceSpans[0].scopeSpans[0].spans[1].attributes: attributes must be a list of key/value pairs, found int"),
    ("phoenix_spans.json", lambda d: d[1].__setitem__("events", 5) if isinstance(d, list) else
     d["data"][1].__setitem__("events", 5), "expected a list, found int"),
])
def test_a_value_of_the_wrong_type_is_named_with_its_place(name, change, expected):
    assert expected in _one_change(name, change)
