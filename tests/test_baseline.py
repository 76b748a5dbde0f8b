"""The naive baseline's dropped items carry what they cost, so its section totals are true."""
from __future__ import annotations

import pytest
from support import FIXTURES, default_counter, fixture_request

from core import ChatMessage, load_result, naive_truncate
from core.baseline import _arrival, _raw_block

NAMES = ["demo", "rag_tight", "tool_exchange", "trip_conversation"]


@pytest.mark.parametrize("name", NAMES)
def test_every_dropped_item_carries_tokens(name):
    result = naive_truncate(fixture_request(name), default_counter())
    dropped = [e for e in result.trace if e.decision == "dropped"]
    assert dropped, name
    assert all(e.tokens > 0 for e in dropped), [(e.id, e.tokens) for e in dropped if e.tokens <= 0]


@pytest.mark.parametrize("name", NAMES)
def test_dropped_history_adds_up_to_what_those_messages_cost_at_the_head(name):
    """The oldest messages go first, so what was dropped from history is a run right after the system
    message: its total is the growth of the request by that run, counted whole."""
    request = fixture_request(name)
    counter = default_counter()
    result = naive_truncate(request, counter)
    messages, origins = _arrival(request)
    dropped = {e.id for e in result.trace if e.decision == "dropped" and e.section == "history"}
    if not dropped or ("instructions", "instructions") not in origins:
        pytest.skip(f"{name}: the system message went too")
    run = [i for i, o in enumerate(origins) if o[1] in dropped]
    head = [messages[0]] + [messages[i] for i in run]
    # end on a user message the template accepts after the run
    closing = [ChatMessage(role="user", content="")]
    whole = counter.count(head + closing, request.tools) - counter.count([messages[0]] + closing, request.tools)
    assert sum(e.tokens for e in result.trace if e.id in dropped) == whole


def test_passages_pasted_into_a_dropped_system_message_cost_their_own_tokens():
    request = fixture_request("rag_tight")
    counter = default_counter()
    result = naive_truncate(request, counter)
    by_id = {e.id: e for e in result.trace if e.decision == "dropped"}
    system = ChatMessage(role="system", content=request.instructions)
    user = ChatMessage(role="user", content="")
    assert by_id["instructions"].tokens == counter.count([system, user], []) - counter.count([user], [])
    text = request.instructions + "\n\n"
    for passage in request.evidence:
        before = counter.count([ChatMessage(role="system", content=text), user], [])
        text += _raw_block(passage)
        after = counter.count([ChatMessage(role="system", content=text), user], [])
        assert by_id[passage.id].tokens == after - before, passage.id
    # the section totals the bar and the audit read
    assert result.section_tokens("dropped")["evidence"] == sum(by_id[p.id].tokens for p in request.evidence) > 0


@pytest.mark.parametrize("name", NAMES)
def test_the_recorded_baselines_carry_the_same_tokens(name):
    recorded = load_result(FIXTURES / f"{name}.baseline.json")
    assert all(e.tokens > 0 for e in recorded.trace if e.decision == "dropped")
    assert recorded.section_tokens("dropped") == naive_truncate(fixture_request(name), default_counter()
                                                                ).section_tokens("dropped")
