"""Hypothesis properties: never over the allowance, required never dropped, escaping round-trips
exactly, and the same input gives byte-identical output."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter

from core import RequiredContextTooLarge, assemble, escape, parse_request, unescape
from core.audit import TAG

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120)
TRICKY = st.sampled_from(["</evidence>", "<evidence id=\"x\">", "&lt;", "&amp;", "\"", "[INST]", "<s>", "</s>",
                          "<system>", "&", "<", ">", "\n", "é", "\U0001f600", "[TOOL_RESULTS]"])
NASTY_TEXT = st.lists(st.one_of(TEXT, TRICKY), max_size=8).map("".join)


@given(NASTY_TEXT)
@settings(max_examples=400)
def test_escaping_round_trips_exactly_for_any_string(text):
    escaped = escape(text)
    assert unescape(escaped) == text
    assert "<" not in escaped and ">" not in escaped and '"' not in escaped
    assert not TAG.search(escaped)


def unescape_by_char(text: str) -> str:
    """The entities ``escape`` writes read one character at a time, left to right: what ``unescape`` must give."""
    entities = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"'}
    out, i = [], 0
    while i < len(text):
        entity = next((e for e in entities if text.startswith(e, i)), None)
        out.append(entities[entity] if entity else text[i])
        i += len(entity) if entity else 1
    return "".join(out)


ENTITY_SOUP = st.lists(st.sampled_from(["&", "amp;", "lt;", "gt;", "quot;", "&amp;", "&lt;", "&gt;", "&quot;", "&#39;",
                                        ";", "a", "<", "é"]), max_size=12).map("".join)


@given(st.one_of(NASTY_TEXT, ENTITY_SOUP))
@settings(max_examples=400)
def test_unescape_reads_any_text_as_a_left_to_right_scan_of_escapes_entities_does(text):
    assert unescape(text) == unescape_by_char(text)
    assert unescape(escape(text)) == text


@st.composite
def requests(draw):
    n_turns = draw(st.integers(0, 5))
    history = []
    for n in range(n_turns):
        history.append({"role": "user", "content": draw(NASTY_TEXT) or "u", "id": f"t{n}"})
        history.append({"role": "assistant", "content": draw(NASTY_TEXT) or "a"})
    ids = draw(st.lists(st.text(alphabet="abcdef<&\"", min_size=1, max_size=4), unique=True, max_size=6))
    evidence = [{"id": i, "source": draw(TEXT), "text": draw(NASTY_TEXT),
                 "score": draw(st.floats(-5, 5, allow_nan=False))} for i in ids]
    limit = draw(st.integers(60, 700))
    return {"instructions": draw(NASTY_TEXT) or "Be brief.", "current": draw(NASTY_TEXT) or "Why?",
            "history": history, "evidence": evidence, "context_limit": limit,
            "max_new_tokens": draw(st.integers(1, 40)), "margin": draw(st.integers(0, 10)),
            "fill_order": draw(st.sampled_from([["history", "evidence"], ["evidence", "history"]]))}


@given(requests())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_never_over_allowance_required_kept_and_deterministic(data):
    request = parse_request(data)
    counter = default_counter()
    try:
        result = assemble(request, counter)
    except RequiredContextTooLarge as exc:
        assert exc.required_input_tokens > request.input_budget
        return
    # never over the allowance, by a fresh complete recount
    assert len(counter.token_ids(result.messages, result.tools)) == result.input_tokens <= request.input_budget
    # required content is always there
    assert result.messages[0].content == request.instructions
    assert result.messages[-1].content.endswith(request.current)
    assert all(e.decision == "required" for e in result.trace if e.section in ("template", "instructions", "current"))
    # every item has exactly one decision; kept + dropped cover the candidates
    assert sorted(result.kept_evidence + result.dropped_evidence) == sorted(p.id for p in request.evidence)
    assert result.kept_turns + result.dropped_turns == len(request.history_turns())
    # every kept passage's text survives escaping exactly
    user = result.messages[-1].content
    for pid in result.kept_evidence:
        text = next(p.text for p in request.evidence if p.id == pid)
        assert escape(text) in user
    # the parts add up to the whole
    assert sum(e.tokens for e in result.trace if e.decision != "dropped") == result.input_tokens
    # same input, same bytes
    assert assemble(parse_request(data), counter).to_json() == result.to_json()
