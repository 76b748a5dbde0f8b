"""Sessions on small cases whose prefixes are worked out by hand (a word-per-token toy template and
the mistral counter), and on the synthetic 24-call agent fixture."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, default_counter

from core.contracts import ChatMessage, ToolCall, ToolDefinition
from core.counting import CounterIdentity, TokenCounter
from core.formats import import_data
from core.sessions import (APPENDED, COMPACTED, REMOVED, REWRITTEN, TOOLS, SessionTokens, common_prefix,
                           open_session, session_from_import)
from core.sessions.tokens import pack

SESSION_FIXTURE = FIXTURES / "sessions" / "agent_compaction.langfuse.json"
ROLE_IDS = {"system": 2, "user": 3, "assistant": 4, "tool": 5}


class WordCounter(TokenCounter):
    """One token per word. A request renders as ``BOS, [TOOLS names END], then per message: role, words, END``,
    then the generation prefix (the assistant role token): prefixes can be counted by hand."""

    def __init__(self) -> None:
        super().__init__()
        self.vocab: dict[str, int] = {}

    @property
    def identity(self) -> CounterIdentity:
        return CounterIdentity(name="toy:words", kind="test")

    def _word(self, word: str) -> int:
        return self.vocab.setdefault(word, 100 + len(self.vocab))

    def token_ids(self, messages, tools):
        ids = [1]
        if tools:
            ids += [7] + [self._word(t.name) for t in tools] + [6]
        for m in messages:
            ids.append(ROLE_IDS[m.role])
            ids += [self._word(w) for w in (m.content or "").split()]
            for call in m.tool_calls:
                ids += [8, self._word(call.name)] + [self._word(str(v)) for v in call.arguments.values()]
            ids.append(6)
        return ids + [4]

    def render_text(self, messages, tools):
        return " ".join(m.content or "" for m in messages)

    def control_token_strings(self):
        return []

    def control_tokens_in(self, text):
        return []

    def text_token_count(self, text):
        return len(text.split())


def body(*messages: tuple[str, str], tools: tuple[str, ...] = ()) -> dict:
    return {"model": "toy", "messages": [{"role": r, "content": c} for r, c in messages],
            **({"tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                          for n in tools]} if tools else {})}


def session_of(*bodies: dict, counter: TokenCounter | None = None):
    return session_from_import(import_data(list(bodies)), counter or WordCounter())


def test_appended_turn_keeps_the_whole_earlier_call_as_prefix():
    # call 1: BOS, system a b END, user c END, gen = 1+4+3+1 = 9 tokens; call 2 renders the same 8 and its
    # assistant role token is the same id as call 1's generation prefix: the prefix is all 9.
    session = session_of(body(("system", "a b"), ("user", "c")),
                         body(("system", "a b"), ("user", "c"), ("assistant", "d e"), ("user", "f")))
    assert [c.input_tokens for c in session.calls] == [9, 16]
    diff = session.diffs[1]
    assert diff.prefix_tokens == 9 and diff.prefix_messages == 2
    assert [(c.kind, c.after, c.tokens_after) for c in diff.changes] == [(APPENDED, [2, 3], 3)]
    assert diff.appended_tokens == 3 and diff.removed_tokens == 0 and not diff.removes
    assert session.cached_share(1) == pytest.approx(9 / 16)
    assert session.cached_share(0) == 0.0 and session.diffs[0] is None


def test_compaction_rewrite_and_removal_are_told_apart():
    first = body(("system", "a b"), ("user", "c"), ("assistant", "d e"), ("user", "f"), ("assistant", "g"),
                 ("user", "h i"))
    # the four messages after "c" become one summary: BOS, system a b END, user = 6 tokens in common
    compacted = body(("system", "a b"), ("user", "c"), ("user", "summary s"), ("user", "j"))
    rewritten = body(("system", "a b"), ("user", "c"), ("user", "summary t"), ("user", "j"))
    removed = body(("system", "a b"), ("user", "c"), ("user", "j"))
    session = session_of(first, compacted, rewritten, removed)
    assert [c.previous for c in session.calls] == [None, 0, 1, 2]
    d1, d2, d3 = session.diffs[1:]
    assert d1.prefix_tokens == 1 + 4 + 3 and d1.prefix_messages == 2  # up to the END of "c"
    assert [(c.kind, c.before, c.after, c.tokens_before, c.tokens_after) for c in d1.changes] == [
        (COMPACTED, [2, 3, 4, 5], [2, 3], 6, 3)]
    assert d1.removed_tokens == 6 and d1.rewritten_tokens == 3 and d1.removes
    # "summary s" -> "summary t": the prefix runs through "summary" (BOS ... END user summary = 10)
    assert d2.prefix_tokens == 10
    assert [(c.kind, c.before, c.after, c.tokens_before, c.tokens_after) for c in d2.changes] == [
        (REWRITTEN, [2], [2], 2, 2)]
    assert [(c.kind, c.before, c.tokens_before) for c in d3.changes] == [(REMOVED, [2], 2)]
    assert session.removal_calls == [1, 2, 3]


def test_tool_definitions_changing_is_a_change_and_breaks_the_prefix_after_bos():
    session = session_of(body(("user", "c"), tools=("find",)), body(("user", "c"), tools=("find", "open")))
    diff = session.diffs[1]
    assert diff.prefix_tokens == 3  # BOS, TOOLS, find; then "open" where call 1 had END
    assert [(c.kind, c.detail) for c in diff.changes] == [(TOOLS, "added: open")]


def test_conversations_by_leading_message_and_predecessor_by_longest_shared_run():
    a1 = body(("system", "agent a"), ("user", "task one"))
    b1 = body(("system", "agent b"), ("user", "task two"))
    a2 = body(("system", "agent a"), ("user", "task one"), ("assistant", "done"), ("user", "more"))
    b2 = body(("system", "agent b"), ("user", "task two"), ("assistant", "ok"), ("user", "next"))
    session = session_of(a1, b1, a2, b2)
    assert [c.conversation for c in session.calls] == [0, 1, 0, 1]
    assert [c.previous for c in session.calls] == [None, None, 0, 1]
    assert session.diffs[2].prefix_tokens == session.calls[0].input_tokens


def test_mistral_template_moves_the_system_prompt_so_a_new_user_turn_keeps_two_tokens():
    counter = default_counter()
    one = body(("system", "You are terse."), ("user", "Hello there."))
    two = body(("system", "You are terse."), ("user", "Hello there."), ("assistant", "Hi."), ("user", "Bye."))
    session = session_of(one, two, counter=counter)
    ids = [counter.token_ids(r.messages, r.tools) for r in import_data([one, two]).requests]
    # mistral's V3 template puts the system text into the last user message: only <s>[INST] are shared
    assert session.diffs[1].prefix_tokens == 2
    assert ids[0][:2] == ids[1][:2] and ids[0][2] != ids[1][2]
    assert [c.input_tokens for c in session.calls] == [len(i) for i in ids]


def test_mistral_agent_loop_keeps_the_whole_earlier_call():
    counter = default_counter()
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "abcdefghi", "type": "function", "function": {"name": "find", "arguments": "{}"}}]}
    first = body(("system", "Use tools."), ("user", "Find it."), tools=("find",))
    second = dict(first, messages=first["messages"] + [call, {"role": "tool", "tool_call_id": "abcdefghi",
                                                                "content": "found"}])
    session = session_of(first, second, counter=counter)
    assert session.diffs[1].prefix_tokens == session.calls[0].input_tokens
    assert session.calls[1].input_tokens == counter.count(import_data(second).requests[0].messages,
                                                          import_data(second).requests[0].tools)


def test_common_prefix_on_packed_ids():
    assert common_prefix(pack([1, 2, 3]), pack([1, 2, 3, 4])) == 3
    assert common_prefix(pack([1, 2, 3]), pack([1, 9, 3])) == 1
    assert common_prefix(pack([]), pack([5])) == 0
    assert common_prefix(pack(list(range(1000))), pack(list(range(999)) + [0])) == 999


def test_memoised_ids_equal_the_counters_own():
    counter = default_counter()
    tokens = SessionTokens(counter)
    messages = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="One?"),
                ChatMessage(role="assistant", tool_calls=[ToolCall(id="abcdefghi", name="look", arguments={"q": 1})]),
                ChatMessage(role="tool", tool_call_id="abcdefghi", content="two"),
                ChatMessage(role="user", content="One?")]
    tools = [ToolDefinition(name="look", description="Look.", parameters={"type": "object"})]
    for n in (2, 5, 2):
        assert tokens.token_ids(messages[:n], tools) == counter.token_ids(messages[:n], tools)
    assert tokens.pieces_tokenised is not None and tokens.pieces_tokenised <= 8  # the repeats were looked up


@pytest.fixture(scope="module")
def fixture_session():
    return open_session(SESSION_FIXTURE, default_counter(), context_window=16384)


def test_fixture_session_calls_in_time_order_with_compaction_and_cleared_result(fixture_session):
    session = fixture_session
    raw = json.loads(SESSION_FIXTURE.read_text(encoding="utf-8"))
    generations = [o for o in raw["observations"] if o["type"] == "GENERATION"]
    assert len(session.calls) == 24
    assert [c.request.recorded.span_id for c in session.calls] == [g["id"] for g in generations]
    assert {c.conversation for c in session.calls} == {0}
    assert [c.previous for c in session.calls] == [None] + list(range(23))
    assert session.removal_calls == [14, 19]
    compaction = session.diffs[14].changes
    assert [(c.kind, len(c.before), c.after) for c in compaction] == [(COMPACTED, 26, [2])]
    assert compaction[0].tokens_after > 0 and session.diffs[14].removed_tokens > 10 * compaction[0].tokens_after
    assert [(c.kind, c.before) for c in session.diffs[19].changes if c.kind != APPENDED] == [(REWRITTEN, [4])]
    assert session.peak.index == 13
    assert session.calls[7].input_tokens - session.calls[6].input_tokens > 1000  # the full test trace swells it
    assert all(c.recorded_cached_tokens is not None for c in session.calls)
    assert [s.name for s in session.calls[3].span_path] == ["coding-agent", "agent step 4"]
    assert session.allowance(0) == 16384 - 8192


def test_fixture_prefixes_and_totals_equal_the_counters_own(fixture_session):
    counter = default_counter()
    previous = None
    for call, diff in zip(fixture_session.calls, fixture_session.diffs):
        ids = counter.token_ids(call.request.messages, call.request.tools)
        assert call.input_tokens == len(ids)
        assert sum(call.sections.values()) == len(ids)
        if previous is not None:
            shared = next((i for i, (a, b) in enumerate(zip(previous, ids)) if a != b), min(len(previous), len(ids)))
            assert diff.prefix_tokens == shared
        previous = ids


def test_any_two_calls_compare_and_consecutive_ones_are_the_recorded_diffs(fixture_session):
    session = fixture_session
    assert session.compare(13, 14) is session.diffs[14]
    across = session.compare(0, 23)  # from the first call to the last, across the compaction
    assert across.prefix_tokens == session.diffs[14].prefix_tokens  # system, task: all the cache could keep
    assert across.prefix_messages == 2 and across.appended_tokens > 0
    assert session.compare(2, 5).prefix_tokens == session.calls[2].input_tokens
