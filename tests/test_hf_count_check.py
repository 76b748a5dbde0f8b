"""An ``hf:`` counter's ``count_check`` (the default assembly's near-allowance checks): the rendered request's
pieces between added tokens counted apart, each cached by content, give exactly the stock tokenisation's length on the
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
            whole = len(stock_ids(counter, messages))
        except Exception:  # a template that refuses the conversation refuses it in both
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
    assert counter.count_check(messages, []) == len(stock_ids(counter, messages))
    backend = counter._tokenizer._tokenizer  # shared by every counter of this directory in the process: set back
    backend.enable_truncation(4)
    try:
        assert counter.count_check(messages, []) is None
    finally:
        backend.no_truncation()
    assert make_counter(f"hf:{toy_tokenizer_dir}").count_check(messages, []) == len(stock_ids(counter, messages))


# What lies around a newline in a long piece: letters, digits, "<", "#", "/" and other symbols, whitespace runs,
# accents written as a combining mark, contractions and CJK.
LINE_PIECES = st.sampled_from(["\n", "\n\n", " \n", "\t\n", "\r\n", "  ", " ", "a", "Word", "x.", "12", "3", "<", "</e>",
                               "#", "## ", "/", "//", "?", "'s", "'LL", "e\u0301", "\u0301", "日本", "-", "*", "é", "\u00a0"])
LONG_TEXT = st.lists(LINE_PIECES, min_size=1, max_size=60).map("".join)


@pytest.mark.parametrize("name", ["qwen3", "mistral-nemo"])
def test_a_long_piece_cut_at_its_lines_counts_what_it_counts_whole(name):
    """The lines of a piece cut where ``cuts_at_lines`` allows it count the piece's own tokens, on texts made to
    put every kind of character after a newline."""
    from core.counters.hf_pieces import LINE_CUT, cuts_at_lines

    counter = real(name)
    assert cuts_at_lines(counter._tokenizer)
    backend = counter._backend()

    @given(LONG_TEXT)
    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(text):
        lines = LINE_CUT.split(text)
        assert sum(len(backend.encode(t, add_special_tokens=False).ids) for t in lines if t) == \
            len(backend.encode(text, add_special_tokens=False).ids)

    check()


@pytest.mark.parametrize("name", ["qwen3", "mistral-nemo"])
def test_a_request_with_a_long_message_counts_from_its_lines_what_it_counts_whole(name):
    """A message longer than ``LONG_PIECE`` is counted from its lines (cached one by one: a second request that
    differs by one line tokenises that line only), and the sum is still ``len(token_ids(...))``."""
    from core.counters.hf_pieces import LONG_PIECE

    counter = real(name)

    @given(st.lists(LONG_TEXT, min_size=1, max_size=3), st.randoms(use_true_random=False))
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(parts, rng):
        body = "\n".join(parts)
        body = (body + "\n") * (LONG_PIECE // max(len(body), 1) + 1)
        messages = [ChatMessage(role="system", content="Answer from the passages."),
                    ChatMessage(role="user", content=body)]
        before = counter.item_counts
        assert counter.count_check(messages, []) == len(stock_ids(counter, messages))
        messages[1] = ChatMessage(role="user", content=body + "\nAnother line " + str(rng.randint(0, 10 ** 9)))
        first = counter.item_counts
        assert counter.count_check(messages, []) == len(stock_ids(counter, messages))
        assert counter.item_counts - first <= 3 and first >= before

    check()


def test_tokenizers_whose_pre_tokens_may_cross_a_newline_are_never_cut():
    """Gemma 4 (no pre-tokeniser: merges run across newlines) and Phi-3.5 keep their pieces whole; so does a
    split pattern not in the table, or a byte-level step that adds a prefix space."""
    import copy

    from tokenizers import Regex, pre_tokenizers

    from core.counters.hf_pieces import LINE_SAFE_PATTERNS, cuts_at_lines

    assert not cuts_at_lines(real("gemma4")._tokenizer) and not cuts_at_lines(real("phi35")._tokenizer)
    tokenizer = copy.deepcopy(real("qwen3")._tokenizer)
    qwen = next(p for p in LINE_SAFE_PATTERNS if p.startswith("(?i:") and "{1,3}" not in p)
    for pattern, prefix, safe in ((qwen, False, True), (qwen, True, False), (r"\s+|\S+", False, False)):
        tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=False)])
        assert cuts_at_lines(tokenizer) is safe, (pattern, prefix)


@pytest.mark.parametrize("name", ["qwen3", "mistral-nemo"])
def test_a_check_after_a_final_count_finds_the_pieces_that_count_tokenised(name):
    """``count_whole`` tokenises the request piece by piece and keeps the pieces' counts; the next check of a request
    that holds those pieces tokenises only what is new (a replay's checks then tokenise only what the recorded
    request did not hold), and what it gives is still the stock tokenisation's length."""
    from core.counters.hf_pieces import LONG_PIECE

    counter = real(name)
    lines = [f"<evidence id=\"p{n}\">\nPassage {n} says x.{n}, e\u0301 and 日本 {'?' * (n % 3)}\n</evidence>"
             for n in range(LONG_PIECE // 40)]
    whole = [ChatMessage(role="system", content="Answer."), ChatMessage(role="user", content="\n".join(lines)),
             ChatMessage(role="assistant", content="Noted.\n"), ChatMessage(role="user", content="Why?")]
    counter.count_whole(whole, [])
    before = counter.item_counts
    fewer = [whole[0], ChatMessage(role="user", content="\n".join(lines[:-3])), *whole[2:]]
    assert counter.count_check(fewer, []) == len(stock_ids(counter, fewer))
    assert counter.item_counts - before <= 1  # at most the shortened message's last line, never its others


def stock_ids(counter, messages, tools=()) -> list[int]:
    """What transformers' own ``apply_chat_template(..., tokenize=True)`` gives: the ids ours must equal."""
    ids = counter._tokenizer.apply_chat_template(
        counter.conversation(messages), tools=counter.tool_schemas(list(tools)), add_generation_prompt=True,
        tokenize=True, return_dict=False, **counter.chat_template_kwargs)
    return list(ids[0] if ids and isinstance(ids[0], list) else ids)


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral-nemo", "phi35"])
def test_the_complete_count_gives_the_ids_transformers_gives(name):
    """``token_ids`` (the complete count, tokenised from its pieces where they tokenise apart) equals transformers'
    stock call id for id, on short conversations with control-token spellings and on long messages cut at lines."""
    counter = real(name)

    @given(conversations(), st.lists(LONG_TEXT, min_size=0, max_size=3))
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(messages, long_parts):
        if long_parts:
            body = "\n".join(long_parts)
            body = (body + "\n") * (3000 // max(len(body), 1) + 1)
            messages = [*messages[:-1], ChatMessage(role="user", content=body + messages[-1].content)]
        try:
            stock = stock_ids(counter, messages)
        except Exception:  # the template refuses it: so do we
            with pytest.raises(TemplateRefused):
                counter.token_ids(messages, [])
            return
        assert counter.token_ids(messages, []) == stock
        total, ids = counter.count_whole(messages, [])
        assert ids == stock and total == len(stock)
        assert counter.count_and_render_text(messages, [])[0] == len(stock)

    check()


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "phi35"])
def test_texts_counted_in_one_call_count_what_transformers_counts_of_each(name):
    """``text_token_counts`` (every passage's block in one call to the Rust tokenizer) gives each text's own count,
    control-token spellings, whitespace runs and long texts included; a text it refuses is counted alone, which
    names the refusal."""
    counter = real(name)

    @given(st.lists(TEXT | LONG_TEXT, min_size=0, max_size=6))
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(texts):
        assert counter.text_token_counts(texts) == [len(counter._tokenizer.encode(t, add_special_tokens=False))
                                                    for t in texts]

    check()
    with pytest.raises(TypeError):
        counter.text_token_counts(["fine", "a\ud800b"])


def test_every_imported_real_request_counts_id_for_id_what_transformers_gives():
    """The requests the importers read from the fixtures and ../shared's real files (provider bodies, traces,
    transcripts: tool calls, long tool results, markup), tokenised from their pieces and lines on Qwen3, as
    transformers' stock call (Gemma 4, pieces only, passed the same here: 30 s, left to the Hypothesis test)."""
    name = "qwen3"
    from support import SHARED, imported_requests

    if not (SHARED / "realworld").is_dir():
        pytest.skip("the shared real-world files are absent")
    counter, compared = real(name), 0
    for messages, tools in imported_requests(counter):
        try:
            stock = stock_ids(counter, messages, tools)
        except Exception:  # noqa: BLE001 - the template refuses it: so does the counter
            with pytest.raises(TemplateRefused):
                counter.token_ids(messages, tools)
            continue
        assert counter.token_ids(messages, tools) == stock
        assert counter.count_and_render_text(messages, tools)[0] == len(stock)
        compared += 1
    assert compared > 40, compared


def test_a_final_count_from_text_counted_blocks_gives_the_stock_count():
    """The default's final count finds each evidence block among the counter's text counts (the assembly counted it
    alone) on a counter that has tokenised nothing else: what it gives is the stock tokenisation's length."""
    from real_hf import HF

    from core import make_counter
    from core.render import EVIDENCE_PREAMBLE, QUESTION_PREFIX

    counter = make_counter(f"hf:{HF / 'qwen3'}")
    blocks = [f'<evidence id="p{n}" source="s">\nPassage {n}: e\u0301, 日本 &amp; x.{n}\n\nMore {"?" * (n % 4)}\n'
              f"</evidence>\n" for n in range(120)]
    counter.text_counts(blocks)
    messages = [ChatMessage(role="system", content="Answer."),
                ChatMessage(role="user", content=EVIDENCE_PREAMBLE + "".join(blocks) + QUESTION_PREFIX + "Why?")]
    assert not counter.__dict__.get("_piece_counts")
    assert counter.count_and_render_text(messages, [])[0] == len(stock_ids(counter, messages))
    assert len(counter._piece_counts) < 20  # the blocks found; tokenised: the last block (before the question), the
    # preamble and the template's own pieces


def test_a_check_of_a_text_the_tokenizer_refuses_is_the_request_refused():
    counter = real("qwen3")
    messages = [ChatMessage.model_construct(role="user", content="a\ud800b", tool_calls=None, tool_call_id=None,
                                            name=None, id=None)]
    with pytest.raises(TemplateRefused):
        counter.count_check(messages, [])
