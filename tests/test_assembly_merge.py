"""Single-user-message turns under mistral: mistral-common joins consecutive user messages, and the default
assembly predicts what each one adds from the text near the seam (core.assembly_merge). The rule it rests
on (a cut between a letter and a character no letter piece continues into splits tekken's tokenisation)
is checked on the tokenizer itself; a hand-made seam where a per-message sum is wrong equals the reference
at every allowance without falling back."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import default_counter

from core import assemble, make_counter, parse_request
from core.assembly_merge import JOIN, first_cut, last_cut

CHARS = st.sampled_from(list("aZé字ß") + ["\u0301", "\u0308", " ", "  ", "\n", "\r\n", "\t", ".", "!", "?", "'", "-",
                                          "/", "4", "2", "²", "。", "—", "😀", "\u00a0", "s", "Ab", "ok"])


def ids(text: str) -> list[int]:
    return [token for token, _, _ in default_counter().text_token_spans(text)]


@given(st.lists(CHARS, min_size=2, max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_every_cut_splits_the_tokenisation(text):
    p = first_cut(text)
    q = last_cut(text)
    for cut in {p, q} - {None}:
        assert ids(text) == ids(text[:cut]) + ids(text[cut:]), (text, cut)


def test_cuts_are_between_a_letter_and_a_character_no_letter_piece_continues_into():
    assert first_cut("Budget, then") == 6
    assert last_cut("one two.") == 7
    assert first_cut("cafe\u0301 au lait") == 8  # not after the accent: a mark can end a punctuation piece too
    assert first_cut("42 !! ...") is None and last_cut("x") is None


SEAM_HISTORY = ["Budget one\n", "\n two", "end.", "...next", "ok?", "   ", "", "42", "tail  "]


def seam_request(limit: int) -> dict:
    history = [{"role": "user", "content": "First question?", "id": "t0"},
               {"role": "assistant", "content": "An answer."}]
    history += [{"role": "user", "content": text, "id": f"s{n}"} for n, text in enumerate(SEAM_HISTORY)]
    return {"instructions": "Answer briefly", "current": "!! then what", "history": history,
            "context_limit": limit, "max_new_tokens": 8, "margin": 0}


def near_allowance_attempts(result) -> int:
    """History attempts whose count decided a turn within four tokens of the allowance."""
    budget, near = result.input_budget, 0
    for e in result.trace:
        if e.section == "history" and e.reason.startswith("fits:"):
            near += abs(int(e.reason.split()[1]) - budget) <= 4
        elif e.section == "history" and e.reason.startswith("does not fit"):
            needs, left = (int(w.rstrip(",")) for w in e.reason.split()[4:6])
            near += abs(budget - left + needs - budget) <= 4
    return near


def test_a_seam_a_per_message_sum_gets_wrong_equals_the_reference_at_every_allowance():
    counter = default_counter()
    roomy = assemble(parse_request(seam_request(4096)), counter, reference=True)
    marginals = {e.id: e.tokens for e in roomy.trace if e.section == "history"}
    text = counter.text_token_count
    # "Budget one\n" then the blank-line join then "\n two": the newlines run together across both seams
    assert marginals["s0"] != text(SEAM_HISTORY[0]) + text(JOIN)
    assert marginals["s2"] != text(SEAM_HISTORY[2]) + text(JOIN)
    for limit in range(roomy.input_tokens - sum(marginals.values()), roomy.input_tokens + 3):  # every allowance
        request = parse_request(seam_request(limit + 8))
        stats: dict = {}
        reference = assemble(request, counter, reference=True)
        fast = assemble(request, make_counter(), stats=stats)  # a fresh counter: no count remembered
        assert fast.counting_note is None, fast.counting_note
        assert fast.to_json() == reference.to_json()
        # the required request, the final one, and a check of each deciding attempt near the allowance
        assert stats["full_counts"] <= 2 + near_allowance_attempts(reference)


@pytest.mark.parametrize("turns, limit", [(60, 200), (400, 2000)])  # 400: stretches of several chunks (test_merge_stretches)
def test_history_of_single_message_turns_is_not_counted_turn_by_turn(turns, limit):
    words = ["Budget", "tokens", "window", "passage", "question", "answer", "context", "limit"]
    history = [{"role": "user", "content": " ".join(words[(n + k) % 8] for k in range(n % 5 + 3)) + ".",
                "id": f"t{n}"} for n in range(turns)]
    data = {"instructions": "Answer.", "current": "What fits?", "history": history, "context_limit": limit,
            "max_new_tokens": 8, "margin": 0}
    stats: dict = {}
    fast = assemble(parse_request(data), make_counter(), stats=stats)
    reference = assemble(parse_request(data), default_counter(), reference=True)
    assert fast.to_json() == reference.to_json() and 0 < fast.kept_turns < turns
    assert stats["full_counts"] <= 4  # the required request, a check near the allowance, the final request
