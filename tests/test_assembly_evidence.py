"""The evidence fill's batched walk (``core.assembly_evidence``) and the trace entries the core builds without validation
(``core.result.trace_entry``): the same entries validation makes, and at every limit around the places where
passages start to fit (the first kept, predictions near the allowance) the reference assembly's bytes and fields."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from core import assemble, make_counter, parse_request
from core.replay import Edits, edited_request
from core.result import MADE_OK, TraceEntry, set_message_indices, trace_entry
from support import replays_are_the_reference
from tests.benchmarks.workload import large_request


def _state(entry):
    return (type(entry), entry.__dict__, [type(v) for v in entry.__dict__.values()], entry.__pydantic_fields_set__,
            entry.__pydantic_extra__, entry.__pydantic_private__, entry.model_dump_json())


@pytest.mark.parametrize("fields", [
    dict(section="evidence", id="p1", decision="dropped", tokens=12, reason="does not fit", rank=3, score=0.5, source="s"),
    dict(section="evidence", id="p1", decision="kept", tokens=0, reason="fits", rank=1, score=-2.0, source=None),
    dict(section="evidence", id="p1", decision="kept", tokens=5, reason="fits", rank=1, score=1, source="s"),  # int score
    dict(section="evidence", id="p1", decision="kept", tokens=5, reason="fits", score=0.5, rank=1),  # another order
    dict(section="history", id="t1", decision="dropped", tokens=-3, reason="older", rank=7),
    dict(section="history", id="t1", decision="dropped", tokens=-3, reason="older", rank=None),
    dict(section="tools", id="t", decision="required", tokens=9, reason="required: tool definition"),
    dict(section="history", id="t1", decision="kept", tokens=4, reason="fits", rank=2, message_indices=[3]),
    dict(section="plan", id="m", decision="summarised", tokens=4, reason="replaced", summary_id="s1"),  # an extra field
])
def test_an_entry_is_the_validated_entry(fields):
    made = trace_entry(**fields)
    assert _state(made) == _state(TraceEntry.model_validate(fields)) == _state(TraceEntry(**fields))
    made.message_indices.append(1)  # each entry has its own list; entries made alike share a fields set (memory)
    made.x = 1  # an extra field: copied before pydantic adds to the set and the extras
    made.message_indices = [4]
    other = trace_entry(**fields)
    assert other.message_indices == fields.get("message_indices", [])
    assert "x" not in other.model_fields_set and "x" not in (other.model_extra or {})
    assert ("message_indices" in other.model_fields_set) == ("message_indices" in fields)
    assert {"x", "message_indices"} <= made.model_fields_set and made.model_extra["x"] == 1
    set_message_indices(other, [2])
    assert other.message_indices == [2] and "message_indices" in other.model_fields_set
    assert "message_indices" not in trace_entry(**fields).model_fields_set or "message_indices" in fields
    assert _state(other) == _state(TraceEntry.model_validate({**fields, "message_indices": [2]}))
    copied = other.model_copy(update={"y": 2, "rank": 9})
    assert "y" not in trace_entry(**fields).model_fields_set and "y" not in other.model_fields_set
    assert copied.rank == 9 and copied.model_extra["y"] == 2 and other.model_extra == (trace_entry(**fields).model_extra)
    assert MADE_OK


def test_a_value_of_another_type_is_validated_as_before():
    with pytest.raises(ValidationError):
        trace_entry("evidence", "p", "kept", True, "fits", rank=1, score=0.5, source="s")  # strict tokens: a bool
    with pytest.raises(ValidationError):
        trace_entry("evidence", "p", "maybe", 1, "fits", rank=1, score=0.5, source="s")


@pytest.mark.parametrize("fill_order", [("history", "evidence"), ("evidence", "history")])
def test_replays_at_limits_around_the_first_passages_are_the_reference(fill_order):
    request = parse_request(large_request(24, 6, 3, context_limit=8000))
    roomy = assemble(edited_request(request, Edits(context_limit=10 ** 6)), make_counter())
    required = sum(e.tokens for e in roomy.trace if e.decision == "required") + request.max_new_tokens + request.margin
    first = required + min(e.tokens for e in roomy.trace if e.section == "evidence")
    limits = sorted({*range(first - 6, first + 40), *range(required, required + 3000, 97)})
    outcomes = replays_are_the_reference(request, limits, fill_order)
    seen_kept = {o[0].count('"decision": "kept"') for o in outcomes if not isinstance(o, str)}
    assert len(seen_kept) > 5  # the limits covered several numbers of kept items
