"""Chat templates run under a time and an output-size limit (core.counters.template_limits): a runaway
template is a clear error naming the counter, in the API and the CLI, never a hang or an abort."""
from __future__ import annotations

import pytest
import tokenizer_factory
from support import FIXTURES

from core import CounterError, make_counter
from core.cli import main
from core.contracts import ChatMessage
from core.counters import template_limits

RUNAWAY = ("{% for a in range(100000) %}{% for b in range(100000) %}{% if messages[0]['role'] == 'x' %}"
           "{% endif %}{% endfor %}{% endfor %}{{ messages[0]['content'] }}")
CHATTY = "{% for a in range(100000) %}{% for b in range(100000) %}{{ messages[0]['content'] }}{% endfor %}{% endfor %}"
HUGE = "{{ messages[0]['content'] * 200000 }}"


@pytest.fixture
def quick_limits(monkeypatch):
    monkeypatch.setattr(template_limits, "MAX_RENDER_SECONDS", 0.5)
    monkeypatch.setattr(template_limits, "MAX_RENDER_CHARS", 1 << 20)


@pytest.mark.parametrize("template, words", [(RUNAWAY, "longer than"), (CHATTY, "limit"), (HUGE, "character")])
def test_a_runaway_template_is_stopped_with_a_clear_error(tmp_path, quick_limits, template, words, capsys):
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "tok", chat_template=template)
    counter = make_counter(f"hf:{directory}")
    with pytest.raises(CounterError, match=words):
        counter.count([ChatMessage(role="user", content="hello there")], [])
    code = main(["assemble", str(FIXTURES / "demo.request.json"), "--counter", f"hf:{directory}"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and f"hf:{directory}" in err and "Traceback" not in err


def test_the_output_limit_grows_with_a_conversation_longer_than_a_quarter_of_it(tmp_path, quick_limits):
    """A request for a 10M-token window holds more characters than the fixed limit: an ordinary template's output,
    a little more than its input, is let through; one that writes many times its input is still stopped."""
    big = "word " * (1 << 18)  # 1.3 MB: over the 1 MiB limit of ``quick_limits``
    ordinary = make_counter(f"hf:{tokenizer_factory.build_toy_tokenizer_dir(tmp_path / 'a')}")
    assert big in ordinary.render_text([ChatMessage(role="user", content=big)], [])
    chatty = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "b", chat_template="{{ messages[0]['content'] * 5 }}")
    with pytest.raises(CounterError, match="character limit"):
        make_counter(f"hf:{chatty}").render_text([ChatMessage(role="user", content=big)], [])


def test_an_ordinary_template_renders_as_transformers_does(toy_tokenizer_dir):
    counter = make_counter(f"hf:{toy_tokenizer_dir}")
    messages = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hello")]
    expected = counter._tokenizer.apply_chat_template(  # the guarded render is the template's own text
        counter.conversation(messages), add_generation_prompt=True, tokenize=False)
    assert counter.render_text(messages, []) == expected
    assert counter.template_note is None
