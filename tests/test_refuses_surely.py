"""``TokenCounter.refuses_surely``: a probe that only asks whether the template takes a prompt skips counting one the
template surely refuses. Mistral's answer comes from the roles alone (mistral-common's structure check); it must never
say "refused" of a request mistral-common's own path accepts, whatever the texts, tool calls and tools."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mistral_requests import TOOLS, conversation, message
from support import default_counter

from core.contracts import ChatMessage
from core.counters.mistral_checks import refused_by_structure
from core.errors import CounterError

COUNTER = default_counter()


def stock_refuses(messages, tools) -> bool:
    try:
        COUNTER._stock_ids(messages, tools)
    except CounterError:
        return True
    return False


@given(st.one_of(conversation(), st.lists(message(), min_size=1, max_size=6)), TOOLS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_surely_refused_request_is_refused_by_mistral_common(messages, tools):
    if messages and COUNTER.refuses_surely(messages):
        assert stock_refuses(messages, tools)


def test_the_structures_it_knows():
    user, assistant, tool, system = (ChatMessage(role=r, content="x" if r != "tool" else "{}",
                                                 tool_call_id="abcdefghi" if r == "tool" else None)
                                     for r in ("user", "assistant", "tool", "system"))
    refused = [[tool], [assistant], [system, tool, user], [user, tool], [user, assistant], [system, user, assistant]]
    taken = [[user], [system], [system, user], [user, assistant, user], [user, user]]
    for messages in refused:
        assert COUNTER.refuses_surely(messages) and stock_refuses(messages, [])
    for messages in taken:
        assert not COUNTER.refuses_surely(messages) and not stock_refuses(messages, [])
    assert not refused_by_structure([])  # (no messages: asked)


def test_a_counter_that_cannot_tell_says_no(toy_tokenizer_dir):
    from core import make_counter

    hf = make_counter(f"hf:{toy_tokenizer_dir}")
    assert not hf.refuses_surely([ChatMessage(role="tool", content="{}", tool_call_id="abcdefghi")])
