"""A text as the counter's tokens: boundaries, ids and the text each stands for (what tiktokenizer shows),
so a surprising count can be explained. The tokens are those ``TokenCounter.text_token_count`` counts."""
from __future__ import annotations

from dataclasses import dataclass

from .counters.base import TokenCounter


@dataclass(frozen=True)
class TokenPiece:
    id: int
    start: int  # character offsets into the text
    end: int
    text: str  # text[start:end]
    shared: bool = False  # part of one character, which its neighbour's span also covers


def token_view(counter: TokenCounter, text: str) -> list[TokenPiece]:
    """``text``'s tokens under ``counter``, in order. Raises ``CapabilityError`` for a counter that cannot
    list its tokens (a slow Python tokenizer)."""
    spans = counter.text_token_spans(text)
    pieces = []
    for n, (token_id, start, end) in enumerate(spans):
        neighbours = spans[max(0, n - 1):n] + spans[n + 1:n + 2]
        shared = any(other[1] < end and start < other[2] for other in neighbours)
        pieces.append(TokenPiece(token_id, start, end, text[start:end], shared))
    return pieces
