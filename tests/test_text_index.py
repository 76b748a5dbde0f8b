"""core.text_index: the places an index of a long text gives are every place a scan finds, in order."""
from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from core.text_index import KEY, STEP, Occurrences


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


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_finder_finds_as_str_find(data):
    """``Finder.find`` is ``str.find`` for any needle and start (negative, past the end, an empty needle), whether it
    looks near the start, in the index or by a scan: ``NEAR`` shrunk so every path is taken on short texts."""
    from core import text_index

    alphabet = data.draw(st.sampled_from(["ab", "abc", "ab \n", "abcdefgh"]))
    text = data.draw(st.text(alphabet=alphabet, min_size=data.draw(st.sampled_from([0, 60, 200])), max_size=400))
    near, index_after = data.draw(st.sampled_from([0, 1, 7, 64])), data.draw(st.sampled_from([0, 1, 10 ** 9]))
    finder = text_index.Finder(text)
    old = text_index.NEAR, text_index.INDEX_AFTER
    text_index.NEAR, text_index.INDEX_AFTER = near, index_after
    try:
        for _ in range(4):
            if text and data.draw(st.booleans()):
                a = data.draw(st.integers(0, len(text) - 1))
                needle = text[a:a + data.draw(st.integers(0, 60))]
                start = data.draw(st.sampled_from([a, a + 1, max(a - 1, 0), -a, len(text), len(text) + 3]))
            else:
                needle = data.draw(st.text(alphabet=alphabet, min_size=0, max_size=50))
                start = data.draw(st.integers(-5, len(text) + 2))
            assert finder.find(needle, start) == text.find(needle, start), (needle, start)
    finally:
        text_index.NEAR, text_index.INDEX_AFTER = old


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_finder_asked_again_from_other_starts_finds_as_str_find(data):
    """The same needles asked again and again from starts in any order (the variant counts locate every message again
    after each opening a slice teaches): the places and absences ``Finder`` remembers give ``str.find``'s answer."""
    from core import text_index

    alphabet = data.draw(st.sampled_from(["ab", "abc", "ab \n"]))
    text = data.draw(st.text(alphabet=alphabet, min_size=20, max_size=300))
    near = data.draw(st.sampled_from([0, 1, 5]))
    needles = data.draw(st.lists(st.one_of(
        st.builds(lambda a, n: text[a:a + n], st.integers(0, len(text) - 1), st.integers(1, 12)),
        st.text(alphabet=alphabet, min_size=1, max_size=8)), min_size=1, max_size=4))
    finder = text_index.Finder(text)
    old = text_index.NEAR
    text_index.NEAR = near
    try:
        for needle, start in data.draw(st.lists(st.tuples(st.sampled_from(needles), st.integers(0, len(text) + 2)),
                                                min_size=1, max_size=30)):
            assert finder.find(needle, start) == text.find(needle, start), (needle, start)
    finally:
        text_index.NEAR = old


def test_what_a_long_render_leaves_out_is_found_alike_with_its_index(monkeypatch):
    """``core.rendered.missing_messages`` over a long render that leaves out the reasoning of most replies (as Qwen3
    writes earlier replies) and some replies whole: the same answer with the render indexed from the start, never,
    and by ``_present`` (a reply is missing where neither its text nor its text without reasoning is written)."""
    from core import text_index
    from core.contracts import ChatMessage
    from core.rendered import _present, missing_messages, without_reasoning

    rng = random.Random(5)
    words = [f"w{i}" for i in range(300)]

    def said(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    messages, parts = [], []
    for t in range(400):
        question = said(rng.randint(4, 20))
        answer = said(rng.randint(6, 30))
        reasoning = f"<think>\n{said(12)}\n</think>\n\n" if t % 3 else ""
        messages += [ChatMessage(role="user", content=question), ChatMessage(role="assistant", content=reasoning + answer)]
        parts += [f"<|im_start|>user\n{question}<|im_end|>\n",
                  "" if t % 5 == 0 else f"<|im_start|>assistant\n{reasoning if t % 7 == 0 else ''}{answer}<|im_end|>\n"]
    system = ChatMessage(role="system", content="Answer from the tools only. " + said(20))
    messages.insert(0, system)  # written last, as Mistral Nemo writes it, far from where the search starts
    parts.insert(-1, f"{system.content}\n\n")
    rendered = "".join(parts)
    answers = []
    for index_after in (0, float("inf")):
        monkeypatch.setattr(text_index, "INDEX_AFTER", index_after)
        answers.append(missing_messages(messages, [], rendered))
    def written(m) -> bool:
        answer = without_reasoning(m.content) if m.role == "assistant" else None
        return _present(rendered, m.content) or bool(answer and _present(rendered, answer))

    expected = {i for i, m in enumerate(messages) if not written(m)}
    assert answers[0] == answers[1] and set(answers[0]) == expected and len(expected) > 60 and 0 not in expected
    assert all(messages[i].role == "assistant" for i in expected)  # the replies left out whole, no other


def test_the_index_of_a_long_repetitive_render_weighs_less_than_twice_its_text():
    """Peak memory (issue 15): the samples filed in arrays by their keys' hashes (about 20 bytes a sample), not key strings
    in a dict with a list of places per repeated key (about 4 times the text's size, most of an assembly's peak where
    a template leaves tool results out and every result is looked for to the render's end)."""
    import tracemalloc

    rng = random.Random(7)
    words = [f"w{i}" for i in range(20)]  # few words: most keys are filed many times
    text = "".join(f"<|im_start|>tool\n{' '.join(rng.choice(words) for _ in range(30))}<|im_end|>\n"
                   for _ in range(2000))
    tracemalloc.start()
    try:
        index = Occurrences(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(text), (peak, len(text))
    needle = text[5000:5100]
    assert index.places(needle, 0, 3) == scanned(text, needle, 0, 3)
