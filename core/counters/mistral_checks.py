"""``MistralRequestValidatorV3``'s checks (test mode) on our own messages, for the one-pass renderer
(``core.counters.mistral_render.V3Tekken``): as strict as mistral-common or stricter, so a request it refuses is
never answered by the one pass (mistral-common's own path then accepts or refuses it in its words)."""
from __future__ import annotations

import json
import re
from typing import Any, Sequence

from ..contracts import ChatMessage

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CALL_ID = re.compile(r"[a-zA-Z0-9]{9}")
_FOLLOWS = {"system": {"user", "assistant", "system"}, "user": {"assistant", "system", "user"},
            "assistant": {"assistant", "user", "tool"}, "tool": {"assistant", "tool", "user"}}


class Unsure(Exception):
    """This path cannot vouch for the request: run mistral-common's own."""


def knows_structure(validator: Any) -> bool:
    """Whether ``validator`` (mistral-common's request validator, as its tokenizer holds it) is one of the package's
    own, in test or serving mode: its message-list structure check, run first on every request, is then the one
    ``refused_by_structure`` follows. False for another (another module, a mode not named here): that one is asked."""
    from mistral_common.protocol.instruct.validator import MistralRequestValidator, ValidationMode

    klass = type(validator)
    return (isinstance(validator, MistralRequestValidator) and klass.__module__ == MistralRequestValidator.__module__
            and klass._validate_message_order is MistralRequestValidator._validate_message_order
            and getattr(validator, "_mode", None) in (ValidationMode.test, ValidationMode.serving))


def refused_by_structure(roles: Sequence[str]) -> bool:
    """Whether such a validator refuses every request whose messages have these roles, whatever their texts, tool
    calls and tools: a single message that is neither user nor system, a last message from the assistant, a role
    after one it may not follow. (``V3Checks._validate`` applies the same rules inside its one pass over a request,
    on the same ``_FOLLOWS``: a count's hot path, where a second pass for the roles would cost more than it saves.)"""
    if len(roles) == 1:
        return roles[0] not in ("user", "system")
    if len(roles) > 1 and roles[-1] == "assistant":
        return True
    return any(b not in _FOLLOWS.get(a, ()) for a, b in zip(roles, roles[1:]))


class V3Checks:
    """The validator's checks; ``_map_id`` (mistral-common's tool call id mapping) and ``_passed`` (the names and ids
    already checked) are the renderer's."""

    def _validate(self, messages: Sequence[ChatMessage]) -> None:
        """``MistralRequestValidatorV3`` in test mode, as strict or stricter: a request it refuses is never
        answered here."""
        if not messages:
            raise Unsure("no messages")
        if len(messages) == 1 and messages[0].role not in ("user", "system"):
            raise Unsure("a single message that is not user or system")
        if len(messages) > 1 and messages[-1].role == "assistant":
            raise Unsure("ends with an assistant message")
        previous = None
        expected = 0
        for n, m in enumerate(messages):
            if previous is not None and m.role not in _FOLLOWS[previous]:
                raise Unsure(f"{m.role} after {previous}")
            if n:
                if m.role == "tool":
                    expected -= 1
                elif m.role == "assistant":
                    if expected:
                        raise Unsure("calls and results do not pair")
                    if m.tool_calls:
                        expected = len(m.tool_calls)
            previous = m.role
            if m.role == "assistant":
                if bool(m.content) == bool(m.tool_calls):
                    raise Unsure("an assistant message needs text or tool calls, not both")
                for c in m.tool_calls:
                    if (c.name, c.id) not in self._passed:  # each name and id checked once per renderer
                        if not _NAME.fullmatch(c.name) or not _CALL_ID.fullmatch(self._map_id(c.id)):
                            raise Unsure("a tool call name or id mistral-common checks")
                        self._remember_passed((c.name, c.id))
            elif m.role == "tool" and m.tool_call_id not in self._passed:
                if not _CALL_ID.fullmatch(self._map_id(m.tool_call_id or "")):
                    raise Unsure("a tool result id mistral-common checks")
                self._remember_passed(m.tool_call_id)
            elif m.role in ("user", "system") and m.tool_calls:
                raise Unsure("tool calls on a user or system message")


    def _remember_passed(self, key) -> None:
        if len(self._passed) >= 65536:
            self._passed.clear()
        self._passed.add(key)


# the normaliser's text forms, which the one-pass renderer and the variant counts write as it does
def _joined(group: Sequence[ChatMessage]) -> str:
    """The normaliser's join of a run's texts: empty ones skipped, the rest joined by a blank line."""
    if len(group) == 1:  # most runs: the one text as it is (what the join of one text gives)
        return group[0].content or ""
    return "\n\n".join(m.content for m in group if m.content)


def _normalised(content: str | None) -> str:
    """``InstructRequestNormalizer._normalize_json_content``."""
    if not content:
        return "{}"
    try:
        return json.dumps(json.loads(content), ensure_ascii=False)
    except json.JSONDecodeError:
        return content


def _parsed(content: str) -> Any:
    """``InstructTokenizerV2._parse_json_content``."""
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return content
