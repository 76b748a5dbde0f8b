"""One pass over a text for any of a tokenizer's special spellings.

A tokenizer may hold hundreds of them (mistral-common's SentencePiece files have about 750); finding
each with ``str.find`` costs one scan of the text per spelling. A trie compiled into one regular
expression tells in a single scan whether any of them occurs, so the checks that need the spans
(``literal_spans``) or the tokenizer itself run only on the rare text that holds one.
"""
from __future__ import annotations

import re
from typing import Sequence


def _trie_pattern(spellings: Sequence[str]) -> str:
    trie: dict = {}
    for word in spellings:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def build(node: dict) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body  # a shorter spelling is already a match

    return build(trie)


class SpellingScan:
    """``any_in(text)``: whether ``text`` holds at least one of ``spellings`` (exactly ``str.find``'s answer)."""

    def __init__(self, spellings: Sequence[str]) -> None:
        words = sorted({s for s in spellings if s})
        self._pattern = re.compile(_trie_pattern(words), re.DOTALL) if words else None

    def any_in(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(text) is not None
