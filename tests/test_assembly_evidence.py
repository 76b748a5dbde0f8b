"""The evidence fill's batched walk (``core.assembly_evidence``) and the trace entries it builds without validation
(``core.result.valid_entry``): the same entries ``trace_entry`` validates, and at every limit around the places where
passages start to fit (the first kept, predictions near the allowance) the reference assembly's bytes and fields."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from core import RequiredContextTooLarge, assemble, make_counter, parse_request
from core.replay import Edits, edited_request, replay
from core.result import ITEM_FIELDS, MADE_OK, PASSAGE_FIELDS, trace_entry, valid_entry
from tests.benchmarks.workload import large_request


def _state(entry):
    return (type(entry), entry.__dict__, [type(v) for v in entry.__dict__.values()], entry.__pydantic_fields_set__,
            entry.__pydantic_extra__, entry.__pydantic_private__, entry.model_dump_json())


@pytest.mark.parametrize("fields", [
    dict(section="evidence", id="p1", decision="dropped", tokens=12, reason="does not fit", rank=3, score=0.5, source="s"),
    dict(section="evidence", id="p1", decision="kept", tokens=0, reason="fits", rank=1, score=-2.0, source=None),
    dict(section="evidence", id="p1", decision="kept", tokens=5, reason="fits", rank=1, score=1, source="s"),  # int score
    dict(section="history", id="t1", decision="dropped", tokens=-3, reason="older", rank=7),
])
def test_a_valid_entry_is_the_validated_entry(fields):
    given = PASSAGE_FIELDS if "score" in fields else ITEM_FIELDS
    made = valid_entry(**fields, given=given)
    assert _state(made) == _state(trace_entry(**fields))
    made.message_indices.append(1)  # each entry has its own list and fields set
    assert valid_entry(**fields, given=given).message_indices == []
    assert MADE_OK


def test_a_value_of_another_type_is_validated_as_before():
    with pytest.raises(ValidationError):
        valid_entry("evidence", "p", "kept", True, "fits", 1, 0.5, "s")  # strict tokens: a bool is refused
    with pytest.raises(ValidationError):
        valid_entry("evidence", "p", "maybe", 1, "fits", 1, 0.5, "s")


def _outcome(fn):
    try:
        result = fn()
    except RequiredContextTooLarge as exc:
        return f"too large: {exc}"
    result = result.model_copy(update={"counting_note": None})
    return result.to_json(), [sorted(e.model_fields_set) for e in result.trace]


@pytest.mark.parametrize("fill_order", [("history", "evidence"), ("evidence", "history")])
def test_replays_at_limits_around_the_first_passages_are_the_reference(fill_order):
    request = parse_request(large_request(24, 6, 3, context_limit=8000))
    counter, reference = make_counter(), make_counter()
    recorded = assemble(request, counter)
    roomy = assemble(edited_request(request, Edits(context_limit=10 ** 6)), counter)
    required = sum(e.tokens for e in roomy.trace if e.decision == "required") + request.max_new_tokens + request.margin
    first = required + min(e.tokens for e in roomy.trace if e.section == "evidence")
    limits = sorted({*range(first - 6, first + 40), *range(required, required + 3000, 97)})
    seen_kept = set()
    for limit in limits:
        edit = Edits(context_limit=limit, fill_order=fill_order)
        reference.__dict__.pop("_request_memos", None)
        replayed = _outcome(lambda: replay(recorded, edits=edit, counter=counter))
        assert replayed == _outcome(lambda: assemble(edited_request(request, edit), reference, reference=True)), limit
        if not isinstance(replayed, str):
            seen_kept.add(replayed[0].count('"decision": "kept"'))
    assert len(seen_kept) > 5  # the limits covered several numbers of kept items
