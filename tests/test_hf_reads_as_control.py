"""``HFCounter.reads_as_control`` answers without tokenising where a text spells none of the added tokens, raw or
normalised (the neutraliser asks it of every evidence passage): its answer is the tokenisation's own on the real
tokenizers, texts that spell added tokens in part, whole, across a normalisation or in another case included."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_hf import real

FRAGMENTS = st.sampled_from(["hello", " ", "\n", "<", ">", "|", "<|", "|>", "im_start", "<|im_start|>", "<|im_end|>",
                             "<think>", "</think>", "<tool_call>", "<TOOL_CALL>", "[INST]", "[/INST]", "</s>", "<s>",
                             "<start_of_turn>", "<end_of_turn>", "<|end|>", "<|user|>", "＜", "＞", "▁", "é", "e\u0301",
                             "<0x0A>", "<unk>", "<pad>", "<|endoftext|>", "日本", "[TOOL_CALLS]", "<bos>", "\u00a0"])
TEXTS = st.lists(FRAGMENTS, min_size=1, max_size=10).map("".join)


@pytest.mark.parametrize("name", ["qwen3", "mistral-nemo"])
def test_reads_as_control_is_what_tokenising_says(name):
    """(Gemma 4 and Phi-3.5 fall back to byte tokens: they always tokenise, as before.)"""
    counter = real(name)
    assert counter._spells_no_added("plain words")

    @given(TEXTS)
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(text):
        ids = counter._tokenizer.encode(text, add_special_tokens=False)
        assert counter.reads_as_control(text) == (not counter._added_ids.isdisjoint(ids))

    check()


def test_tokenizers_with_byte_tokens_always_tokenise():
    for name in ("gemma4", "phi35"):
        assert not real(name)._spells_no_added("plain words")


def test_a_passage_that_spells_no_added_token_is_answered_without_tokenising():
    counter = real("qwen3")
    asked = []
    encode = counter._tokenizer.encode
    counter._tokenizer.encode = lambda *a, **k: asked.append(a) or encode(*a, **k)
    try:
        assert counter.reads_as_control("Plain prose about <b>bold</b> markup and a | pipe.") is False
        assert asked == []
        assert counter.reads_as_control("a passage that says <|im_start|>system") is True
        assert len(asked) == 1
    finally:
        del counter._tokenizer.encode


@pytest.mark.parametrize("name", ["qwen3", "mistral-nemo", "gemma4", "phi35"])
def test_byte_fallback_is_read_once_per_counter_and_agrees_with_the_models_state(name):
    """Read off the model's own attribute (its serialised state, the whole vocabulary, took half a second a
    passage before it was kept), once: the second answer comes from the counter, whatever the model says then."""
    import json

    counter = real(name)
    backend = counter._tokenizer.backend_tokenizer
    first = counter._byte_fallback(backend)
    assert first == bool(json.loads(backend.model.__getstate__()).get("byte_fallback", False))
    assert counter.__dict__["_byte_fallback_known"] is first

    class Refusing:  # a model that can no longer be asked: the kept answer is given
        def __getattr__(self, name):
            raise AssertionError(f"asked the model for {name} again")

    class Backend:
        model = Refusing()

    assert counter._byte_fallback(Backend()) is first


def test_an_ascii_text_skips_the_normaliser_only_where_the_normaliser_keeps_ascii():
    """Unicode normal forms leave ASCII as it is (Qwen3's NFC, Nemo's none): an ASCII passage is not normalised to be
    asked about. A normaliser that changes ASCII (Lowercase, Gemma 4's Replace) is always run: an upper-case
    text is answered as tokenising it says (on Qwen3's vocabulary no lowered spelling gives an added token's id, so
    what guards the skip here is ``keeps_ascii`` being false)."""
    import copy

    from tokenizers import normalizers

    from core.counters.hf_pieces import keeps_ascii

    assert keeps_ascii(real("qwen3")) and keeps_ascii(real("mistral-nemo"))
    assert not keeps_ascii(real("gemma4")) and not keeps_ascii(real("phi35"))
    counter = copy.deepcopy(real("qwen3"))
    counter.__dict__.pop("_keeps_ascii", None)
    counter._tokenizer.backend_tokenizer.normalizer = normalizers.Lowercase()
    assert not keeps_ascii(counter)

    @given(TEXTS.map(str.upper))
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(text):
        ids = counter._tokenizer.encode(text, add_special_tokens=False)
        assert counter.reads_as_control(text) == (not counter._added_ids.isdisjoint(ids))

    check()
