"""What surrounds a plan section in the committed prompt: its neighbours, the messages a small prompt takes
from around it, and each committed message's text as rendered."""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage
from .seams import _stand_in

TURN_MESSAGES = 32  # the longest turn a small prompt takes whole (``_turn_opened``); beyond, counted whole


class SectionContext:
    """A mixin of ``FastPlanCounts`` (its ``current``, ``message_sections``, ``sources`` and memos are set there)."""

    def _neighbours(self, name: str) -> tuple[Any, Any]:
        """The messages rendered just before and just after section ``name``."""
        at = self.message_sections.index(name)
        before = next((self.current[s][-1] for s in reversed(self.message_sections[:at]) if self.current[s]), None)
        after = next((self.current[s][0] for s in self.message_sections[at + 1:] if self.current[s]), None)
        return before, after

    def _lead(self, name: str, before: Any) -> list[ChatMessage]:
        """The message before section ``name`` for a small prompt, with the assistant message whose
        tool calls it answers (and the results between) when it is a tool result."""
        if before is None:
            return []
        lead = [before]
        if before.role == "tool":
            at = self.message_sections.index(name)
            earlier = [m for s in self.message_sections[:at] for m in self.current[s]]
            for m in reversed(earlier[:-1]):
                lead.insert(0, m)
                if m.role != "tool":
                    break
        return [_stand_in(m, self._text(m)) for m in lead]

    def _turn_opened(self, name: str, lead: list[ChatMessage]) -> list[ChatMessage] | None:
        """``lead`` (the messages before section ``name`` in a small prompt) as the whole turn it ends: every message
        from the last user message before the section, where no user message leads it and the counter may write by
        turn (``_measure_constant`` says why; a reply between them may be written by it too: Qwen3 keeps a reply's
        reasoning after the last user message only). ``None`` where that turn is longer than ``TURN_MESSAGES``."""
        if not lead or lead[0].role == "user" or not self.counter.writes_by_turn():
            return lead
        at = self.message_sections.index(name)
        earlier = [m for s in self.message_sections[:at] for m in self.current[s] if m.role != "system"]
        opened = max((i for i, m in enumerate(earlier) if m.role == "user"), default=None)
        if opened is None:
            return lead
        if len(earlier) - opened > TURN_MESSAGES:
            return None
        return [_stand_in(m, self._text(m)) for m in earlier[opened:]]

    def _trail(self, name: str | None, after: Any, after_text: str | None = None) -> list[ChatMessage]:
        """The message after section ``name`` for a small prompt, with the tool results that answer it
        when it is an assistant message with tool calls, and the rest of its turn (``_closing``)."""
        if after is None:
            return []
        taken = [after]
        if after.tool_calls and name is not None:
            at = self.message_sections.index(name)
            later = [m for s in self.message_sections[at + 1:] for m in self.current[s]]
            for m in later[1:]:
                if m.role != "tool":
                    break
                taken.append(m)
        closing = self._closing(name) if name is not None else None
        if closing is not None:
            taken += [m for m in closing if not any(m is t for t in taken)]
        return [_stand_in(after, after_text if after_text is not None else self._text(after))] + [
            _stand_in(m, self._text(m)) for m in taken[1:]]

    def _closing(self, name: str) -> tuple | None:
        """The messages after section ``name`` that a small prompt ends with, where the first is no user message and
        the counter may write by turn: up to the first user message after it, or to the prompt's end where none
        follows (the section is in the last turn). Ended on that message instead, a small prompt would end on a
        reply the whole prompt goes on after, or leave out the reply that ends it, and Qwen3 writes a reply that
        ends the prompt after a user message with an empty thinking block. ``None`` where there is no such turn, or
        where it is longer than ``TURN_MESSAGES`` (``_closes_long``: no small prompt then, the section is counted
        whole). Until a commit (kept beside the section's chain context)."""
        return self._closing_turn(name)[0]

    def _closes_long(self, name: str) -> bool:
        """Whether the turn after section ``name`` that a small prompt would end with is longer than
        ``TURN_MESSAGES`` (an agent's run of tool calls): what an entry adds is then counted whole. (Ended on the
        message after the section instead, a small prompt priced three dropped Qwen3 turns 4 tokens short beside a
        20-call turn, with no note; session 18.)"""
        return self._closing_turn(name)[1]

    def _closing_turn(self, name: str) -> tuple[tuple | None, bool]:
        key = (name, "closing")
        if key in self._ctx_memo:
            return self._ctx_memo[key]
        at = self.message_sections.index(name)
        later = [m for s in self.message_sections[at + 1:] for m in self.current[s] if m.role != "system"]
        found, long = None, False
        if later and later[0].role != "user" and self.counter.writes_by_turn():
            end = next((i for i, m in enumerate(later) if m.role == "user"), len(later) - 1)
            long = end >= TURN_MESSAGES
            found = tuple(later[:end + 1]) if 0 < end < TURN_MESSAGES else None
        self._ctx_memo[key] = (found, long)
        return found, long

    def _reply_rewritten_before(self, name: str) -> bool:
        """Whether a reply before section ``name`` or in it holds text its template writes otherwise once another reply
        follows it (``TokenCounter.rewrites_by_later_reply``: LFM2.5 keeps the reasoning of the last reply only), so
        a reply the section adds changes that one, which no small prompt holds (session 18: a tool call's reply
        priced 16 tokens where the reference says -21). Until a commit."""
        key = (name, "reply-rewritten")
        if key not in self._ctx_memo:
            rewritten = self.counter.rewrite_test()
            at = self.message_sections.index(name)
            self._ctx_memo[key] = rewritten is not None and self.counter.rewrites_by_later_reply() and any(
                m.role == "assistant" and m.content and rewritten(m.content)
                for s in self.message_sections[:at + 1] for m in self.current[s])
        return self._ctx_memo[key]

    def _systems(self, name: str) -> list[Any]:
        """The system messages of the prompt outside section ``name``."""
        return [m for s in self.message_sections if s != name for m in self.current[s] if m.role == "system"]

    def _blocks(self, name: str) -> list[Any]:
        """The passages placed into section ``name``'s first user message, in order."""
        return [m for source in self.sources.get(name, ()) for m in self.current[source]]

    def _text(self, message: Any) -> str | None:
        """A committed message's text as rendered (with its evidence blocks, if it carries them); kept
        until the next commit (what carries the blocks can only change there)."""
        if message is None:
            return None
        hit = self._text_memo.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        text = self._rendered_text(message)
        self._text_memo[id(message)] = (message, text)
        return text

    def _rendered_text(self, message: Any) -> str:
        for target in self.sources:
            if next((m for m in self.current[target] if m.role == "user"), None) is message:
                blocks = self._blocks(target)
                if blocks:
                    key = (id(message), tuple(map(id, blocks)))
                    if self._host_text[0] != key:
                        self._host_text = (key, self._carrying(message.content or "", blocks))
                    return self._host_text[1]
        return message.content or ""
