"""What an ``hf:`` counter reads from its chat templates (a mixin of ``HFCounter``, whose ``_templates`` it reads):
the texts they rewrite by what they hold, the state they carry from message to message, whether a later reply
rewrites an earlier one, whether they write a marker token between messages, and the message fields they compare;
each worked out once per counter."""
from __future__ import annotations

from . import template_compare, template_rewrites, template_state


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
        return self._syntax("_later", lambda _: template_state.later_reply_rewrites(self))

    def reasoning_by_position(self) -> bool:
        return self._syntax("_position", lambda _: template_state.reasoning_by_position(self))

    def splits_between_messages(self) -> bool:
        return self._syntax("_splits", lambda _: template_state.splits_between_messages(self))

    def compared_message_fields(self) -> frozenset[str]:
        """``core.counters.template_compare``; a template that cannot be read is taken to compare whole messages."""
        return self._syntax("_compared", template_compare.fields_of_templates)
