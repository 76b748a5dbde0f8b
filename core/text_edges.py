"""The whitespace at a message's edges, which a turn's shape records (``core.assembly_fast`` for plain turns,
``core.assembly_tools`` for turns with tool calls)."""
from __future__ import annotations

# Longer whitespace runs at a kept edge give no shape: such a turn is probed beside its neighbour.
MAX_EDGE = 8


def edges(text: str) -> tuple[str, str]:
    """``text``'s leading and trailing whitespace (all of it the leading edge when it is only whitespace)."""
    if text and not text[0].isspace() and not text[-1].isspace():  # most texts: no edge to copy the body to find
        return "", ""
    body = text.strip()
    if not body:
        return text, ""
    start = text.index(body[0])
    return text[:start], text[start + len(body):]
