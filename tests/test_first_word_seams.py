"""A tokenizer that reads a message's first word otherwise in the prompt than alone (``starts_alike_in_place``).

Found in session 19 by sweeping the default against the reference on the real vocabularies llama.cpp ships as GGUF
files, converted with transformers' GGUF tokenizer converter: Phi-3's converts with role tokens that do not strip the
newline after them (the tokenizer of ../shared/tokenizers/hf/phi35 strips it), and its normaliser puts "▁" before
every stretch of text between added tokens. The text after ``<|user|>`` and a newline is then read without that
mark: "Evidence" costs two tokens there and one alone, "Why" one in both, so what a turn or passage adds depends on
its first word, which no constant learned by its start's class holds. The default priced dropped turns and passages
one or two tokens off; such a counter is now assembled with the reference method, with a note. Built here from the
real Phi-3.5 tokenizer with its role tokens' ``rstrip`` turned off (skipped when it is absent)."""
from __future__ import annotations

import json
import shutil

import pytest
from real_hf import HF, real
from support import default_counter
from test_plan_fast_counting import assert_same

from core import ContextAssembler, ContextPlan, Message, SectionPlan, assemble, make_counter, parse_request
from core.counters.template_probes import starts_alike_in_place

# a request of a random run where the default differed, each assembly on a fresh counter (the reference drops turn-2
# at 21 tokens; the default, trusting the item model, priced it 20)
REQUEST = {"id": "x", "instructions": "Be brief.", "current": "é字 text.", "context_limit": 92, "max_new_tokens": 10,
           "margin": 0, "evidence": [], "history": [
               {"role": "user", "content": "42 is it."}, {"role": "assistant", "content": "é字 text."},
               {"role": "user", "content": "42 is it."}, {"role": "assistant", "content": "Über alles."},
               {"role": "user", "content": "42 is it."}, {"role": "assistant", "content": "the end."},
               {"role": "user", "content": "Evidence passages are data."},
               {"role": "assistant", "content": "Evidence passages are data."}]}


@pytest.fixture(scope="module")
def newline_kept_dir(tmp_path_factory):
    """The real Phi-3.5 tokenizer with every added token's ``rstrip`` off, as the GGUF conversion gives it."""
    if not (HF / "phi35" / "tokenizer.json").is_file():
        pytest.skip(f"{HF / 'phi35'} is absent: the real Phi-3.5 tokenizer is not here")
    folder = tmp_path_factory.mktemp("phi35-newline-kept")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(HF / "phi35" / name, folder / name)
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    for token in tokenizer["added_tokens"]:
        token["rstrip"] = False
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    for token in config.get("added_tokens_decoder", {}).values():
        token["rstrip"] = False
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.fixture
def newline_kept(newline_kept_dir):
    return make_counter(f"hf:{newline_kept_dir}")


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "phi35", "mistral-nemo"])
def test_the_real_tokenizers_read_a_first_word_in_place_as_alone(name):
    counter = real(name)
    assert counter.starts_alike_in_place() and starts_alike_in_place(counter)


def test_the_embedded_counter_and_the_toy_tokenizer_do_too(toy_tokenizer_dir):
    """(The embedded counter says so without asking: its tekken tokenizer marks no stretch of text, and its template
    writes a control token before every message; the probe agrees.)"""
    assert starts_alike_in_place(default_counter())
    assert starts_alike_in_place(make_counter(f"hf:{toy_tokenizer_dir}"))


def test_a_tokenizer_that_marks_each_stretch_of_text_reads_a_first_word_otherwise(newline_kept):
    assert not newline_kept.starts_alike_in_place() and not starts_alike_in_place(newline_kept)
    first = newline_kept.count([Message(role="user", content="Evidence passages").chat()], [])
    assert first - newline_kept.text_count("Evidence passages") != \
        newline_kept.count([Message(role="user", content="Why?").chat()], []) - newline_kept.text_count("Why?")


def test_its_requests_get_the_reference_result_with_a_note(newline_kept_dir, monkeypatch):
    request = parse_request(REQUEST)
    reference = assemble(request, make_counter(f"hf:{newline_kept_dir}"), reference=True)
    fast = assemble(request, make_counter(f"hf:{newline_kept_dir}"))
    assert "first word" in (fast.counting_note or "")
    assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()
    assert [(e.id, e.tokens) for e in reference.trace if e.decision == "dropped"] == [("turn-2", 21), ("turn-1", 21)]
    # what the default gave before, the item model trusted: turn-2 priced 20 ("42" after the role token's newline)
    counter = make_counter(f"hf:{newline_kept_dir}")
    monkeypatch.setattr(type(counter), "starts_alike_in_place", lambda self: True)
    before = assemble(request, counter)
    assert [(e.id, e.tokens) for e in before.trace if e.decision == "dropped"] == [("turn-2", 20), ("turn-1", 21)]


def test_its_plans_get_the_reference_result(newline_kept):
    """The sweep's plan: passages placed into the question ("Why?") open it with the evidence preamble, whose first
    word the tokenizer reads otherwise after the role token's newline."""
    layout = (SectionPlan("system", pinned=True), SectionPlan("recent", compaction="drop-oldest"),
              SectionPlan("evidence", compaction="by-score", into="question"), SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content="Answer from the passages.")],
            "recent": [Message(role="user", content="Hello there.", id="u0"),
                       Message(role="assistant", content="Evidence first.", id="a0")],
            "evidence": [Message(role="user", content=f"Passage {k} text.", id=f"p{k}", score=k / 10) for k in range(4)],
            "question": [Message(role="user", content="Why?", id="q")]}
    for where in (0.0, 0.2, 0.4, 0.6, 0.8, 0.99):
        assert_same(layout, (), data, newline_kept, where, 0)
    plan = ContextPlan(sections=layout, budget_tokens=60)
    assert "first word" in (ContextAssembler(plan, newline_kept).assemble(data).counting_note or "")


def test_words_of_different_start_keys_that_disagree_are_enough(newline_kept, monkeypatch):
    """The assembly's turn shapes are keyed by roles and edge whitespace only, so a digit-led and a letter-led word
    that disagree (while each key's words agree) break it too (session 19's review: 161 of 805 random assemblies)."""
    from core.counters import template_probes

    monkeypatch.setattr(template_probes, "_FIRST_WORDS", ("Why?", "Hello there.", "the end.", "é字 text.",
                                                          "1 two three.", "42 is it.", "7th.", "<tag> text."))
    assert not starts_alike_in_place(newline_kept)


def test_the_answer_is_kept_per_template_arguments(tmp_path):
    """Counters of one folder share its tokenizer and templates; one rendered with other arguments (here a prefix the
    template writes before a user's text) gets its own answer, whichever asks first (session 19's review: the
    memoised answer of the other had 131 assemblies differ without a note)."""
    if not (HF / "phi35" / "tokenizer.json").is_file():
        pytest.skip(f"{HF / 'phi35'} is absent: the real Phi-3.5 tokenizer is not here")
    shutil.copy(HF / "phi35" / "tokenizer.json", tmp_path / "tokenizer.json")
    config = json.loads((HF / "phi35" / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = config["chat_template"].replace(
        "{{'<|user|>\n' + message['content']", "{{'<|user|>\n' + (pre if pre is defined else '') + message['content']")
    assert "pre if pre" in config["chat_template"]
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    plain = make_counter(f"hf:{tmp_path}")
    prefixed = make_counter(f"hf:{tmp_path}?pre=x:")
    assert prefixed.chat_template_kwargs == {"pre": "x:"}
    assert plain.starts_alike_in_place() and not prefixed.starts_alike_in_place()
    request = parse_request(REQUEST)
    fast = assemble(request, prefixed)
    assert "first word" in (fast.counting_note or "")
    assert fast.model_copy(update={"counting_note": None}).to_json() == \
        assemble(request, make_counter(f"hf:{tmp_path}?pre=x:"), reference=True).to_json()
