"""The sandbox's attribute lookup with its verdicts remembered (core.counters.template_sandbox): every real chat
template renders the same text as under jinja2's own lookup, on conversations with tool calls, tool results,
system prompts and reasoning; what the sandbox refuses is still refused the same way; the render's deadline is
still kept by a template that only reads attributes."""
from __future__ import annotations

import pytest
import tokenizer_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import SandboxedEnvironment
from real_hf import HF, real

from core import CounterError, make_counter
from core.contracts import ChatMessage, ToolCall, ToolDefinition
from core.counters import template_limits
from core.counters.template_sandbox import fast_getattr

TOOLS = [ToolDefinition(name="get_weather", description="Weather for a city.",
                        parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                    "required": ["city"]}),
         ToolDefinition(name="search", description="Search the docs.", parameters={"type": "object", "properties": {
             "query": {"type": "string"}, "limit": {"type": "integer"}}})]

TEXT = st.lists(st.sampled_from(list("ab Zé字\n\t.{}<>|\"'") + ["<|im_start|>", "[INST]", "<end_of_turn>", "ns"]),
               max_size=30).map("".join)


@st.composite
def conversations(draw):
    messages = []
    if draw(st.booleans()):
        messages.append(ChatMessage(role="system", content=draw(TEXT)))
    for t in range(draw(st.integers(1, 4))):
        messages.append(ChatMessage(role="user", content=draw(TEXT) or "hi"))
        if draw(st.booleans()):
            call = ToolCall(id=f"call{t}", name="get_weather", arguments={"city": draw(TEXT)})
            messages.append(ChatMessage(role="assistant", content=draw(st.sampled_from([None, "Checking."])),
                                        tool_calls=[call]))
            messages.append(ChatMessage(role="tool", tool_call_id=f"call{t}", content=draw(TEXT) or "{}"))
        messages.append(ChatMessage(role="assistant", content=draw(TEXT) or "ok"))
    messages.append(ChatMessage(role="user", content=draw(TEXT) or "and now?"))
    return messages, draw(st.booleans())


def stock_render(counter, messages, tools) -> str | Exception:
    """The render under jinja2's own ``getattr`` (the guard's deadline checks aside), or what it raised."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    templates = counter._tokenizer.chat_template
    environments = [_compile_jinja_template(t).environment
                    for t in (templates.values() if isinstance(templates, dict) else [templates])]
    kept = [e.getattr for e in environments]
    for e in environments:
        e.getattr = lambda obj, attribute, e=e: SandboxedEnvironment.getattr(e, obj, attribute)
    try:
        return outcome(counter, messages, tools)
    finally:
        for e, lookup in zip(environments, kept):
            e.getattr = lookup


def outcome(counter, messages, tools) -> str | Exception:
    try:
        return counter.render_text(messages, tools)
    except Exception as exc:  # noqa: BLE001 - a refusal is compared as well
        return exc


def same(a, b) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    return a == b


NAMES = ["qwen3", "gemma4", "phi35", "mistral-nemo"]


@pytest.mark.parametrize("name", NAMES)
@given(case=conversations())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_real_templates_render_as_under_jinjas_own_lookup(name, case):
    counter = real(name)
    messages, with_tools = case
    tools = TOOLS if with_tools else []
    fast = outcome(counter, messages, tools)
    assert same(fast, stock_render(counter, messages, tools)), name


@pytest.mark.parametrize("key", sorted(tokenizer_factory.REAL_TEMPLATES))
def test_llama_cpp_templates_render_as_under_jinjas_own_lookup(tmp_path, key):
    if not tokenizer_factory.REAL_TEMPLATES[key].path.is_file():
        pytest.skip(f"{tokenizer_factory.REAL_TEMPLATES[key].path} is absent")
    counter = make_counter(f"hf:{tokenizer_factory.build_real_tokenizer_dir(tmp_path / key, key)}")
    messages = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Weather in Oslo?"),
                ChatMessage(role="assistant", content=None,
                            tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Oslo"})]),
                ChatMessage(role="tool", tool_call_id="c1", content='{"temp": 3}'),
                ChatMessage(role="assistant", content="3 degrees."), ChatMessage(role="user", content="Thanks")]
    for tools in ([], TOOLS):
        assert same(outcome(counter, messages, tools), stock_render(counter, messages, tools)), key


HOSTILE = {
    "dunder of a dict": "{{ messages[0].__class__ }}",
    "dunder of a str": "{{ messages[0].content.__class__.__mro__ }}",
    "mutating method": "{% set _ = messages.append(1) %}{{ messages | length }}",
    "dict clear": "{% set _ = messages[0].clear() %}{{ messages[0] }}",
    "format escape": "{{ '{0.__class__}'.format(messages[0].content) }}",
    "format_map": "{{ '{x}'.format_map({'x': messages[0].content}) }}",
    "namespace dunder": "{% set ns = namespace(a=1) %}{{ ns.__class__ }}",
    "loop internals": "{% for m in messages %}{{ loop.__class__ }}{{ loop.index }}{% endfor %}",
    "method as value": "{{ messages[0].content.upper() }}{{ messages[0].items() | list }}",
    "missing attribute": "{{ messages[0].nothing is defined }}{{ messages[0].content.nothing is defined }}",
    # a JSON schema's "items" key read as an attribute: the dict's method, as jinja2 has it, not the key
    "key named as a dict method": ("{% set tags = tools[0].function.parameters.properties.tags %}"
                                   "{{ tags.items is mapping }}{{ tags['items'].type }}{{ tags.get('type') }}"
                                   "{{ tags.type }}{{ messages[0].get('role') }}"),
    "attr filter": "{{ messages[0] | attr('role') }}{{ messages[0] | attr('__class__') }}",
}


@pytest.mark.parametrize("label", sorted(HOSTILE))
def test_what_the_sandbox_refuses_is_refused_the_same_way(tmp_path, label):
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "tok", chat_template=HOSTILE[label])
    counter = make_counter(f"hf:{directory}")
    messages = [ChatMessage(role="user", content="hello {there}")]
    tools = [ToolDefinition(name="tag", parameters={"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}}}})]
    fast, stock = outcome(counter, messages, tools), stock_render(counter, messages, tools)
    assert same(fast, stock), (fast, stock)
    if label == "key named as a dict method":
        assert fast == "Falsestringarrayarrayuser", fast
    if label in ("dunder of a dict", "dunder of a str", "namespace dunder", "loop internals", "format escape",
                 "attr filter"):  # an undefined value, printed as nothing, or the refusal of what is made of it
        assert "unsafe" in str(fast) if isinstance(fast, Exception) else "class" not in fast
    if label in ("mutating method", "dict clear"):
        assert isinstance(fast, Exception) and "unsafe" in str(fast)


def test_a_subclassed_environment_keeps_its_own_lookup():
    class Mine(SandboxedEnvironment):
        def is_safe_attribute(self, obj, attr, value):
            return False

    assert fast_getattr(Mine(), lambda obj, name: None, lambda: None) is None
    assert fast_getattr(SandboxedEnvironment(), lambda obj, name: None, lambda: None) is not None


def test_a_template_that_only_reads_attributes_is_still_stopped_at_the_deadline(tmp_path, monkeypatch):
    monkeypatch.setattr(template_limits, "MAX_RENDER_SECONDS", 0.5)
    # (the range made once: a call is checked on its own, and this loop must be stopped by its lookups alone)
    spin = ("{% set ns = namespace(x=0) %}{% set r = range(100000) %}{% for a in r %}{% for b in r %}"
            "{% if ns.x %}{% endif %}{% endfor %}{% endfor %}{{ messages[0].content }}")
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "tok", chat_template=spin)
    with pytest.raises(CounterError, match="longer than"):
        make_counter(f"hf:{directory}").render_text([ChatMessage(role="user", content="hi")], [])


def test_gemma4_keeps_its_state_in_a_namespace_and_renders_as_before():
    """Gemma 4's template (tens of thousands of ``ns.x`` lookups a render: what the remembered verdicts are for)
    on a long conversation of tool-call turns: the same text as under jinja2's own lookup."""
    if not (HF / "gemma4" / "tokenizer.json").is_file():
        pytest.skip("the real Gemma 4 tokenizer is absent")
    counter = real("gemma4")
    messages = [ChatMessage(role="system", content="Use the tools.")]
    for t in range(30):
        messages += [ChatMessage(role="user", content=f"Weather {t}?"),
                     ChatMessage(role="assistant", content=None, tool_calls=[
                         ToolCall(id=f"c{t}", name="get_weather", arguments={"city": f"City {t}"})]),
                     ChatMessage(role="tool", tool_call_id=f"c{t}", content=f'{{"temp": {t}}}'),
                     ChatMessage(role="assistant", content=f"{t} degrees.")]
    messages.append(ChatMessage(role="user", content="Summarise."))
    assert outcome(counter, messages, TOOLS) == stock_render(counter, messages, TOOLS)
    from transformers.utils.chat_template_utils import _compile_jinja_template

    environment = _compile_jinja_template(counter._tokenizer.chat_template).environment
    assert environment.getattr.__qualname__ == "fast_getattr.<locals>.lookup"  # the remembered verdicts in use
