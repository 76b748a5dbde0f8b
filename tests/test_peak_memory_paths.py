"""What the peak-memory work changed gives what it gave before (issue 15: peak memory beside the text size).

- a render's parts between added tokens are walked one at a time (``hf_pieces._split_parts``), not held in one list;
- the final count sums its blocks as it goes, keeping only those not counted before (``count_known``), and
  tokenises them ``BATCH`` at a time;
- Mistral's count-and-text writes a run of user messages' texts with their joins, not a joined copy first;
- the trace entries an assembly makes share one fields set (each had its own: half of a long history's trace).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_hf import real

from core import assemble, make_counter, parse_request
from core.contracts import ChatMessage
from core.counters import hf_pieces
from core.result import TraceEntry
from tests.benchmarks.bench_shapes import _history
from tests.benchmarks.workload import large_request

PIECES = st.sampled_from(["hello", " ", "\n", "\n\n", "é", "x.", "<|im_start|>", "<|im_end|>", "<think>", "</think>",
                          "<|endoftext|>", "<tool_call>", "日本", "\n<evidence id=\"p\">\n", "\ud800"])
TEXT = st.lists(PIECES, max_size=30).map("".join)


def test_the_parts_walked_one_at_a_time_are_the_split_list():
    split = hf_pieces._split_of(real("qwen3"))

    @given(TEXT)
    @settings(max_examples=300, deadline=None)
    def check(text):
        assert list(hf_pieces._split_parts(split, text)) == split(text)

    check()
    assert list(hf_pieces._split_parts(str.splitlines, "a\nb")) == ["a", "b"]  # not a pattern's split: its own list


@pytest.mark.parametrize("batch", [1, 3, hf_pieces.BATCH])
def test_the_final_count_kept_block_by_block_is_the_sum_of_its_blocks(batch, monkeypatch):
    """``count_known`` against ``block_counts``' sum and the stock tokenisation, on counters that have counted
    some of the blocks before (the piece cache and the text cache), with batches smaller than the blocks."""
    monkeypatch.setattr(hf_pieces, "BATCH", batch)
    counter = real("qwen3")
    split = hf_pieces._split_of(counter)

    @given(st.lists(TEXT, min_size=1, max_size=8), st.lists(TEXT, max_size=4))
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(texts, before):
        text = "<|im_start|>".join(texts)
        if "\ud800" in text + "".join(before):  # refused by the tokenizer (another test's case)
            return
        counter.__dict__.pop("_piece_counts", None)
        if before:
            hf_pieces.count_known(counter, split, "<|im_end|>".join(before), tally=False)
        listed = sum(count for _, count in hf_pieces.block_counts(counter, split, text, tally=False))
        counter.__dict__.pop("_piece_counts", None)
        if before:
            hf_pieces.count_known(counter, split, "<|im_end|>".join(before), tally=False)
        assert hf_pieces.count_known(counter, split, text, tally=False) == listed == len(
            counter._tokenizer.encode(text, add_special_tokens=False))

    check()


def test_texts_counted_in_batches_count_what_each_counts_alone(monkeypatch):
    monkeypatch.setattr("core.counters.hf.BATCH", 2)
    counter = real("qwen3")
    texts = ["hello there", "<|im_start|>user\nx", "", "日本 é", "\n\n", "a" * 50, "why?"]
    assert counter.text_token_counts(texts) == [counter.text_token_count(t) for t in texts]


@pytest.mark.parametrize("texts", [["one", "two", "three"], ["only"], ["ünï", "日本\n", "x\n\n"],
                                   ["a", "b\ud800c", "d"]])
def test_a_run_of_user_messages_written_part_by_part_is_the_render(texts):
    counter = make_counter("mistral:tekken_240911")
    messages = ([ChatMessage(role="system", content="Answer.")]
                + [ChatMessage(role="user", content=t) for t in texts]
                + [ChatMessage(role="assistant", content="Yes."), ChatMessage(role="user", content="Why?")])
    fast = counter._renderer()
    value, text = fast.count_and_text(messages, [], {})
    if any("\ud800" in t for t in texts):
        assert text is None  # asked for apart, as before (the count then too)
    else:
        assert (value, text) == (fast.count(messages, [], {}), fast.render_text(messages, []))


def test_the_entries_of_an_assembly_share_their_fields_set_and_change_apart():
    data = large_request(5, 0, 1, context_limit=2400)
    data["history"] = _history(40, __import__("random").Random(5), single=True)
    result = assemble(parse_request(data), make_counter("mistral:tekken_240911"))
    dropped = [e for e in result.trace if e.section == "history" and e.decision == "dropped"]
    kept = [e for e in result.trace if e.section == "history" and e.decision == "kept"]
    assert len(dropped) > 2 and len(kept) > 2
    assert len({id(e.__pydantic_fields_set__) for e in dropped}) == 1
    assert len({id(e.__pydantic_fields_set__) for e in kept}) == 1
    for entry in result.trace:  # the state validation gives each of them
        again = TraceEntry.model_validate(entry.model_dump(exclude_unset=True))
        assert (entry.__dict__, entry.model_fields_set, entry.model_extra) == (
            again.__dict__, again.model_fields_set, again.model_extra)
    dropped[0].note = "x"
    dropped[0].message_indices = [1]
    assert all("note" not in e.model_fields_set and "message_indices" not in e.model_fields_set
               and not e.model_extra for e in dropped[1:])
    assert dropped[0].model_extra == {"note": "x"} and "message_indices" in dropped[0].model_fields_set
