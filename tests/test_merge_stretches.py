"""Single-message turns under mistral figured a stretch at a time (core.assembly_merge ``MergedUserTurns.stretch``,
``FastBuilder.fitting_turns`` / ``older_turns``): long histories of single user messages, some between ordinary
turns, empty or with edges at the seams, at allowances all through the history and with either fill order, equal
the reference without falling back (a long run in few complete counts: ``test_assembly_merge``). The pieces under
it are held to what they replace: each text's count between its cuts (``tekken_cuts.between_cuts``) and a joined
span counted from them, the ASCII path of ``cuts_of``, the counts of many texts at once
(``TokenCounter.text_counts``), and a message or selection built directly."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter

from core import assemble, make_counter, parse_request
from core.contracts import ChatMessage
from core.counters.tekken_cuts import JOIN, Joined, between_cuts, cuts_of, first_cut, joined_count, last_cut
from core.render import MESSAGE_MADE_OK, Selection, _message_state, chat_message

WORD = st.sampled_from(["Budget", "token", "window.", "x", "é", "字", "!", "42", "a b", "ok?", "end.", "\n", "  ", "'s",
                        "e\u0301", "。", "Ab", "--", "\t", "(", ")"])
TEXT = st.lists(WORD, min_size=0, max_size=6).map(" ".join)
CHARS = st.sampled_from(list("aZé字ß") + ["\u0301", " ", "\n", "\r\n", "\t", ".", "!", "'", "-", "4", "。", "😀", "s", "Ab"])


def count(text: str) -> int:
    return default_counter().text_token_count(text)


@st.composite
def long_histories(draw):
    """Twenty to sixty turns, most of them a single user message (chunks of sixteen and more are figured at once),
    a few ordinary turns between them; a request, an allowance anchored on a kept total, and a nudge."""
    history = []
    for t in range(draw(st.integers(20, 60))):
        history.append({"role": "user", "content": draw(TEXT), "id": f"t{t}"})
        if draw(st.integers(0, 9)) == 0:
            history.append({"role": "assistant", "content": draw(TEXT.filter(str.strip))})
    evidence = [{"id": f"p{i}", "source": "doc.md", "text": draw(TEXT), "score": 0.5}
                for i in range(draw(st.integers(0, 2)))]
    data = {"instructions": draw(st.sampled_from(["", "Answer briefly.", "Be brief", "Sys\n"])),
            "current": draw(TEXT.filter(str.strip)), "history": history, "evidence": evidence, "max_new_tokens": 8,
            "margin": 0, "fill_order": draw(st.sampled_from([["history", "evidence"], ["evidence", "history"]]))}
    return data, draw(st.floats(0.0, 1.0)), draw(st.integers(-3, 3))


@given(long_histories())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_long_runs_of_single_message_turns_equal_the_reference(case):
    check(*case)


def test_a_stretch_that_runs_on_past_its_first_chunk_is_figured_beside_each_next_turn():
    """Found by the property above: a stretch that needs a second chunk of its table (here after 16 empty messages)
    figured that chunk beside the kept turns instead of beside each next turn, and mispredicted the turn after it
    (a complete count caught it and the reference assembled the request)."""
    user = [{"role": "user", "content": "", "id": f"t{t}"} for t in range(38)]
    answer = {"role": "assistant", "content": "Budget"}
    user[2]["content"] = user[3]["content"] = "Budget"
    history = user[:4] + [answer]
    for t in range(4, 11):
        history += [user[t], answer]
    history += user[11:33] + [answer] + user[33:37] + [answer, user[37], answer]
    check({"instructions": "Answer briefly.", "current": "Budget", "history": history, "evidence": [],
           "max_new_tokens": 8, "margin": 0, "fill_order": ["history", "evidence"]}, 1.0, 1)


def test_the_fill_figures_its_stretch_only_as_far_as_the_allowance_reaches():
    """A long history of single messages whose newest few fill the allowance: the fill figures its turns (each just
    before the kept ones) only about as far as the room left holds, not on to the oldest turn (past the misfit,
    every older turn is figured once more, beside the kept ones); the result is still the reference's."""
    from core.assembly_fast import FastBuilder

    words = ["Budget", "token", "window", "chunk", "disk", "rollback", "index", "ticket"]
    history = [{"role": "user", "content": " ".join(words[(t + k) % 8] for k in range(12)) + ".", "id": f"t{t}"}
               for t in range(300)]
    request = parse_request({"instructions": "Answer briefly.", "current": "What changed?", "history": history,
                             "evidence": [], "context_limit": 900, "max_new_tokens": 8, "margin": 0})
    built: list = []
    original = FastBuilder.fitting_turns

    def fitting_turns(self, t):
        value = original(self, t)
        built.append(self._merged)  # its tables (the builder lets them go once the sections are filled)
        return value

    FastBuilder.fitting_turns = fitting_turns
    try:
        fast = assemble(request, make_counter())
    finally:
        FastBuilder.fitting_turns = original
    assert fast.counting_note is None and fast.to_json() == assemble(request, make_counter(), reference=True).to_json()
    kept = fast.kept_turns
    assert 10 < kept < 100, kept
    beside = [table for key, table in built[-1]._tables.items() if key[0] == -1]
    assert len(beside) == 1 and kept < len(beside[0]) <= kept + 24, (kept, len(beside[0]))


def check(data: dict, share: float, nudge: int) -> None:
    counter = default_counter()
    roomy = assemble(parse_request(dict(data, context_limit=10 ** 6)), counter, reference=True)
    totals = [int(e.reason.split(" ")[1]) for e in roomy.trace if e.reason.startswith("fits:")]
    anchor = totals[int(share * (len(totals) - 1))] if totals else roomy.input_tokens
    request = parse_request(dict(data, context_limit=max(anchor + nudge, roomy.trace[0].tokens + 1) + 8))
    try:
        reference = assemble(request, counter, reference=True)
    except Exception as exc:  # noqa: BLE001 - the required part alone does not fit: both refuse alike
        try:
            assemble(request, make_counter())
        except Exception as fast_exc:  # noqa: BLE001
            assert type(fast_exc) is type(exc)
            return
        raise AssertionError("the default assembled what the reference refused")
    fast = assemble(request, make_counter())  # a fresh counter: nothing remembered from the reference's counts
    assert fast.counting_note is None, fast.counting_note
    assert fast.to_json() == reference.to_json()


@given(st.lists(st.lists(CHARS, max_size=40).map("".join), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_between_cuts_and_a_span_joined_from_them(texts):
    """Each text's figures are its cuts and the count between them; a joined span counted from them (the final
    count's ``joined_count``) is the count of the joined text."""
    cuts: dict = {}
    figures = between_cuts(texts, cuts, lambda spans: [count(s) for s in spans])
    for text, at in zip(texts, figures):
        assert at == (() if not cuts_of(text) else (*cuts_of(text), count(text[cuts_of(text)[0]:cuts_of(text)[1]])))
    assert between_cuts(texts, cuts, lambda spans: [] if not spans else 1 / 0) == figures  # remembered
    value, _ = joined_count(Joined(texts), {}, count, cuts)
    assert value == count(JOIN.join(texts))


@given(st.lists(st.sampled_from(list("ab Z.,\n\t1'-_") + ["word", "  ...  "]), max_size=400).map("".join),
       st.integers(0, 700))
@settings(max_examples=300, deadline=None)
def test_the_last_cut_of_ascii_text_is_the_last_letter_before_a_non_letter_within_reach(text, reach):
    stop = max(len(text) - 1 - reach, 0)  # its definition, looked for from the end (a pattern's match finds it)
    expected = next((p for p in range(len(text) - 1, stop, -1) if text[p - 1].isalpha() and not text[p].isalpha()),
                    None)
    assert last_cut(text, reach) == expected


@given(st.lists(st.sampled_from(list("ab Z.,\n\t1'-_")), max_size=80).map("".join))
@settings(max_examples=300, deadline=None)
def test_cuts_of_ascii_text_is_first_cut_and_last_cut(text):
    a = first_cut(text)
    b = last_cut(text) if a is not None else None
    assert cuts_of(text) == ((a, b) if b is not None and a <= b else ())


@given(st.lists(st.one_of(TEXT, st.just("a\ud800b")), max_size=12))
@settings(max_examples=100, deadline=None)
def test_text_counts_are_each_texts_count(texts):
    counter = make_counter()
    if texts:
        counter.text_count(texts[0])  # one of them cached already
    before = counter.item_counts
    assert counter.text_counts(texts) == [counter.text_token_count(t) for t in texts]
    assert counter.item_counts - before == len(set(texts[1:]) - {texts[0]}) if texts else counter.item_counts == before
    assert counter.text_token_counts(texts) == [default_counter().text_token_count(t) for t in texts]


def test_messages_and_selections_built_directly_are_what_pydantic_and_the_dataclass_build():
    assert MESSAGE_MADE_OK
    for m in (ChatMessage(role="user", content="Word"), ChatMessage(role="assistant", content=None),
              ChatMessage(role="tool", content="", tool_call_id="c1")):
        made = chat_message(m)
        assert made == m and _message_state(made) == _message_state(ChatMessage.model_construct(
            {"role", "content", "tool_calls", "tool_call_id"}, role=m.role, content=m.content, tool_calls=[],
            tool_call_id=m.tool_call_id))
    s = Selection(True, (1,), True).add(turns=(3, 2))
    assert s == Selection(instructions=True, tools=(1,), question=True, turns=(3, 2)) and hash(s) == hash(
        Selection(True, (1,), True, (), (3, 2), ()))
    assert s.add(evidence=(0,)).turns == (3, 2) and s.add(evidence=(0,)).evidence == (0,)
