"""core.token_view: the tokens a counter counts for a text, with their ids and character spans."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import core

TEXTS = ["plain words, and punctuation!", 'héllo wörld {"a": 1} 東京 🙂', "", "  leading spaces\n\nand lines"]


@pytest.fixture(scope="module")
def embedded():
    return core.make_counter(None)


@pytest.mark.parametrize("text", TEXTS)
def test_the_embedded_counters_tokens_cover_the_text_and_match_its_count(embedded, text):
    view = core.token_view(embedded, text)
    assert len(view) == embedded.text_token_count(text)  # the tokens the item's count is made of
    covered = "".join(p.text for n, p in enumerate(view) if not (p.shared and n and view[n - 1].end == p.end))
    assert covered == text
    assert all(0 <= p.start <= p.end <= len(text) and p.text == text[p.start:p.end] for p in view)
    raw = embedded._tokenizer.instruct_tokenizer.tokenizer
    assert [p.id for p in view] == raw.encode(text, bos=False, eos=False)  # the model's own ids


def test_a_character_split_over_tokens_is_marked_shared(embedded):
    view = core.token_view(embedded, "🙂🙃🫠")
    assert view and all(p.text for p in view)
    if len(view) > 3:  # the tokenizer spends more than one token on some emoji
        assert any(p.shared for p in view)


def test_a_hugging_face_tokenizer_gives_its_offsets(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    factory = pytest.importorskip("tokenizer_factory")
    pytest.importorskip("transformers")
    directory = factory.build_toy_tokenizer_dir(tmp_path / "toy")
    counter = core.make_counter(f"hf:{directory}")
    text = "the quick brown fox, twice: the quick brown fox"
    view = core.token_view(counter, text)
    assert len(view) == counter.text_token_count(text)
    assert [p.id for p in view] == counter._tokenizer.encode(text, add_special_tokens=False)
    assert all(p.text == text[p.start:p.end] for p in view)


def test_text_no_tokens_offsets_cover_goes_with_the_token_before_it():
    """Qwen3's offsets end a character early where its normaliser composes "e" + U+0301 into one token before an added
    token: the combining mark was in no token's span, so the view left it out of the text it showed."""
    directory = Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "hf" / "qwen3"
    if not (directory / "tokenizer.json").is_file():
        pytest.skip(f"{directory} is absent: the real Qwen3 tokenizer is not here")
    counter = core.make_counter(f"hf:{directory}")
    for text in ("cafe\u0301<|im_start|>x", "cafe\u0301", "  cafe\u0301<|im_end|>\n"):
        view = core.token_view(counter, text)
        covered = "".join(p.text for n, p in enumerate(view) if not (p.shared and n and view[n - 1].end == p.end))
        assert covered == text
        assert len(view) == counter.text_token_count(text)
    view = core.token_view(counter, "cafe\u0301<|im_start|>x")
    assert [p.text for p in view if p.widened] == ["fe\u0301"]
