"""A history turn's cost under ``mistral:`` tekken from its text spans (``MistralCounter.turn_count``): where a
turn opens with a user message, is not preceded by one and is followed by one, what it adds to a request in
mistral-common's own ``encode_chat_completion`` is exactly its control tokens plus its spans' text counts (a span
joined from two messages of one role counted from each text and the stretch across the join), wherever it stands
(before the question, between other turns, after a system message, with tools); ``turn_count`` says ``None``
wherever that does not hold of the turn alone (it ends with a user message, holds a system message, opens with
another role)."""
from __future__ import annotations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mistral_requests import TEXT, TOOLS, conversation, message
from support import default_counter

from core.contracts import ChatMessage, ToolCall
from test_mistral_render import stock

IDS = st.sampled_from(["abcdefghi", "ABC123xyz", "call00001", "zzzzzzzzz"])
EDGE_TEXT = st.tuples(st.sampled_from(["", " ", "  ", "\n", "\n\n", "\t", " \n"]), TEXT,
                      st.sampled_from(["", " ", "  ", "\n", "\n\n", "\t", " \n"])).map("".join)
CONTENT = st.one_of(TEXT, EDGE_TEXT)


@st.composite
def turn(draw):
    """A history turn as the assembly cuts them (a user message and all up to the next), of every kind the
    assembly meets: plain, tool calls and results, two messages of one role in a row, a lone user message,
    whitespace at the edges; and now and then any message at all."""
    out = [ChatMessage(role="user", content=draw(CONTENT))]
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["answer", "answer", "calls", "calls", "calls", "user", "any"]))
        if kind == "answer":
            out.append(ChatMessage(role="assistant", content=draw(CONTENT.filter(str.strip))))
        elif kind == "user":  # two user messages in a row (joined by the normaliser)
            out.append(ChatMessage(role="user", content=draw(CONTENT)))
        elif kind == "calls":
            ids = draw(st.lists(IDS, min_size=1, max_size=3, unique=True))
            beside = draw(st.sampled_from([None, None, None, "", "also text"]))
            out.append(ChatMessage(role="assistant", content=beside, tool_calls=[
                ToolCall(id=i, name=draw(st.sampled_from(["search", "get_weather"])),
                         arguments=draw(st.dictionaries(st.sampled_from(["q", "n", "ü"]), CONTENT, max_size=2)))
                for i in ids]))
            out += [ChatMessage(role="tool", tool_call_id=i, content=draw(st.one_of(st.none(), CONTENT)))
                    for i in draw(st.permutations(ids))]
        else:
            out.append(draw(message()))
    if draw(st.booleans()):  # most history turns end with an answer
        out.append(ChatMessage(role="assistant", content=draw(CONTENT.filter(str.strip))))
    if draw(st.integers(0, 9)) == 0:  # now and then a turn that opens with another role (a history's first)
        out[0] = draw(message())
    return out


def _opened_by_user(messages) -> bool:
    """Whether a user message would be joined to what ``messages`` end with (its last message not a system one)."""
    roles = [m.role for m in messages if m.role != "system"]
    return bool(roles) and roles[-1] == "user"


TURNS = st.lists(turn(), max_size=2).map(lambda turns: [m for t in turns for m in t])


@given(st.one_of(conversation(), TURNS), turn(), TURNS, CONTENT, TOOLS, st.booleans())
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_turn_adds_its_control_tokens_and_its_spans_text_counts(before, middle, after, question, tools, system):
    counter = default_counter()
    found = counter.turn_count(middle)
    if found is None:
        event("no spans")
        return
    assert middle[0].role == "user" and middle[-1].role != "user"
    assert all(m.role != "system" for m in middle)
    if _opened_by_user(before):
        before = before + [ChatMessage(role="assistant", content="Between.")]
    head = ([ChatMessage(role="system", content="Be brief.")] if system else []) + before
    tail = after + [ChatMessage(role="user", content=question)]
    tail = [ChatMessage(role="user", content="Next.")] + tail if not tail or tail[0].role != "user" else tail
    without, with_turn = stock(counter, head + tail, tools), stock(counter, head + middle + tail, tools)
    if isinstance(with_turn, str) or isinstance(without, str):
        event("refused by mistral-common")
        return
    event("compared")
    controls, text = found
    assert len(with_turn) - len(without) == controls + text


@given(turn())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_turn_count_says_none_where_the_turn_alone_cannot_tell(middle):
    counter = default_counter()
    found = counter.turn_count(middle)
    if middle[0].role != "user" or middle[-1].role == "user" or any(m.role == "system" for m in middle):
        assert found is None
    else:
        event("spans" if found is not None else "no spans")
