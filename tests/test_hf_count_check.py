"""An ``hf:`` counter's ``count_check`` (the default assembly's near-allowance checks): the rendered request's
pieces between added tokens counted apart, each cached by content, give exactly ``len(token_ids(...))`` on the
real tokenizers it accepts (Qwen3, Gemma 4, Mistral Nemo), texts holding control-token spellings, whitespace runs
and accents included; a tokenizer whose added tokens eat the whitespace beside them (Phi-3.5) is counted whole."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_hf import real

from core.contracts import ChatMessage
from core.counters.hf_pieces import added_split
from core.errors import TemplateRefused

PIECES = st.sampled_from(["hello", " ", "\n", "\n\n", "  ", "é", "12", "x.", "<|im_start|>", "<|im_end|>", "<think>",
                          "</think>", "<|endoftext|>", "<tool_call>", "[INST]", "</s>", "<s>", "<start_of_turn>",
                          "<end_of_turn>", "▁", "\t", "don't", "日本"])
TEXT = st.lists(PIECES, min_size=1, max_size=14).map("".join)


@st.composite
def conversations(draw) -> list[ChatMessage]:
    messages = [ChatMessage(role="system", content=draw(TEXT))] if draw(st.booleans()) else []
    for n in range(draw(st.integers(0, 3))):
        messages += [ChatMessage(role="user", content=draw(TEXT)), ChatMessage(role="assistant", content=draw(TEXT))]
    return messages + [ChatMessage(role="user", content=draw(TEXT))]


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral-nemo"])
def test_the_pieces_between_added_tokens_count_what_the_whole_request_counts(name):
    counter = real(name)
    assert added_split(counter._tokenizer) is not None

    @given(conversations())
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(messages):
        try:
            whole = len(counter.token_ids(messages, []))
        except TemplateRefused:  # a template that refuses the conversation refuses it in both
            with pytest.raises(TemplateRefused):
                counter.count_check(messages, [])
            return
        assert counter.count_check(messages, []) == whole

    check()


def test_added_tokens_that_eat_whitespace_leave_the_request_counted_whole():
    counter = real("phi35")  # its <|end|> and role tokens strip the whitespace to their right
    assert added_split(counter._tokenizer) is None
    assert counter.count_check([ChatMessage(role="user", content="hello")], []) is None


def test_a_tokenizer_set_to_truncate_is_counted_whole_not_from_pieces(toy_tokenizer_dir):
    """The pieces are counted by calling the Rust tokenizer directly, which truncates where one is set to; the
    text counts refuse that call then (``HFCounter._backend``), and so does ``count_check``."""
    from core import make_counter

    counter = make_counter(f"hf:{toy_tokenizer_dir}")
    messages = [ChatMessage(role="user", content="hello there, how are you today?")]
    assert counter.count_check(messages, []) == len(counter.token_ids(messages, []))
    counter._tokenizer._tokenizer.enable_truncation(4)
    assert counter.count_check(messages, []) is None
