"""A chat template rendered straight from its compiled form, for the text ``apply_chat_template(..., tokenize=False)``
gives, without transformers' copies of the conversation on every call.

``apply_chat_template`` turns the conversation into plain dicts three times over before the template sees it
(message objects to dicts, ``None`` values dropped, every value rebuilt as a plain JSON type for the sandbox): for
a prompt of a thousand messages that is half of a render, and a plan renders the prompt dozens of times to learn how
its template writes a slice left out. The conversation this counter gives it (``HFCounter.conversation``) is already
plain (strings, and the tool calls' argument objects, which go through transformers' own conversion), has no
``None`` value and no reasoning field to alias, so the template is given it as it is, with the tool schemas and the
special tokens converted as transformers converts them and the template chosen as it chooses it.

It is checked, not assumed: a render that holds a message outline not met before (the keys of a message: tool calls,
a result's call id and name; with tools given or not, a generation prompt or not: what transformers' preparation looks
at, message by message) is made both ways first, of the messages up to the last such outline where the template takes
them (else of all), and one difference (a transformers whose preparation differs from the one read here) turns this off
for the counter: every render then goes through ``apply_chat_template``.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

from .template_limits import TemplateLimitExceeded


def _transformers_parts() -> tuple[Callable, Callable | None] | None:
    """transformers' template compiler (the cached, guarded template ``template_limits`` installs its limits on) and its
    sandbox conversion, where this version has them."""
    try:
        from transformers.utils import chat_template_utils as utils
    except ImportError:  # pragma: no cover - transformers is a dependency
        return None
    compile_ = getattr(utils, "_compile_jinja_template", None)
    if compile_ is None:
        return None
    return compile_, getattr(utils, "_plain_template_data", None)


class DirectRender:
    """``render(conversation, tools, schemas, generation)``: the text ``apply_chat_template`` gives for these (plain)
    inputs, or ``None`` where the direct way is off (the caller then asks ``apply_chat_template``)."""

    def __init__(self, tokenizer: Any, template_kwargs: dict[str, Any], slow: Callable[..., str]) -> None:
        self.tokenizer = tokenizer
        self.slow = slow  # ``slow(conversation, schemas, generation)``: apply_chat_template's text
        parts = _transformers_parts()
        self.on = parts is not None and callable(getattr(tokenizer, "get_chat_template", None))
        self.checked: set[tuple] = set()
        self.plain: Callable[[Any], Any] = lambda value: value
        self.kwargs: dict[str, Any] = {}
        if self.on:
            self.compile, plain = parts
            if plain is not None:
                self.plain = plain
            self.kwargs = self.plain({**getattr(tokenizer, "special_tokens_map", {}), **template_kwargs})
        self.tool_memo: tuple[tuple, Any] = ((), None)  # the last tools given, and their schemas converted

    def render(self, conversation: list[dict[str, Any]], tools: Sequence[Any], schemas: list[dict[str, Any]] | None,
               generation: bool) -> str | None:
        if not self.on or not conversation:
            return None
        flags = (schemas is not None, generation)
        first: dict[tuple, int] = {}  # each outline not checked yet, and where it first comes
        for at, m in enumerate(conversation):
            outline = (flags, tuple(m))  # (a message's keys)
            if outline not in self.checked and outline not in first:
                first[outline] = at
        if first:
            witness = max(first.values()) + 1
            if witness < len(conversation):  # checked on the messages up to the last new outline: the same dicts
                try:
                    self._checked(set(first), conversation[:witness], tools, schemas, generation)
                except TemplateLimitExceeded:
                    raise  # (a runaway template is not run again on the whole)
                except Exception:  # noqa: BLE001 - that prompt refused: the whole one is checked instead
                    pass
            if not self.on:
                return None
            if not first.keys() <= self.checked:
                return self._checked(set(first), conversation, tools, schemas, generation)
        return self._direct(conversation, tools, schemas, generation)

    def _direct(self, conversation: list[dict[str, Any]], tools: Sequence[Any], schemas: list[dict[str, Any]] | None,
                generation: bool) -> str:
        template = self.compile(self.tokenizer.get_chat_template(None, schemas))
        return template.render(messages=conversation, tools=self._tools(tools, schemas), documents=None,
                               add_generation_prompt=generation, **self.kwargs)

    def _tools(self, tools: Sequence[Any], schemas: list[dict[str, Any]] | None) -> Any:
        """``schemas`` (made of ``tools``) as transformers' sandbox conversion gives them, kept for the very same tool
        objects (frozen models, held here so that their ids are not reused): a value compared instead would take
        ``1.0`` for ``1``."""
        if schemas is None:
            return None
        given, converted = self.tool_memo
        if len(given) == len(tools) and all(map(operator.is_, given, tools)):
            return converted
        converted = self.plain(schemas)
        self.tool_memo = (tuple(tools), converted)
        return converted

    def _checked(self, outline: set[tuple], conversation: list[dict[str, Any]], tools: Sequence[Any],
                 schemas: list[dict[str, Any]] | None, generation: bool) -> str:
        """Both ways, once for this outline: transformers' text is returned (its refusal raised, the outline then left
        to be checked another time) and a different text from the direct way turns that way off."""
        slow = self.slow(conversation, schemas, generation)
        try:
            fast = self._direct(conversation, tools, schemas, generation)
        except Exception:  # noqa: BLE001 - transformers rendered it: the direct way does not stand for it
            fast = None
        if fast != slow:
            self.on = False
        else:
            self.checked |= outline
        return slow


def conversation_items(messages: Sequence[Any], plain: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """``HFCounter.conversation`` of ``messages`` with each tool call's arguments as transformers' sandbox conversion
    gives them (``plain``)."""
    names: dict[str, str] = {}
    out = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content if m.content is not None else ""}
        if m.tool_calls:
            item["tool_calls"] = plain([{"id": c.id, "type": "function",
                                         "function": {"name": c.name, "arguments": c.arguments}}
                                        for c in m.tool_calls])
            names.update({c.id: c.name for c in m.tool_calls})
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
            if m.tool_call_id in names:
                item["name"] = names[m.tool_call_id]
        out.append(item)
    return out
