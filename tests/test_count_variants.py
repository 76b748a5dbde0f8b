"""The count of an imported request without one complete count per message (issue 14's time cliff): the
``mistral:`` and ``openai:`` counters' variant counts (a prefix, the request with a slice left out) are the
complete counts of those variants, and ``count_imported`` gives exactly the figures of counting every variant
whole (``reference=True``)."""
from __future__ import annotations

import os
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, event, given, settings
from mistral_requests import TOOLS, conversation
from support import FIXTURES, SHARED, default_counter

from core import TemplateRefused, make_counter
from core.contracts import ChatMessage
from core.formats.count import count_imported
from core.formats.importing import import_data, import_file

SHARED_TIKTOKEN_CACHE = SHARED / "tokenizers" / "tiktoken-cache"


@lru_cache(maxsize=None)
def _openai_counter():
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(SHARED_TIKTOKEN_CACHE.resolve())
    try:
        return make_counter("openai:gpt-4o")
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


def counter_named(name: str):
    if name == "mistral":
        return default_counter()
    if not (SHARED_TIKTOKEN_CACHE / "fb374d419588a4632f3f557e76b4b70aebbca790").is_file():
        pytest.skip(f"the shared tiktoken cache is absent ({SHARED_TIKTOKEN_CACHE}): openai: counters cannot load")
    return _openai_counter()


COUNTERS = pytest.mark.parametrize("name", ["mistral", "openai"])


def assert_every_variant(counter, variants, messages, tools) -> int:
    """Every variant the variant counts answer for is the complete count of that variant; how many answered."""
    n, answered = len(messages), 0
    for start in range(n + 1):
        for end in range(start, n + 1):
            try:
                got = variants.count(start, end)
            except Exception:  # noqa: BLE001 - left to a whole count
                continue
            answered += 1
            assert got == whole(counter, messages[:start] + messages[end:], tools), (start, end)
    return answered


def whole(counter, messages, tools):
    if not messages:
        return None
    try:
        return counter.count(messages, tools)
    except TemplateRefused:
        return None


@COUNTERS
@given(messages=conversation(), tools=TOOLS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_variant_count_is_the_complete_count_of_that_variant(name, messages, tools):
    counter = counter_named(name)
    total = whole(counter, messages, tools)
    variants = counter.variant_counts(messages, tools, total) if total is not None else None
    event("variant counts" if variants is not None else "no variant counts (the request is refused)")
    if variants is None:
        return
    n = len(messages)
    answered = assert_every_variant(counter, variants, messages, tools)
    assert answered or n <= 1


@given(messages=conversation(), tools=TOOLS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_variant_counts_told_from_the_request_s_count_with_its_user_runs_never_tokenised(messages, tools):
    """The mistral variants tell a variant's count from the request's: a long user run no count has tokenised
    yet (every user run here) is tokenised only where a variant leaves it out or cuts it, and the system prompt
    written into the last user turn only where a variant writes it differently. Every variant is still the
    complete count of that variant."""
    from core.counters import mistral_variants

    counter = default_counter()
    total = whole(counter, messages, tools)
    if total is None:
        return
    counter._text_cache.clear()
    lazy_chars = mistral_variants.LAZY_CHARS
    mistral_variants.LAZY_CHARS = 0
    try:
        variants = counter.variant_counts(messages, tools, total)
    finally:
        mistral_variants.LAZY_CHARS = lazy_chars
    if variants is None:
        return
    event("some user run lazy" if variants.lazy else "no user run")
    assert_every_variant(counter, variants, messages, tools)


def test_variant_counts_of_a_request_whose_question_carries_many_evidence_blocks():
    """A question with its evidence blocks is longer than ``LAZY_CHARS``: the mistral variants count it from its
    blocks (cut where tekken always cuts, each block counted on its own) or leave it for a variant that needs it,
    with and without a system prompt written into it; every variant is the complete count of that variant."""
    import random

    from core.contracts import Evidence
    from core.render import evidence_block, user_content

    rng = random.Random(7)
    words = "disk cluster rollback, node (primary) <x> & \"quoted\" 3.14 été latency\n".split(" ")
    passages = [Evidence(id=f"p{i}", source=f"doc-{i}.md", text=" ".join(rng.choice(words) for _ in range(60)),
                         score=1.0) for i in range(40)]
    question = user_content("What changed since the last deploy?", passages)
    assert len(question) > 8192
    for system in (True, False):
        counter = default_counter()
        counter._text_cache.clear()
        for p in passages[1:-1]:  # the plan counts every block on its own
            counter.text_count(evidence_block(p))
        messages = ([ChatMessage(role="system", content="Be brief.")] if system else []) + [
            ChatMessage(role="user", content="Keep answers short."), ChatMessage(role="assistant", content="Sure."),
            ChatMessage(role="user", content="And cite sources."), ChatMessage(role="user", content=question),
            ChatMessage(role="assistant", content="Noted."), ChatMessage(role="user", content="Go on.")]
        for order in (messages, messages[:-2]):  # the question last, and the question before a later turn
            total = counter.count(order, [])
            variants = counter.variant_counts(order, [], total)
            assert variants is not None
            n = len(order)
            for start in range(1, n + 1):
                for end in range(start, n + 1):
                    for cheap in (True, False):
                        try:
                            got = variants.count(start, end, cheap=cheap)
                        except Exception:  # noqa: BLE001 - left to a whole count
                            continue
                        assert got == whole(counter, order[:start] + order[end:], []), (system, start, end)


def assert_same_figures(imported, counter=None):
    counter = counter or default_counter()
    try:
        fast = count_imported(imported, counter)
    except TemplateRefused as exc:
        try:
            count_imported(imported, counter, reference=True)
        except TemplateRefused as again:
            assert str(again) == str(exc)
            return False
        raise AssertionError("the slow method counts what the fast one refused")
    assert fast.to_json() == count_imported(imported, counter, reference=True).to_json()
    return True


@COUNTERS
@given(messages=conversation(), tools=TOOLS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_imported_requests_get_the_figures_of_counting_every_variant_whole(name, messages, tools):
    counter = counter_named(name)
    body = {"model": "mistral-large-latest", "messages": [_openai(m) for m in messages],
            "tools": [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                        "parameters": t.parameters}} for t in tools]}
    try:
        imported = import_data(body).requests
    except Exception:  # noqa: BLE001 - a body the importer refuses has nothing to count
        return
    for request in imported:
        event("counted" if assert_same_figures(request, counter) else "refused by the template")


def _openai(m: ChatMessage) -> dict:
    out = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": __import__(
            "json").dumps(c.arguments)}} for c in m.tool_calls]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    return out


@COUNTERS
def test_fixtures_and_real_files_get_the_same_figures(name):
    counter = counter_named(name)
    files = sorted((FIXTURES / "formats").glob("*"))
    for shared in ("realworld", "realworld2"):
        files += [p for p in sorted((SHARED / shared).glob("*/*")) if p.is_file() and p.parent.name != "chat-templates"
                  and not p.name.endswith((".md", ".schema.json"))]
    counted = 0
    for path in files:
        try:
            requests = import_file(path).requests
        except Exception:  # noqa: BLE001 - files the importers refuse
            continue
        for request in requests[::max(1, len(requests) // 12)]:  # a session file's 170 requests: every 14th
            counted += assert_same_figures(request, counter)
    assert counted >= 20
