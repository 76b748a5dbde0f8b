"""The span memo of the ``mistral:`` count (``MistralCounter.count_reusing_texts``): a complete count that takes
the count of a text span between control tokens from the counter's text counts, where that exact string was
counted, is still ``len(token_ids(...))`` of the whole request; the reference assembly never uses it."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mistral_requests import TEXT, TOOLS, conversation
from support import FIXTURES, SHARED, imported_requests

from core import TemplateRefused, assemble, make_counter, parse_request
from core.contracts import ChatMessage, ToolDefinition

SLICE_TEXT = ("<evidence id=\"p\">\n" + "Words of a long passage, said again and again. " * 60 + "\n</evidence>\n") * 3


def answer(count, messages, tools):
    """``count(messages, tools)``, or mistral-common's refusal in its words."""
    try:
        return count(messages, tools)
    except TemplateRefused as exc:
        return exc.template_message


def exact(counter, messages, tools):
    return answer(lambda m, t: len(counter.token_ids(m, t)), messages, tools)


def reused(counter, messages, tools):
    return answer(lambda m, t: counter.count_whole_reusing_texts(m, t)[0], messages, tools)


def texts_of(messages):
    """What an assembly counts alone: each message's text, and its edges' variants."""
    for m in messages:
        if m.content:
            yield m.content
            yield m.content.rstrip(" ")
            yield m.content.strip()


def assert_reuse_exact(counter, messages, tools, extra=()):
    messages, tools = list(messages), list(tools)
    for text in [*texts_of(messages), *extra]:
        counter.text_count(text)
    expected = exact(counter, messages, tools)
    assert reused(counter, messages, tools) == expected
    assert reused(counter, messages, tools) == expected  # again, with the spans the first count remembered
    return expected


@pytest.fixture
def counter():
    made = make_counter("mistral:tekken_240911")
    assert made._span_memo() is not None, "the bundled tekken file's text counts are the renderer's span counts"
    return made


@given(conversation(), TOOLS, st.lists(TEXT, max_size=4))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_counts_reusing_text_counts_are_whole_request_counts(messages, tools, extra):
    counter = make_counter("mistral:tekken_240911")
    assert_reuse_exact(counter, messages, tools, extra)


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]), TEXT), min_size=1, max_size=8),
       st.sampled_from(["", " ", "  ", "\n", "\n\n", " \n", "\t"]))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_runs_of_one_role_and_edge_whitespace(parts, edge):
    """Same-role runs (joined by the normaliser), system prompts joined to the last user turn, whitespace at the
    edges: each message's text is in the text counts, the joined spans are not, and the count is still exact."""
    counter = make_counter("mistral:tekken_240911")
    messages = [ChatMessage(role=role, content=text + edge) for role, text in parts]
    messages.append(ChatMessage(role="user", content="The question" + edge))
    assert_reuse_exact(counter, messages, [])


WORDY = st.lists(st.sampled_from(["word", "Word", " ", "\n", "\n\n", ".", "!?", "/", "é", "e\u0301", "字", "12", "\t",
                                  "[INST]", "\ud800", "—", "{\"a\": 1}"]), max_size=14).map("".join)


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]), st.lists(WORDY, min_size=1, max_size=4)),
                min_size=1, max_size=5), WORDY)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_joined_runs_counted_from_their_texts_and_the_stretches_across_each_join(runs, question):
    """Runs of two or more messages of one role (and system texts joined to the last user turn): the span is
    counted from each text's own count and the stretches between cuts across each join, or encoded whole."""
    counter = make_counter("mistral:tekken_240911")
    messages = [ChatMessage(role=role, content=text) for role, texts in runs for text in texts]
    messages.append(ChatMessage(role="user", content=question or "Why?"))
    assert_reuse_exact(counter, messages, [])


def test_a_long_span_counted_alone_is_the_same_count_in_the_request(counter):
    messages = [ChatMessage(role="system", content="Answer from the passages."),
                ChatMessage(role="user", content=SLICE_TEXT), ChatMessage(role="assistant", content=SLICE_TEXT + "  "),
                ChatMessage(role="user", content="And?" + SLICE_TEXT)]
    tools = [ToolDefinition(name="search", description="Search.", parameters={"type": "object"})]
    assert_reuse_exact(counter, messages, tools, extra=[SLICE_TEXT + "  "])
    assert counter.span_tally[0] > 0


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.result.json")))
def test_every_result_fixture(name, counter):
    data = json.loads((FIXTURES / name).read_text())
    messages = [ChatMessage.model_validate(m) for m in data["messages"]]
    tools = [ToolDefinition.model_validate(t) for t in data.get("tools", [])]
    assert isinstance(assert_reuse_exact(counter, messages, tools), int)


def test_every_imported_request_of_the_fixtures_and_real_files(counter):
    if not (SHARED / "realworld").is_dir():
        pytest.skip("the shared real-world files are absent")
    compared = 0
    for messages, tools in imported_requests(counter):
        assert_reuse_exact(counter, messages, tools)
        compared += 1
    assert compared > 40 and counter.span_tally[0] > 0, (compared, counter.span_tally)


def _history_request():
    history = []
    for t in range(12):
        history += [{"role": "user", "content": f"Question {t} about the files?  ", "id": f"turn-{t}"},
                    {"role": "assistant", "content": f"Answer {t}, in a sentence or two.\n"},
                    {"role": "assistant", "content": f"More of answer {t}."}]
    return parse_request({"id": "r", "instructions": "Be brief.", "current": "And now?", "history": history,
                          "context_limit": 420, "max_new_tokens": 64, "margin": 8})


def test_the_default_assembly_reuses_text_counts_and_the_reference_never_does():
    request = _history_request()
    reference_counter, default_counter = make_counter("mistral:tekken_240911"), make_counter("mistral:tekken_240911")
    slow = assemble(request, reference_counter, reference=True)
    assert reference_counter.__dict__.get("span_tally", [0, 0]) == [0, 0]
    fast = assemble(request, default_counter)
    assert default_counter.span_tally[0] > 0, "the default's complete counts found spans in the text counts"
    assert fast.counting_note is None and fast.to_json() == slow.to_json()
    assert fast.input_tokens == len(default_counter.token_ids(fast.messages, fast.tools))


def test_a_long_last_turn_of_passages_is_counted_block_by_block_from_their_text_counts():
    """The passages' blocks are counted alone by the default assembly; the final count cuts the long last user turn
    between blocks (where tekken's pre-tokeniser always cuts) and finds each whole block there."""
    evidence = [{"id": f"p{i}", "source": "docs/a.md", "score": 1 - i / 100,
                 "text": ("Passage %d says the limit moved. <b>Bold</b> & \"quoted\".\n\n" % i) * 12}
                for i in range(40)]
    request = parse_request({"id": "r", "instructions": "Answer from the passages.", "current": "What moved?",
                             "evidence": evidence, "context_limit": 9000, "max_new_tokens": 64, "margin": 8})
    counter = make_counter("mistral:tekken_240911")
    fast = assemble(request, counter)
    assert fast.counting_note is None and len(fast.kept_evidence) > 5
    assert fast.input_tokens == len(counter.token_ids(fast.messages, fast.tools))
    assert fast.to_json() == assemble(request, make_counter("mistral:tekken_240911"), reference=True).to_json()
    assert counter.count_whole_reusing_texts(fast.messages, fast.tools)[0] == fast.input_tokens
    blocks = fast.messages[-1].content.split("</evidence>\n")
    assert len(blocks) > 5 and all(counter._text_cache.get(b + "</evidence>\n") for b in blocks[1:-2]), \
        "the middle blocks, as the final count cuts them, were counted alone"


def test_a_counter_whose_text_counts_are_its_own_gets_no_span_memo():
    """Text counts made some other way are never taken for span counts: the count is the plain whole count."""
    from core.counters.mistral import MistralCounter

    class Rounded(MistralCounter):
        def text_token_count(self, text):
            return 10 * (len(text) // 10)

    counter = Rounded("tekken_240911")
    messages = [ChatMessage(role="user", content="Hello there, how are you?"),
                ChatMessage(role="assistant", content="Fine."), ChatMessage(role="user", content="Good.")]
    for m in messages:
        counter.text_count(m.content)
    assert counter._span_memo() is None
    assert counter.count_whole_reusing_texts(messages, [])[0] == len(counter.token_ids(messages, []))
