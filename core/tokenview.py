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
    widened: bool = False  # the span takes in text beside it that no token's offsets cover


def token_view(counter: TokenCounter, text: str) -> list[TokenPiece]:
    """``text``'s tokens under ``counter``, in order, their texts together the whole ``text``. Text that no token's
    offsets cover goes with the token before it (the first token takes what comes before it), marked ``widened``:
    Qwen3's offsets end a character early where its normaliser composes a combining mark into the token before an
    added token ("e" + U+0301 is one token "é"), and a normaliser may drop a character. Raises ``CapabilityError`` for
    a counter that cannot list its tokens (a slow Python tokenizer)."""
    spans = counter.text_token_spans(text)
    pieces = []
    for n, (token_id, start, end) in enumerate(spans):
        neighbours = spans[max(0, n - 1):n] + spans[n + 1:n + 2]
        shared = any(other[1] < end and start < other[2] for other in neighbours)
        until = spans[n + 1][1] if n + 1 < len(spans) else len(text)  # where the next token starts
        wide_start, wide_end = (0 if n == 0 else start), max(end, until)
        pieces.append(TokenPiece(token_id, wide_start, wide_end, text[wide_start:wide_end], shared,
                                 (wide_start, wide_end) != (start, end)))
    return pieces
