"""A counter says whether its chat template compares messages by value (``compared_message_fields``), and the
default assembly trusts its per-item predictions on a repeated text only where the template does not: real
Mistral Nemo compares whole messages (``message == user_messages[-1]``); Qwen3, Phi-3.5, Gemma 4 and
DeepSeek-R1 do not, and a repeated text no longer sends them to the reference method."""
from __future__ import annotations


import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from real_hf import deepseek_counter, real

from core import ChatMessage, ToolDefinition, assemble, parse_request
from core.counters.template_compare import compared_fields

TOOLS = [{"name": "search", "description": "Search the docs.",
          "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]
REPEATED = "Budget window for the next release"


@pytest.fixture(scope="module")
def deepseek(tmp_path_factory):
    return deepseek_counter(tmp_path_factory)


def counter_named(name: str, request):
    return request.getfixturevalue("deepseek") if name == "deepseek-r1" else real(name)


def depends_on_equal_texts(counter) -> bool:
    """The probe: two user messages of the same text against two of different texts, tools offered. Beyond the
    texts themselves, do the renders differ?"""
    tools = [ToolDefinition(**t) for t in TOOLS]

    def render(last: str) -> str:
        return counter.render_text([ChatMessage(role="user", content=REPEATED),
                                    ChatMessage(role="assistant", content="Noted."),
                                    ChatMessage(role="user", content=last)], tools)

    other = "Quota figure for another month"
    return render(other).replace(other, REPEATED) != render(REPEATED)


@pytest.mark.parametrize("name, fields", [("mistral-nemo", {"message"}), ("qwen3", set()), ("phi35", set()),
                                          ("gemma4", {"tool_calls", "tool_call_id"}), ("deepseek-r1", set())])
def test_each_real_template_says_what_it_compares_and_the_probe_agrees(name, fields, request):
    counter = counter_named(name, request)
    assert counter.compared_message_fields() == fields
    # the template's behaviour agrees: only Nemo's output changes when two user messages are equal
    assert depends_on_equal_texts(counter) == ("message" in fields)


@pytest.mark.parametrize("name", ["qwen3", "phi35", "gemma4", "deepseek-r1", "mistral-nemo"])
def test_a_history_turn_that_repeats_the_question_falls_back_only_where_the_template_compares(name, request):
    counter = counter_named(name, request)
    data = {"instructions": "Be brief.", "current": REPEATED, "tools": TOOLS, "max_new_tokens": 8, "margin": 0,
            "history": [{"role": "user", "content": REPEATED, "id": "t0"}, {"role": "assistant", "content": "Yes."},
                        {"role": "user", "content": "And the quota?", "id": "t1"},
                        {"role": "assistant", "content": "Yes."}],
            "evidence": [{"id": "p0", "source": "doc.md", "text": REPEATED, "score": 0.5}],
            "fill_order": ["history", "evidence"]}
    roomy = assemble(parse_request(dict(data, context_limit=100_000)), counter, reference=True)
    for limit in (roomy.input_tokens + 8, roomy.input_tokens + 7, roomy.input_tokens - 10, 100_000):
        request_ = parse_request(dict(data, context_limit=limit))
        reference = assemble(request_, counter, reference=True)
        fast = assemble(request_, counter)
        assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()
        if name == "mistral-nemo":
            assert "same text" in fast.counting_note
        else:
            assert fast.counting_note is None  # the shortcuts held: no fallback on a repeated text


ENV = ImmutableSandboxedEnvironment()


@pytest.mark.parametrize("source, fields", [
    ("{% for m in messages %}{% if m == messages[-1] %}x{% endif %}{{ m.content }}{% endfor %}", {"message"}),
    ("{% for m in messages %}{% if m.content == messages[-1].content %}x{% endif %}{% endfor %}", {"content"}),
    ("{% for m in messages %}{{ messages.index(m) }}{% endfor %}", {"message"}),
    ("{% for m in messages %}{% if m['content'] in messages[:-1] | map(attribute='content') %}x{% endif %}"
     "{% endfor %}", {"content"}),
    ("{% set last = messages[-1] %}{% for m in messages | selectattr('content', 'equalto', last.content) %}"
     "x{% endfor %}", {"content"}),
    ("{% for m in messages %}{% if loop.changed(m.content) %}x{% endif %}{% endfor %}", {"content"}),
    ("{% macro same(a, b) %}{% if a == b %}x{% endif %}{% endmacro %}"
     "{% for m in messages %}{{ same(m.content, messages[0].content) }}{% endfor %}", {"content"}),
    ("{% set ns = namespace(seen='') %}{% for m in messages %}{% if m.content == ns.seen %}x{% endif %}"
     "{% set ns.seen = m.content %}{% endfor %}", {"content"}),
    ("{% for m in messages | map(attribute='content') | unique %}{{ m }}{% endfor %}", {"content"}),
    # position, roles and constants are no value comparison between messages
    ("{% for m in messages %}{% if m.role == messages[loop.index0 - 1].role %}x{% endif %}"
     "{% if m.content == 'hi' or '</think>' in m.content %}y{% endif %}{{ messages[0].content }}{% endfor %}",
     set()),
    ("{% for m in messages %}{% if loop.index0 == messages | length - 1 %}x{% endif %}{% endfor %}", set()),
])
def test_the_analysis_finds_value_comparisons_between_messages(source, fields):
    assert compared_fields(source, ENV) == fields


def test_a_template_it_cannot_read_is_taken_to_compare():
    assert compared_fields("{% for m in messages %}", ENV) is None


def test_a_template_is_read_once_per_process():
    """Its compared fields depend on its text only: a counter made afresh for the same template (a replay in a worker,
    a new window) does not parse it again."""
    from core.counters import template_compare

    source = "{% for m in messages %}{% if m.content == messages[-1].content %}x{% endif %}{% endfor %}"
    template_compare._fields_of_source.cache_clear()
    first = template_compare.fields_of_templates(source)
    again = template_compare.fields_of_templates({"default": source})
    assert first == again == frozenset({"content"})
    info = template_compare._fields_of_source.cache_info()
    assert (info.misses, info.hits) == (1, 1)
