"""The small prompts a plan's item model counts to learn what an entry adds beside its neighbours."""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage
from ..errors import CounterError, TemplateRefused


def _refused(counter: Any) -> TemplateRefused:
    """A probe's refusal known without counting it (the message is never shown: a probe only asks whether)."""
    return TemplateRefused(counter.name, "refused by the order of its roles")


class SmallPrompts:
    """A mixin of ``FastPlanCounts`` (its ``counter`` and ``probe_counts`` are set there)."""

    def _count_small(self, messages: list[ChatMessage]) -> int:
        """A small prompt counted as ``total`` counts one (an empty user turn after a final assistant
        message the template refuses to end on). A prompt the template surely refuses (``refuses_surely``: Mistral
        refuses a tool result after a system message whatever it holds) is not counted to learn that."""
        if not messages:
            messages = [ChatMessage(role="user", content="")]
        before = self.counter.full_counts
        try:
            if not self.counter.refuses_surely(messages):
                try:
                    return self.counter.count_reusing_texts(messages, [])
                except CounterError:
                    if messages[-1].role != "assistant":
                        raise
            elif messages[-1].role != "assistant":
                raise _refused(self.counter)
            closed = messages + [ChatMessage(role="user", content="")]
            if self.counter.refuses_surely(closed):
                raise _refused(self.counter)
            return self.counter.count_reusing_texts(closed, [])
        finally:
            self.probe_counts += self.counter.full_counts - before

    def _small_or_none(self, messages: list[ChatMessage]) -> int | None:
        """``_count_small``, ``None`` where the template refuses the small prompt."""
        try:
            return self._count_small(messages)
        except CounterError:
            return None
