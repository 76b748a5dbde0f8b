"""History turns whose first messages carry one id (ids need not be unique; ``turn-<n>`` for a turn without one may
equal another's id): each turn gets its own trace id (``x``, ``x#2``...), its own entry and its own message indices,
the same in the default, the reference and the baseline. Before, both turns' entries were named ``x`` and each
pointed at the messages of both."""
from __future__ import annotations

import pytest

from core import assemble, make_counter, parse_request
from core.baseline import naive_truncate


def _request(context_limit: int = 4000):
    return parse_request({
        "instructions": "Answer.", "current": "Why?", "evidence": [], "context_limit": context_limit,
        "max_new_tokens": 100, "margin": 0,
        "history": [{"role": "user", "content": "first question", "id": "x"},
                    {"role": "assistant", "content": "first answer"},
                    {"role": "user", "content": "second question", "id": "x"},
                    {"role": "assistant", "content": "second answer"},
                    {"role": "user", "content": "third question", "id": "turn-4"},
                    {"role": "user", "content": "fourth question"}]})


def test_turn_ids_are_one_per_turn():
    assert _request().turn_ids() == ["x", "x#2", "turn-4", "turn-4#2"]


@pytest.mark.parametrize("limit", [4000, 120])
def test_each_turn_is_its_own_entry_pointing_at_its_own_messages(limit):
    request = _request(limit)
    result = assemble(request, make_counter())
    assert result.to_json() == assemble(request, make_counter(), reference=True).to_json()
    history = {e.id: e for e in result.trace if e.section == "history"}
    assert set(history) == {"x", "x#2", "turn-4", "turn-4#2"}
    for turn_id, turn in zip(request.turn_ids(), request.history_turns()):
        entry = history[turn_id]
        if entry.decision == "kept":
            assert [result.messages[i].content for i in entry.message_indices] == [m.content for m in turn]
        else:
            assert entry.message_indices == []
    assert any(e.decision == "dropped" for e in history.values()) == (limit == 120)


def test_the_baseline_names_the_same_turns():
    result = naive_truncate(_request(120), make_counter())
    names = {e.id.split("/")[0] for e in result.trace if e.section == "history"}
    assert names == {"x", "x#2", "turn-4", "turn-4#2"}
