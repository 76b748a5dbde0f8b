"""Hypothesis strategies of chat requests for the ``mistral:`` counter's tests: mostly well-formed turns (so most
are accepted), tool exchanges with ids and names mistral-common checks, and the odd message of any shape."""
from __future__ import annotations

from hypothesis import strategies as st

from core.contracts import ChatMessage, ToolCall, ToolDefinition

TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "  trailing  ", "x ", "\n", "[INST]", "[/INST]", "</s>", "<s>", "[TOOL_CALLS]",
                     "{\"a\": 1}", "[1, 2]", "null", "NaN", "\"quoted\"", "{\"a\":", "Привет 🙂", "\ud800", "e\u0301",
                     "[[[[[[[[[[1]]]]]]]]]]", " {\"k\": [true, null]} "]),
    st.lists(st.sampled_from(["word", " ", "\n\n", "é", "字", "1", "!"]), max_size=20).map("".join),
)
CALL_IDS = st.sampled_from(["abcdefghi", "ABC123xyz", "call_1", "null", "x", "toolu_01ABCDEFGHIJKLMNOP", "abcdefgh\n"])
NAMES = st.sampled_from(["search", "get_weather", "a-b_c", "x" * 64, "bad name", "dotted.name", "ok\n"])
ARGUMENTS = st.dictionaries(st.sampled_from(["q", "n", "ü", "deep"]),
                            st.one_of(st.integers(-5, 5), TEXT, st.booleans(), st.none(), st.floats(allow_nan=True),
                                      st.lists(st.integers(0, 3), max_size=3)), max_size=3)


@st.composite
def message(draw):
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    content = draw(st.one_of(st.none(), TEXT))
    if role == "assistant":
        calls = draw(st.lists(st.builds(ToolCall, id=CALL_IDS, name=NAMES, arguments=ARGUMENTS), max_size=2))
        return ChatMessage(role=role, content=content, tool_calls=calls)
    if role == "tool":
        return ChatMessage(role=role, content=content, tool_call_id=draw(st.one_of(st.none(), CALL_IDS)))
    return ChatMessage(role=role, content=content)


@st.composite
def conversation(draw):
    """Mostly well-formed turns (so most requests are accepted), with the odd message of any shape."""
    out: list[ChatMessage] = []
    if draw(st.booleans()):
        out.append(ChatMessage(role="system", content=draw(TEXT)))
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["turn", "tools", "any", "system", "users"]))
        if kind == "turn":
            out += [ChatMessage(role="user", content=draw(TEXT)), ChatMessage(role="assistant", content=draw(TEXT))]
        elif kind == "users":
            out += [ChatMessage(role="user", content=draw(TEXT)) for _ in range(draw(st.integers(1, 3)))]
        elif kind == "system":
            out.append(ChatMessage(role="system", content=draw(st.one_of(st.none(), TEXT))))
        elif kind == "tools":
            ids = draw(st.lists(CALL_IDS, min_size=1, max_size=3))
            out.append(ChatMessage(role="user", content=draw(TEXT)))
            out.append(ChatMessage(role="assistant", content=draw(st.sampled_from([None, "", "also text"])),
                                   tool_calls=[ToolCall(id=i, name=draw(NAMES), arguments=draw(ARGUMENTS))
                                               for i in ids]))
            results = ids if draw(st.integers(0, 4)) else ids[:-1]
            out += [ChatMessage(role="tool", tool_call_id=i, content=draw(st.one_of(st.none(), TEXT)))
                    for i in results]
        else:
            out.append(draw(message()))
    if draw(st.integers(0, 5)):
        out.append(ChatMessage(role="user", content=draw(TEXT)))
    return out


TOOLS = st.lists(st.builds(
    ToolDefinition, name=st.sampled_from(["search", "get_weather", "dotted.name", "t" * 64]),
    description=TEXT,
    parameters=st.sampled_from([{"type": "object", "properties": {"q": {"type": "string"}}},
                                {"type": "object", "properties": {"q": {"type": "nonsense"}}},
                                {"type": "object", "required": "q"}, {}])), max_size=2)
