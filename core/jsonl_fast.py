"""Fast paths for a JSON Lines file of many records: what a list row needs from a line, and a recorded result
validated straight from its bytes.

Both use pydantic's JSON parser (Rust): a line is parsed whole (so a broken one is still found), but Python
objects are built only for what is asked for, not for the messages and passages a list row never shows.
Each fast path answers exactly what the reference path (``json`` with the input layer's checks, then the
models) answers, or ``None`` where it cannot be sure of that (the line is refused, nested past the input
layer's limit, or classified by a key the fast path does not read), and the caller takes the reference path,
which then gives its own value or its own error. ``tests/test_jsonl_fast.py`` holds the two side by side.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .inputs import MAX_NESTING
from .result import AssemblyResult


class _Anything(BaseModel):
    """A JSON object whose keys are not read (one message of a result: only its presence matters)."""

    model_config = ConfigDict(extra="ignore")


class _TraceDecision(BaseModel):
    model_config = ConfigDict(extra="ignore")
    decision: Any = None


class _RequestId(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: Any = None


class _ListedKeys(BaseModel):
    """The top-level keys ``core.loading``'s row summary reads; every other key is parsed, never built."""

    model_config = ConfigDict(extra="ignore")
    request_id: Any = None
    strategy: Any = None
    input_tokens: Any = None
    input_budget: Any = None
    messages: list[_Anything] | None = None
    trace: list[_TraceDecision] | None = None
    request: _RequestId | None = None
    current: Any = None
    instructions: Any = None
    id: Any = None
    kind: Any = None
    error: Any = None
    plan: Any = None
    sections: Any = None


_NOT_OPENERS = bytes(b for b in range(256) if b not in b"[{")


def _nested_within_limit(raw: bytes) -> bool:
    """The input layer refuses nesting past ``MAX_NESTING``; pydantic's parser allows more. A line with no
    more opening brackets than the limit cannot be nested past it (the reference path decides the others)."""
    return len(raw.translate(None, _NOT_OPENERS)) <= MAX_NESTING  # one pass (two counts take twice as long)


def listed_keys(raw: bytes) -> dict[str, Any] | None:
    """The line's top-level keys that a list row reads, as ``json.loads`` would give them (a message of
    ``messages`` as an empty dict, a trace entry with its ``decision`` only, the request with its ``id``
    only); ``None`` where the reference path must decide."""
    if not _nested_within_limit(raw):
        return None
    try:
        parsed = _ListedKeys.model_validate_json(raw)
    except ValidationError:  # not JSON, or a key of another shape than a result's: the reference path says
        return None
    present = parsed.model_fields_set
    value: dict[str, Any] = {name: getattr(parsed, name) for name in present}
    if "messages" in present and parsed.messages is not None:
        value["messages"] = [{} for _ in parsed.messages]
    if "trace" in present and parsed.trace is not None:
        value["trace"] = [{"decision": e.decision} if "decision" in e.model_fields_set else {} for e in parsed.trace]
    if "request" in present and parsed.request is not None:
        value["request"] = {"id": parsed.request.id} if "id" in parsed.request.model_fields_set else {}
    return value


def result_from_line(raw: bytes) -> AssemblyResult | None:
    """A recorded result validated from its line's bytes, equal to ``parse_result(json.loads(raw))``; ``None``
    where the reference path must decide (it is invalid, or its keys would make it a plan or RAG request)."""
    if not _nested_within_limit(raw):
        return None
    try:
        result = AssemblyResult.model_validate_json(raw)
    except ValidationError:
        return None
    extra = result.model_extra or {}
    if "kind" in extra or "plan" in extra:  # entry_from may take it for a RAG windows or plan request
        return None
    return result
