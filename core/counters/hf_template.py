"""What an ``hf:`` counter reads from its chat templates (a mixin of ``HFCounter``, whose ``_templates`` it reads):
the texts they rewrite by what they hold, the state they carry from message to message, whether a later reply
rewrites an earlier one or a tool call's text, whether they write a marker token between messages, whether the
tokenizer reads a message's first word in place as alone, and the message fields they compare; each worked out once
per counter (the first-word probe once per tokenizer, templates and template arguments)."""
from __future__ import annotations

from ..errors import CounterError
from . import template_compare, template_probes, template_prompt, template_rewrites, template_state


# ``starts_alike_in_place`` by tokenizer, templates and template arguments (the first two held, so their ids are not
# reused meanwhile)
_STARTS: dict[tuple[int, int, str], tuple[object, object, bool]] = {}
_STARTS_KEPT = 8


class TemplateReading:
    def _syntax(self, key: str, read):
        """What ``read`` finds in the chat templates (given them), once per counter."""
        if key not in self.__dict__:
            self.__dict__[key] = read(self._templates)
        return self.__dict__[key]

    def rewrite_test(self):
        return self._syntax("_rewrites", template_rewrites.rewritten_test)

    def carried_state(self) -> tuple[str, ...]:
        return self._syntax("_carried", template_state.carried_of_templates)

    def state_outside_tools(self) -> tuple[str, ...]:
        return self._syntax("_outside", lambda t: template_state.carried_of_templates(t, outside_tools=True))

    def rewrites_by_later_reply(self) -> bool:
        return self._syntax("_later", lambda _: template_probes.later_reply_rewrites(self))

    def reasoning_by_position(self) -> bool:
        return self._syntax("_position", lambda _: template_probes.reasoning_by_position(self))

    def tool_call_text_by_later_reply(self) -> bool:
        return self._syntax("_call_text", lambda _: template_probes.tool_call_text_by_later_reply(self))

    def splits_between_messages(self) -> bool:
        return self._syntax("_splits", lambda _: template_probes.splits_between_messages(self))

    def starts_alike_in_place(self) -> bool:
        """``core.counters.template_probes.starts_alike_in_place``: 64 small counts, made once for a tokenizer,
        its templates and the arguments they are rendered with (counters of one folder share the first two) and left
        out of this counter's ``full_counts`` and ``item_counts``."""
        if "_starts" not in self.__dict__:
            arguments = repr(sorted(self.chat_template_kwargs.items()))
            key = (id(self._tokenizer), id(self._templates), arguments)
            hit = _STARTS.get(key)
            if hit is None or hit[0] is not self._tokenizer or hit[1] is not self._templates:
                made, items = self.full_counts, self.item_counts
                try:
                    found = template_probes.starts_alike_in_place(self)
                finally:
                    self.full_counts, self.item_counts = made, items
                if len(_STARTS) >= _STARTS_KEPT:  # (it holds the tokenizers: kept few, as the loaded ones are)
                    _STARTS.clear()
                hit = _STARTS[key] = (self._tokenizer, self._templates, found)
            self.__dict__["_starts"] = hit[2]
        return self.__dict__["_starts"]

    def render_without_prompt(self, messages, tools, whole: str) -> str:
        """``render_prompt(messages, tools, generation=False)`` of a request whose render with the generation prompt is
        ``whole``: that render less the tail a one-message render shows where the templates write the prompt only at
        their end, from nothing the messages change (``template_prompt.tail_only``; ``whole`` itself where they never
        read the flag), else rendered."""
        kind = self._syntax("_prompt_tail", template_prompt.tail_only)
        if kind == "none":
            return whole
        if kind == "tail":
            for few in (messages[-1:], messages[:2]):
                try:
                    with_it = self.render_prompt(few, tools, generation=True)
                    without = self.render_prompt(few, tools, generation=False)
                except CounterError:
                    continue
                tail = with_it[len(without):]
                if with_it.startswith(without) and whole.endswith(tail):
                    return whole[:len(whole) - len(tail)]
                break
        return self.render_prompt(messages, tools, generation=False)

    def compared_message_fields(self) -> frozenset[str]:
        """``core.counters.template_compare``; a template that cannot be read is taken to compare whole messages."""
        return self._syntax("_compared", template_compare.fields_of_templates)
