"""Chat templates run under limits: a time limit and an output-size limit per render.

A chat template is a program of someone else's: one with nested loops can run forever, one can emit a
hundred megabytes before the tokenizer sees it. transformers compiles each template once (a cached
jinja2 ``Template`` in its sandboxed environment) and calls its ``render``; we give that one compiled
template a ``render`` of our own that produces the same text the same way (jinja2's root render
function, chunk by chunk) and stops it, with a clear error, when it runs past ``MAX_RENDER_SECONDS`` or
``MAX_RENDER_CHARS`` (for a conversation of more than a quarter of that, ``OUTPUT_PER_INPUT`` times its own
characters, up to ``MAX_RENDER_CEILING``). The deadline is also checked on every attribute, item and call the template makes,
so a loop that emits nothing is stopped too. Where transformers' private compile function is not there
(another version), templates run without these limits and ``install`` says so.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from .template_sandbox import fast_getattr

MAX_RENDER_SECONDS = 10.0
MAX_RENDER_CHARS = 32 << 20  # the output limit for a conversation of up to a quarter of this
OUTPUT_PER_INPUT = 4  # and for a longer one (a 10M-token window's request): this many times its own characters,
MAX_RENDER_CEILING = 256 << 20  # up to this, whatever the conversation (the chunks are held, then joined)

_state = threading.local()


class TemplateLimitExceeded(RuntimeError):
    """A render ran past a limit; the message names the limit."""


def _check() -> None:
    deadline = getattr(_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        _state.deadline = None
        raise TemplateLimitExceeded(f"the template ran longer than the {MAX_RENDER_SECONDS:g}-second limit for one "
                                    "render (runaway loops?)")


def _guard(template) -> None:
    environment = template.environment
    if getattr(environment, "_context_inspector_guarded", False):
        return
    getattr_, getitem, call = environment.getattr, environment.getitem, environment.call

    def guarded_getattr(obj, attribute):
        _check()
        return getattr_(obj, attribute)

    # the sandbox's verdicts remembered, the deadline checked every ``CHECK_EVERY`` lookups
    guarded_getattr = fast_getattr(environment, getattr_, _check) or guarded_getattr

    def guarded_getitem(obj, argument):
        _check()
        return getitem(obj, argument)

    def guarded_call(__context, __obj, *args, **kwargs):
        _check()
        return call(__context, __obj, *args, **kwargs)

    environment.getattr, environment.getitem, environment.call = guarded_getattr, guarded_getitem, guarded_call
    environment._context_inspector_guarded = True

    def render(*args: Any, **kwargs: Any) -> str:
        context = template.new_context(dict(*args, **kwargs))
        given = context.get_all()
        given = {"messages": given.get("messages"), "tools": given.get("tools")}  # (as given, before it renders)
        chunks: list[str] = []
        size = 0
        # the conversation's own limit is worked out only when the output passes the fixed one (walking every
        # string of the conversation costs about 3% of an ordinary render)
        limit, grown = MAX_RENDER_CHARS, False
        _state.deadline = time.monotonic() + MAX_RENDER_SECONDS
        try:
            for chunk in template.root_render_func(context):
                size += len(chunk)
                if size > limit and not grown:
                    grown = True
                    limit = min(max(MAX_RENDER_CHARS, OUTPUT_PER_INPUT * _input_chars(given)), MAX_RENDER_CEILING)
                if size > limit:
                    raise TemplateLimitExceeded(f"the template's output passed the {limit:,}-character limit for one "
                                                "render")
                chunks.append(chunk)
                _check()
        except TemplateLimitExceeded:
            raise
        except Exception:
            return environment.handle_exception()  # jinja2's own error handling, as Template.render does
        finally:
            _state.deadline = None
        return "".join(chunks)

    template.render = render


def _input_chars(values: dict) -> int:
    """The characters of every string in the conversation and the tools a template is given to render."""
    total, stack = 0, [values.get("messages"), values.get("tools")]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return total


def install(chat_template: Any) -> str | None:
    """Put the limits on transformers' compiled copy of ``chat_template`` (a string, or a dict of named
    templates). Returns ``None``, or a note when they could not be installed."""
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError:
        return "chat templates run without time and size limits (this transformers has no compile cache)"
    templates = chat_template.values() if isinstance(chat_template, dict) else [chat_template]
    for text in templates:
        if not isinstance(text, str):
            continue
        try:
            _guard(_compile_jinja_template(text))
        except Exception as exc:  # a template that does not compile: the render reports it as a refusal
            if type(exc).__name__ in ("TemplateSyntaxError", "ImportError"):
                continue
            return f"chat templates run without time and size limits ({type(exc).__name__})"
    return None
