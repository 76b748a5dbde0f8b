"""Repeated texts under a chat template that compares messages by value.

Mistral Nemo's template writes the tool list beside every user message equal to the last one, so what one
item adds to the count can depend on another item's text. The counter says which message fields its
template compares (``TokenCounter.compared_message_fields``); the default assembly and the plan assembler
both ask ``repeated_text`` whether their shortcuts may be trusted, and count by the reference method where not.
"""
from __future__ import annotations

from typing import Iterable

from .counters.base import ID_FIELDS
from .counting import TokenCounter
from .render import EVIDENCE_PREAMBLE


def repeated_text(counter: TokenCounter, texts: Iterable[tuple[str, str]], *, evidence_tail: str = "") -> str | None:
    """Why item costs cannot be trusted: ``counter``'s template compares texts and two of ``texts`` ((role,
    text) pairs; role ``""`` where roles should not tell texts apart) are equal, or one reads as a message
    carrying evidence blocks (starts with the evidence preamble, ends with ``evidence_tail``). ``None`` when
    the template compares no texts or nothing repeats."""
    fields = counter.compared_message_fields()
    if fields <= ID_FIELDS:
        return None
    seen: set[tuple[str, str]] = set()
    for role, content in texts:
        key = (role if fields == {"message"} else "", content)  # equal whole messages have equal roles
        if key in seen:
            return "two messages have the same text, which this chat template compares by value"
        seen.add(key)
        if content.startswith(EVIDENCE_PREAMBLE) and content.endswith(evidence_tail):
            return "a message has the text of one carrying evidence, which this chat template compares by value"
    return None


def carries(counter, messages, calls: bool = False) -> str | None:
    """Why a request or plan of ``messages`` (``calls``: it has tool calls besides them) is assembled with the
    reference method, where ``counter``'s template carries state from one message to the next
    (``TokenCounter.carried_state``) and that state moves here: the request has tool calls, or something else moves
    it (``TokenCounter.state_outside_tools``). ``None`` where it does not."""
    state = counter.carried_state()
    if not state or not (calls or counter.state_outside_tools() or any(m.tool_calls or m.role == "tool"
                                                                        for m in messages)):
        return None
    return (f"the chat template carries {', '.join(state[:3])} from one message to the next, so what a tool call "
            "(or anything) adds depends on the messages before it")


def runs_together(counter) -> str | None:
    """Why no item's cost stands apart under ``counter``: its template writes only text between messages
    (``TokenCounter.splits_between_messages``), or its tokenizer reads a message's first word otherwise in the prompt
    than alone (``TokenCounter.starts_alike_in_place``); ``None`` where neither."""
    if not counter.splits_between_messages():
        return "the chat template writes no marker token between messages, so one message's text may run into the next"
    if not counter.starts_alike_in_place():
        return ("the tokenizer reads the first word of a message's text otherwise in the prompt than alone, so what an "
                "item adds depends on the word it starts with")
    return None


def call_text_moves(counter, messages) -> str | None:
    """Why a request or plan of ``messages`` is assembled with the reference method where ``counter``'s template writes
    the text beside a tool call only while no reply without tool calls follows it
    (``TokenCounter.tool_call_text_by_later_reply``: gpt-oss keeps it as analysis until a final answer comes), and a
    message here has both: what a turn adds then depends on the turns after it (the default had dropped a turn the
    reference keeps). ``None`` where not."""
    if not any(getattr(m, "tool_calls", None) and m.content for m in messages):
        return None  # (asked first: the counter's answer takes two renders the first time)
    if not counter.tool_call_text_by_later_reply():
        return None
    return ("the chat template writes the text beside a tool call only while no final reply follows it, so what a "
            "turn adds depends on the turns after it")
