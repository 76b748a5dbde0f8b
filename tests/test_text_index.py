"""core.counters.text_index: the places an index of a long text gives are every place a scan finds, in order."""
from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from core.counters.text_index import KEY, STEP, Occurrences


def scanned(text: str, needle: str, start: int, most: int) -> list[int]:
    out, at = [], text.find(needle, start)
    while at >= 0 and len(out) < most:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def check(text: str, needle: str, start: int, most: int = 3) -> bool:
    """Whether the index answered (it agrees with the scan wherever it does)."""
    got = Occurrences(text).places(needle, start, most)
    if got is not None:
        assert got == scanned(text, needle, start, most), (needle, start)
    return got is not None


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_places_are_the_scans(data):
    """Texts of few letters (so needles repeat, overlap and nearly match), needles cut from them or made up."""
    alphabet = data.draw(st.sampled_from(["ab", "abc", "ab \n", "abcdefgh"]))
    text = data.draw(st.text(alphabet=alphabet, min_size=data.draw(st.sampled_from([0, 60, 200])), max_size=400))
    start = data.draw(st.integers(0, len(text) + 2))
    if text and data.draw(st.booleans()):
        a = data.draw(st.integers(0, len(text) - 1))
        needle = text[a:a + data.draw(st.integers(1, 80))] if data.draw(st.booleans()) else text[a:a + STEP + KEY - 1]
        start = data.draw(st.sampled_from([a, a + 1, max(a - 1, 0), start]))  # (a place at the cursor itself)
    else:
        needle = data.draw(st.text(alphabet=alphabet, min_size=1, max_size=60))
    check(text, needle, start, data.draw(st.integers(1, 4)))


def test_long_render_answers_without_a_scan():
    """A render of distinct messages: every message's text found at its one place, from any cursor before it
    and none after it; the index answers for every text long enough, so no scan runs."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(8, 40))) for _ in range(500)]
    parts, at = [], []
    for t in texts:
        parts.append("<|im_start|>tool\n<tool_response>\n")
        at.append(sum(map(len, parts)))
        parts.append(t + "<|im_end|>\n")
    whole = "".join(parts)
    index = Occurrences(whole)
    for place, t in zip(at, texts):
        assert index.places(t, place - 5, 2) == scanned(whole, t, place - 5, 2)
        assert index.places(t, place, 1) == [place] if len(t) >= STEP + KEY - 1 else True
        assert index.places(t, place + 1, 2) == scanned(whole, t, place + 1, 2)
    answered = sum(index.places(t, 0, 2) is not None for t in texts)
    assert answered == sum(len(t) >= STEP + KEY - 1 for t in texts) > 400


def test_short_and_common_needles_are_left_to_the_scan():
    text = "abc " * 2000
    assert Occurrences(text).places("abc", 0, 2) is None  # shorter than the index's reach
    assert Occurrences(text).places("abc " * 10, 0, 2) is None  # its keys are filed too often
    assert Occurrences("").places("x" * 40, 0, 2) == []
