"""The render without the generation prompt, read off the render with it where the template writes the prompt only
at its end from nothing the messages change (``core.counters.template_prompt``): the same text as a second render,
on the real tokenizers and the real-world templates (those whose syntax says so and those whose does not), and the
syntax rules on small templates of each kind."""
from __future__ import annotations

import pytest
import tokenizer_factory
from hypothesis import HealthCheck, given, settings
from real_hf import real
from test_hf_direct import TOOLS, WEATHER, conversations, real_world_counter

from core.counters.template_compare import _environment
from core.counters.template_prompt import kind_of_source, tail_only

LOOP = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"


@pytest.mark.parametrize("source,kind", [
    (LOOP, "none"),
    (LOOP + "{% if add_generation_prompt %}<assistant>{% endif %}", "tail"),
    (LOOP + "{% if add_generation_prompt %}<assistant>{% if enable_thinking is false %}<think></think>{% endif %}"
            "{% endif %}", "tail"),
    (LOOP + "{% if add_generation_prompt %}<assistant>{% else %}</s>{% endif %}", None),  # Phi-3.5's end of text
    (LOOP + "{% if add_generation_prompt %}<a>{% elif x %}<b>{% endif %}", None),
    ("{% set ns = namespace(last='') %}" + LOOP + "{% if add_generation_prompt %}{{ ns.last }}{% endif %}", None),
    (LOOP + "{% if add_generation_prompt %}{{ messages[-1]['role'] }}{% endif %}", None),
    (LOOP + "{% if add_generation_prompt %}{{ raise_exception('no') }}{% endif %}", None),
    ("{% for m in messages %}{% if add_generation_prompt %}!{% endif %}{{ m['content'] }}{% endfor %}", None),
    (LOOP + "{% if add_generation_prompt and tools %}<a>{% endif %}", None),
    (LOOP + "{% if add_generation_prompt %}<a>{% endif %}\n", "tail"),  # (the newline trimmed: nothing after it)
    (LOOP + "{% if add_generation_prompt %}<a>{% endif %}<end>", None),  # (text after it: not the last node)
    ("{% for m in messages %}{% set last = m['role'] %}{% endfor %}{% if add_generation_prompt %}{{ last }}"
     "{% endif %}", None),
    ("{% if add_generation_prompt %}", None),  # (does not parse)
])
def test_where_a_template_writes_the_generation_prompt(source, kind):
    assert kind_of_source(source, _environment(LOOP)) == kind


def test_every_template_of_a_tokenizer_must_say_so():
    tail = LOOP + "{% if add_generation_prompt %}<a>{% endif %}"
    assert tail_only({"default": tail, "tool_use": LOOP}) == "tail"
    assert tail_only({"default": LOOP, "tool_use": LOOP}) == "none"
    assert tail_only({"default": tail, "tool_use": tail + "{% if add_generation_prompt %}{% endif %}"}) is None


def agree(counter, messages, tools) -> None:
    whole = counter.render_prompt(messages, tools, generation=True)
    assert counter.render_without_prompt(messages, tools, whole) == \
        counter.render_prompt(messages, tools, generation=False)


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "phi35", "mistral-nemo"])
@given(case=conversations())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_real_tokenizers_without_the_prompt_as_a_second_render(name, case):
    counter = real(name)
    messages, with_tools, _ = case
    try:
        counter.render_prompt(messages, TOOLS if with_tools else [], generation=False)
    except Exception:  # noqa: BLE001 - a conversation the template refuses either way
        return
    agree(counter, messages, TOOLS if with_tools else [])


def test_the_real_tokenizers_syntax_is_read_as_expected():
    """Qwen3 writes its prompt at the end from constants and ``enable_thinking``; Gemma 4 reads the last message's
    kind there (``ns``); Phi-3.5 writes the end-of-text token otherwise; Mistral Nemo has no generation prompt."""
    kinds = {name: tail_only(real(name)._templates) for name in ("qwen3", "gemma4", "phi35", "mistral-nemo")}
    assert kinds == {"qwen3": "tail", "gemma4": None, "phi35": None, "mistral-nemo": "none"}


@pytest.mark.parametrize("key", sorted(tokenizer_factory.REAL_TEMPLATES))
def test_real_world_templates_without_the_prompt_as_a_second_render(tmp_path, key):
    counter, messages = real_world_counter(tmp_path, key), WEATHER
    for tools in ([], TOOLS):
        for few in (messages, messages[:2], messages[:5]):
            try:
                counter.render_prompt(few, tools, generation=False)
            except Exception:  # noqa: BLE001 - refused either way
                continue
            agree(counter, few, tools)
