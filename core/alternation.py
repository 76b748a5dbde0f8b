"""Templates that demand strict user/assistant alternation (Mistral Nemo, Gemma 3): how plans count partial
prompts under them and send consecutive messages of one role.

A plan's partial prompt (its pinned entries alone, a section being filled) and its emitted prompt can hold two
user messages in a row (a fold note and a pinned message, a pin and the question). Such a template refuses
them: partial prompts are counted through empty filler turns, which only add tokens, and the emitted prompt
sends consecutive same-role messages joined by a blank line, as one turn.
"""
from __future__ import annotations

from .contracts import ChatMessage
from .counting import TokenCounter
from .errors import CounterError


def strict_alternation(counter: TokenCounter) -> bool:
    """Whether the counter's template refuses two user messages in a row but takes them joined."""
    known = getattr(counter, "_strict_alternation", None)
    if known is None:
        try:
            counter.count([ChatMessage(role="user", content="a"), ChatMessage(role="user", content="b")], [])
            known = False
        except CounterError:
            try:
                counter.count([ChatMessage(role="user", content="a\n\nb")], [])
                known = True
            except CounterError:
                known = False
        counter._strict_alternation = known
    return known


def merge_turns(messages: list[ChatMessage]) -> tuple[list[ChatMessage], list[int]]:
    """Consecutive user (or plain assistant) messages joined into one, texts separated by a blank line; and each
    original message's index in the joined list."""
    out: list[ChatMessage] = []
    where: list[int] = []
    for m in messages:
        last = out[-1] if out else None
        if (last is not None and m.role == last.role and m.role in ("user", "assistant")
                and not m.tool_calls and not last.tool_calls):
            joined = "\n\n".join(t for t in (last.content or "", m.content or "") if t)
            out[-1] = last.model_copy(update={"content": joined})
        else:
            out.append(m)
        where.append(len(out) - 1)
    return out, where


def countable_variants(messages: list[ChatMessage]) -> list[list[ChatMessage]]:
    """Partial prompts a template refuses, made countable: an empty user turn after a closing assistant
    message; then, for templates that demand strict user/assistant alternation (Mistral Nemo, Gemma 3), an empty
    turn of the other role between two of the same. The fillers only add tokens, so a count through them never
    understates the partial prompt; the prompt that is emitted is always counted as it is."""
    out = []
    if messages[-1].role == "assistant":
        out.append(messages + [ChatMessage(role="user", content="")])
    alternating: list[ChatMessage] = []
    for m in messages:
        previous = next((x.role for x in reversed(alternating) if x.role in ("user", "assistant")), None)
        if m.role == "assistant" and previous is None:  # a conversation must open with the user
            alternating.append(ChatMessage(role="user", content=""))
        elif m.role in ("user", "assistant") and previous == m.role:
            alternating.append(ChatMessage(role="assistant" if m.role == "user" else "user", content=""))
        alternating.append(m)
    if alternating[-1].role == "assistant":
        alternating.append(ChatMessage(role="user", content=""))
    if len(alternating) != len(messages):
        out.append(alternating)
    return out
