"""The hf variant counts locate message boundaries alike with the render's index (``core.text_index``, made
once scans have cost as much) and without it: long requests on real tokenizers whose texts are looked for where the
render does not hold them (Qwen3 leaves out the reasoning of earlier replies) and after messages with no text (a
reply of tool calls only), each located once with the index from the start and once with none."""
from __future__ import annotations

import random

import pytest
from real_hf import real

from core.contracts import ChatMessage, ToolCall, ToolDefinition
from core import text_index

WORDS = ("budget token window release quota cache tool search index answer rollback deploy disk node é 字 "
         "42 {} ok?").split()
TOOL = ToolDefinition(name="search", description="Search the docs.",
                      parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize()


def request(turns: int, seed: int) -> list[ChatMessage]:
    """Turns of a question, then (some) a reply of tool calls only and its results, then a reply with reasoning;
    some results repeat an earlier result's text, some a call's arguments."""
    rng = random.Random(seed)
    out = [ChatMessage(role="system", content="You answer from the tools. " + text(rng, 6))]
    results: list[str] = []
    for t in range(turns):
        out.append(ChatMessage(role="user", content=text(rng, rng.randint(3, 14))))
        if rng.random() < 0.5:
            query = text(rng, rng.randint(4, 12))
            out.append(ChatMessage(role="assistant", content=None,
                                   tool_calls=[ToolCall(id=f"call{t:05d}", name="search", arguments={"q": query})]))
            content = rng.choice([text(rng, rng.randint(6, 20)), query] + results[-3:])
            results.append(content)
            out.append(ChatMessage(role="tool", tool_call_id=f"call{t:05d}", content=content))
        reasoning = f"<think>\n{text(rng, 10)}\n</think>\n\n" if rng.random() < 0.7 else ""
        out.append(ChatMessage(role="assistant", content=reasoning + text(rng, rng.randint(5, 25))))
    out.append(ChatMessage(role="user", content="And now?"))
    return out


def made(counter, messages, tools, total, monkeypatch, index_after):
    monkeypatch.setattr(text_index, "INDEX_AFTER", index_after)
    variants = counter.variant_counts(messages, tools, total)
    if variants is not None:
        variants._judge_prefixes()  # (put off until a prefix is asked: done here under this INDEX_AFTER)
    return variants


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
@pytest.mark.parametrize("seed", [0, 1])
def test_boundaries_are_located_alike_with_the_index_and_without(name, seed, monkeypatch):
    counter = real(name)
    messages, tools = request(160, seed), [TOOL]
    total = counter.count(messages, tools)
    scanned = made(counter, messages, tools, total, monkeypatch, float("inf"))
    indexed = made(counter, messages, tools, total, monkeypatch, 0)
    assert scanned is not None and indexed is not None
    assert indexed._finder._index is not None and scanned._finder._index is None  # (the index asked, in one; never made, in the other)
    assert len(scanned.cut) >= 150 and len(scanned.seam_cut) >= 150
    assert (indexed.cut, indexed.seam_cut, indexed.mode, indexed.opening) == \
        (scanned.cut, scanned.seam_cut, scanned.mode, scanned.opening)
    n = len(messages)
    rng = random.Random(seed)
    asked = [(k, n) for k in range(1, n, 7)] + sorted({tuple(sorted(rng.sample(range(1, n), 2))) for _ in range(40)})
    for start, end in asked:
        answers = []
        for variants in (scanned, indexed):
            try:
                answers.append(variants.count(start, end))
            except Exception as exc:  # noqa: BLE001 - counted whole by the caller, alike
                answers.append(type(exc).__name__)
        assert answers[0] == answers[1], (start, end)
    checked = 0
    for start, end in asked[::6]:
        try:
            value = indexed.count(start, end)
        except Exception:  # noqa: BLE001
            continue
        if value is not None:
            assert value == counter.count(messages[:start] + messages[end:], tools), (start, end)
            checked += 1
    assert checked >= 3
    # every pass of ``_locate`` after the first (each slice's render may teach an opening) took what it had found
    # before at the same message and cursor from ``_placed``'s memo: located again with the memo empty, alike
    for variants in (scanned, indexed):
        assert variants._places_memo
        variants._places_memo.clear()
        assert variants._locate() == variants.cut
        assert variants._locate(variants.seam_opening, variants.seam_closing) == variants.seam_cut


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
def test_the_first_spelling_is_the_least_of_every_spelling_looked_for_whole(name):
    """``_first_spelling`` looks for a message's spellings last first, each after the first only up to where it could
    still start first: the least ``(start, length)`` of them all looked for to the render's end (``_find``), for every
    message, from its own place, from the start and from random cursors, strict or not, with each kind's opening."""
    from core.counters.hf_splices import _specific, _spellings

    counter = real(name)
    messages, tools = request(60, 3), [TOOL]
    variants = counter.variant_counts(messages, tools, counter.count(messages, tools))
    assert variants is not None
    rng = random.Random(5)
    openings = {o for o in list(variants.opening.values()) + list(variants.seam_opening.values()) if o} | {""}
    compared = 0
    for k in range(1, variants.n):
        spellings = _spellings(variants.m[k].content)
        if not spellings:
            continue
        for raw in openings:
            opening = _specific(raw, variants.m[k])
            if opening is None:
                continue
            for cursor in {0, variants.cut.get(k, 0), rng.randrange(len(variants.whole))}:
                for strict in (False, True):
                    every = [(start, len(s)) for s in spellings
                             for start in [variants._find(opening + s, cursor, strict)] if start >= 0]
                    assert variants._first_spelling(opening, spellings, cursor, strict) == \
                        (min(every) if every else None), (k, opening, cursor, strict)
                    compared += 1
    assert compared > 500
