"""A message text's edges: the whitespace a turn's shape records (``core.assembly_fast`` for plain turns,
``core.assembly_tools`` for turns with tool calls), and what of its ends can reach across a seam into the text
beside it, the key a plan entry's constant is learned by (``core.plans``) and a counter's probes group texts by
(``core.counters.template_probes``)."""
from __future__ import annotations

import functools
import unicodedata

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


SEAM_CHARS = 64  # text kept on each side of a seam in a constant's key (to the next whitespace)


def _head(text: str | None, size: int = SEAM_CHARS) -> str:
    """The start of ``text``: ``size`` characters, then on to the next whitespace (so the piece of
    text touching the seam is whole)."""
    if text is None or len(text) <= size:
        return text or ""
    end = next((i for i in range(size, len(text)) if text[i].isspace()), len(text))
    return text[:end]


def _tail(text: str | None, size: int = SEAM_CHARS) -> str:
    """The end of ``text``: ``size`` characters, back to a whitespace character (kept)."""
    if text is None or len(text) <= size:
        return text or ""
    start = next((i for i in range(len(text) - size, -1, -1) if text[i].isspace()), 0)
    return text[start:]


SEAM_RUN = 16  # a longer run of punctuation at a seam puts the text around it in the key


@functools.lru_cache(maxsize=65536)
def _seam_end(text: str | None) -> tuple[str, str]:
    """What of a text's end can reach across a seam: its closing run of characters that are neither
    letters nor digits (a pre-tokenizer may join it with the separator after it) and the class of
    the character before that run. A long run stands for itself with the text before it."""
    text = text or ""
    i = len(text)
    while i > 0 and not text[i - 1].isalnum():
        i -= 1
    run = text[i:]
    if len(run) > SEAM_RUN:
        return ("text", _tail(text))
    return (run, _char_class(text[i - 1]) if i > 0 else "")


@functools.lru_cache(maxsize=65536)
def _seam_start(text: str | None) -> tuple[str, str]:
    """What of a text's start can reach across a seam (see ``_seam_end``)."""
    text = text or ""
    i = 0
    while i < len(text) and not text[i].isalnum():
        i += 1
    run = text[:i]
    if len(run) > SEAM_RUN:
        return ("text", _head(text))
    return (run, _char_class(text[i]) if i < len(text) else "")


def _char_class(char: str) -> str:
    if char.isspace():
        return "space"
    category = unicodedata.category(char)
    return category[0] if category[0] in "LN" else category
