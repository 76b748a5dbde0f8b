"""The audit's shortcuts give what the work they spare would give: the evidence region's blocks taken from the walk
of the whole message, a long text looked for by its head, the system prompt found from the start of the prompt
without JSON-quoted spellings, the emitted-ids check not run where the tokenizer reads no text as a control
token, and a joined span none of whose texts was counted encoded whole. Each is checked against the work itself,
and the audit still flags a row whose recorded count is wrong when nothing about it was counted before."""
from __future__ import annotations

import importlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core
from benchmarks.bench_inspector import write_results
from core.rendered import _InOrder, _present
from test_audit_fast_path import slow_counter, tampered

audit_module = importlib.import_module("core.audit")
audit_counted = importlib.import_module("core.audit_counted")

# pieces a hand-edited message is made of: tags whole and broken, case, ids, the question's own "<" and ">"
FRAGMENTS = ["<evidence id=\"a\">", "<EVIDENCE id='b' source=\"x\">", "</evidence>", "</Evidence >", "<evidence",
             ">", "<", "</", "evidence", "id=\"c\"", " text ", "\n", "Question: ", "a < b", "x > y", "\u212a",
             "<evidencex>", "<evidence\n>"]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=14).map("".join)


def reference_walk(text: str) -> list:
    """The walk of the evidence tags as the audit made it before its shortcuts: every match of the whole text."""
    out, open_at = [], None
    for tag in audit_module.TAG.finditer(text):
        if tag.group(0).startswith("</"):
            if open_at is None:
                out.append(("stray", tag.start(), tag.end(), None))
            else:
                out.append(("block", open_at[0], tag.start(), open_at[1]))
                open_at = None
        else:
            if open_at is not None:
                out.append(("nested", tag.start(), tag.end(), open_at[1]))
            open_at = (tag.end(), audit_module._block_id(tag.group(0)))
    if open_at is not None:
        out.append(("unclosed", open_at[0], len(text), open_at[1]))
    return out


@settings(max_examples=400, deadline=None)
@given(texts, st.data())
def test_a_regions_blocks_are_the_walk_of_the_region_itself(text, data):
    end = data.draw(st.integers(0, len(text)))
    audit_module._blocks.cache_clear()
    assert list(audit_module._walk_blocks(text)) == reference_walk(text)
    assert list(audit_module._prefix_blocks(text, end)) == reference_walk(text[:end])
    openers = [m.span() for m in audit_module.OPENER.finditer(text)]
    assert openers == ([m.span() for m in audit_module.OPENER.finditer(text, text.find("<"))] if "<" in text else [])


words = st.sampled_from(["ab", "abab", "a", "b", " ", "\n", "\"", "é", "x" * 70, "ab" * 40])


@settings(max_examples=400, deadline=None)
@given(st.lists(words, max_size=30).map("".join), st.lists(st.lists(words, max_size=12).map("".join), max_size=6))
def test_a_text_looked_for_by_its_head_is_found_where_find_finds_it(rendered, needles):
    present = _InOrder(rendered)
    for at in range(0, len(rendered) + 1, 7):
        for needle in needles:
            if needle:
                assert present._find(needle, at) == rendered.find(needle, at)
    for needle in needles:  # the answer never depends on the cursor: each is what _present says
        assert present(needle) == _present(rendered, needle)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[core.AssemblyResult]:
    path = tmp_path_factory.mktemp("shortcuts") / "bench.results.jsonl"
    write_results(path, 60, core.make_counter("mistral:tekken_240911"))
    return [core.parse_result(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


class _ScanningCounter(type(core.make_counter("mistral:tekken_240911"))):
    """The default counter made to say some text may be read as a control token: the emitted-ids check runs in full."""

    def text_is_never_control(self) -> bool:
        return False


def test_the_control_token_checks_spared_under_tekken_would_find_nothing(recorded):
    counter, scanning = core.make_counter("mistral:tekken_240911"), _ScanningCounter()
    assert counter.text_is_never_control() and not scanning.text_is_never_control()
    suspect = 0
    for n, result in enumerate(recorded + [tampered(r, n) for n, r in enumerate(recorded)]):
        regions = list(audit_module._untrusted_regions(result))
        full = list(audit_counted.emitted_control_tokens(result, scanning, regions))
        assert full == list(audit_counted.emitted_control_tokens(result, counter, regions)) == []
        by_text = list(audit_counted.control_tokens(result, scanning, regions))
        assert by_text == list(audit_counted.control_tokens(result, counter, regions)) == []
        suspect += any(scanning.holds_untrusted_spelling(text[a:b]) for _, text, a, b, _, _ in regions)
    assert suspect >= 20  # the full check did run where a spelling is in an untrusted text


def test_a_joined_span_no_text_of_which_was_counted_is_counted_exactly(recorded):
    slow = slow_counter()
    fresh = core.make_counter("mistral:tekken_240911")
    primed = core.make_counter("mistral:tekken_240911")
    for result in recorded[:20]:  # the texts counted first: the joined span is counted from its texts' edges
        for m in result.messages:
            if m.content:
                primed.text_count(m.content)
    for result in recorded:
        expected = (len(slow.token_ids(result.messages, result.tools)), slow.render_text(result.messages, result.tools))
        assert fresh.count_and_render_text(result.messages, result.tools) == expected
        assert primed.count_and_render_text(result.messages, result.tools) == expected


def test_a_row_whose_recorded_count_is_wrong_is_still_flagged_by_a_fresh_counter(recorded):
    for n, result in enumerate(recorded[:30]):
        for wrong in (result.input_tokens + 1, result.input_tokens - 1):
            changed = result.model_copy(update={"input_tokens": wrong})
            findings = core.audit(changed, core.make_counter("mistral:tekken_240911"))  # nothing counted before
            assert [f.rule for f in findings if f.rule == "count-mismatch"] == ["count-mismatch"], n
            assert findings == core.audit(changed, slow_counter())
