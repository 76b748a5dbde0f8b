"""The request contract: every bad input is refused with the field and the problem named."""
from __future__ import annotations

import pytest
from support import base_request, passage, turn

from core import RequestError, parse_request


def problems(data) -> list[tuple[str, str]]:
    with pytest.raises(RequestError) as info:
        parse_request(data, source="req.json")
    assert str(info.value).startswith("req.json: ")
    return info.value.problems


def test_a_valid_request_parses_with_defaults():
    request = parse_request(base_request())
    assert request.fill_order == ["history", "evidence"]
    assert request.input_budget == 4096 - 256 - 16
    assert request.tools == [] and request.evidence == []


def test_unknown_keys_are_refused_at_every_level():
    assert problems(base_request(temperature=0.2)) == [("temperature", "unknown key (not part of the contract)")]
    bad = base_request(evidence=[dict(passage("a", 1.0), url="x")])
    assert problems(bad) == [("evidence[0].url", "unknown key (not part of the contract)")]


def test_wrong_types_name_the_field():
    found = problems(base_request(context_limit="4096"))
    assert found[0][0] == "context_limit" and "integer" in found[0][1]
    found = problems(base_request(evidence=[dict(passage("a", 1.0), score="high")]))
    assert found[0][0] == "evidence[0].score"


def test_missing_required_fields():
    data = base_request()
    del data["current"]
    assert problems(data)[0][0] == "current"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_scores_are_refused(value):
    found = problems(base_request(evidence=[passage("a", value)]))
    assert found == [("evidence[0].score", "must be a finite number (NaN and infinity are refused)")]


def test_duplicate_evidence_ids():
    found = problems(base_request(evidence=[passage("a", 1.0), passage("a", 0.5)]))
    assert "evidence id 'a' appears twice" in found[0][1]


@pytest.mark.parametrize("field, value", [("context_limit", 0), ("context_limit", -5), ("max_new_tokens", 0),
                                          ("max_new_tokens", -1), ("margin", -1)])
def test_zero_or_negative_budgets(field, value):
    found = problems(base_request(**{field: value}))
    assert found[0][0] == field


def test_reserve_and_margin_that_leave_no_input():
    found = problems(base_request(context_limit=300, max_new_tokens=256, margin=44))
    assert "leave no input room" in found[0][1]


def test_fill_order_must_name_both_sections_once():
    assert "fill_order" in problems(base_request(fill_order=["history", "history"]))[0][1]
    assert problems(base_request(fill_order=["history", "tools"]))[0][0] == "fill_order[1]"


def test_tool_call_without_result_in_current_turn():
    exchange = {"calls": [{"id": "c1", "name": "f", "arguments": {}}], "results": []}
    found = problems(base_request(tool_exchanges=[exchange]))
    assert found[0][0] == "tool_exchanges[0]" and "tool call 'c1' has no result" in found[0][1]


def test_tool_result_without_call_in_current_turn():
    exchange = {"calls": [{"id": "c1", "name": "f"}],
                "results": [{"tool_call_id": "c1", "content": "ok"}, {"tool_call_id": "zz", "content": "?"}]}
    assert "tool result for 'zz' has no matching call" in problems(base_request(tool_exchanges=[exchange]))[0][1]


def test_tool_call_without_result_in_history():
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "tool_calls": [{"id": "c1", "name": "f"}]},
               {"role": "assistant", "content": "done"}]
    assert "tool call 'c1' in history has no result" in problems(base_request(history=history))[0][1]


def test_tool_result_without_call_in_history():
    history = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "x"}]
    assert "no matching call" in problems(base_request(history=history))[0][1]


def test_history_must_open_with_a_user_turn():
    history = [{"role": "assistant", "content": "hello"}] + turn(1)
    assert "must start with a user turn" in problems(base_request(history=history))[0][1]


def test_duplicate_tool_call_ids_and_tool_names():
    """A call id twice in one assistant message (or one exchange) is refused: a result could not say which call it
    answers. Another message may use it again (frameworks that number calls per turn): see test_reused_call_ids."""
    twice = [{"id": "c1", "name": "f"}, {"id": "c1", "name": "g"}]
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": twice},
               {"role": "tool", "tool_call_id": "c1", "content": "x"}, {"role": "tool", "tool_call_id": "c1", "content": "y"}]
    assert problems(base_request(history=history))[0][1].endswith("tool call id 'c1' is used twice in history[1]")
    exchange = {"calls": twice, "results": [{"tool_call_id": "c1", "content": "y"}]}
    where, message = problems(base_request(tool_exchanges=[exchange]))[0]
    assert where == "tool_exchanges[0]" and "tool call id 'c1' is used twice in one exchange" in message
    tool = {"name": "f", "description": "d"}
    assert "tool 'f' is defined twice" in problems(base_request(tools=[tool, tool]))[0][1]


def test_not_an_object():
    with pytest.raises(RequestError, match="must be a JSON object, not list"):
        parse_request([1, 2])


def test_turns_are_whole():
    history = turn(1) + [{"role": "user", "content": "x"},
                         {"role": "assistant", "tool_calls": [{"id": "c1", "name": "f"}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "r"},
                         {"role": "assistant", "content": "done"}]
    request = parse_request(base_request(history=history))
    turns = request.history_turns()
    assert [len(t) for t in turns] == [2, 4]
    assert request.turn_ids() == ["t1", "turn-2"]


def test_reused_call_ids_across_turns_and_exchanges_parse():
    """Frameworks that number calls per turn write call_0 every time: each result answers the call of the
    assistant message just before it, so the request is unambiguous and parses."""
    history = []
    for t in range(3):
        history += [{"role": "user", "content": f"q{t}"}, {"role": "assistant", "tool_calls": [{"id": "call_0", "name": "f"}]},
                    {"role": "tool", "tool_call_id": "call_0", "content": f"r{t}"}]
    exchange = {"calls": [{"id": "call_0", "name": "f"}], "results": [{"tool_call_id": "call_0", "content": "now"}]}
    request = parse_request(base_request(history=history, tool_exchanges=[exchange, exchange]))
    assert [c.id for m in request.history for c in m.tool_calls] == ["call_0"] * 3
    assert len(request.tool_exchanges) == 2
    late = history[:2] + [{"role": "user", "content": "x"}, history[2]]  # the result no longer follows its call
    assert "tool call 'call_0' in history has no result before history[2]" in problems(base_request(history=late))[0][1]
