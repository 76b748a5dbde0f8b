"""Where tekken's pre-tokeniser always cuts a text: a count of the whole is the sum of the counts of its stretches.

Why that is exact. Tekken encodes each text span between control tokens with tiktoken: its
pre-tokeniser regex (``TEKKEN_PATTERN``) splits the text into pieces and each piece is byte-pair
encoded on its own, so a span's count is the sum of its pieces' counts. Call position ``p`` of a text
``T`` a *cut* when ``T[p-1]`` is a letter (``\\p{L}``) and ``T[p]`` is neither a letter nor a mark
(``\\p{M}``). In that pattern only the two letter alternatives match a letter, and after their one
optional leading non-letter they take letters and marks only, so the piece holding ``T[p-1]`` ends at
``p``; every other alternative stops at a letter, so no match attempt before ``p`` looks past ``p``
except to test ``T[p]`` against the letter and mark classes, which fails for that character and at the
end of a string alike; the pattern has no look-behind and no anchors. Hence the pieces of ``T`` are the
pieces of ``T[:p]`` followed by those of ``T[p:]``, and ``count(T) = count(T[:p]) + count(T[p:])``.
Several cuts split ``T`` into stretches the same way: its count is the sum of theirs.

``core.assembly_merge`` (single-user-message turns) and the span memo of ``core.counters.mistral_render``
(spans joined from several texts) count a text from its stretches between such cuts.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Callable, Sequence

TEKKEN_PATTERN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
                  r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+"
                  r"[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
JOIN = "\n\n"  # the normaliser's join of a run's messages, and of the system prompt to the last run
# How far from a seam a cut is looked for (characters); beyond it the request is counted whole.
CUT_REACH = 512
MEMO_TEXT = 1 << 12  # characters: a text's cuts are remembered up to this length (the memo holds the text)


def _letter(char: str) -> bool:
    return unicodedata.category(char)[0] == "L"


def _ends_letter(char: str) -> bool:
    """A character no letter piece continues into (unassigned code points excluded: a newer Unicode may
    have made them letters in the tokenizer's tables)."""
    category = unicodedata.category(char)
    return category[0] not in "LM" and category not in ("Cn", "Cs")


_ASCII_CUT = re.compile(r"[A-Za-z](?=[^A-Za-z])")  # in ASCII text: a letter, then a character that is no letter
_ASCII_LAST_CUT = re.compile(r"(?s).*[A-Za-z](?=[^A-Za-z])")  # matched from a place: ends at the last such cut


def first_cut(text: str, start: int = 1, reach: int = CUT_REACH) -> int | None:
    """The first cut ``p`` of ``text`` with ``start <= p <= len(text) - 1`` (both characters in ``text``)."""
    start = max(start, 1)
    if text.isascii():  # no marks and no unassigned code points: the cut is a letter before a non-letter
        found = _ASCII_CUT.search(text, start - 1, min(len(text), start + reach))
        return None if found is None else found.end()
    for p in range(start, min(len(text), start + reach)):
        if _ends_letter(text[p]) and _letter(text[p - 1]):
            return p
    return None


def last_cut(text: str, reach: int = CUT_REACH) -> int | None:
    """The last cut ``p`` of ``text`` with ``1 <= p <= len(text) - 1``."""
    stop = max(len(text) - 1 - reach, 0)
    if text.isascii():  # ASCII letters are exactly [A-Za-z]: the greedy match's end is the last cut after ``stop``
        found = _ASCII_LAST_CUT.match(text, stop)
        return None if found is None else found.end()
    for p in range(len(text) - 1, stop, -1):
        if _ends_letter(text[p]) and _letter(text[p - 1]):
            return p
    return None


def _plain(text: str) -> bool:
    """Text tiktoken encodes as written (no lone surrogates for it to replace)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Joined(tuple):
    """A span the normaliser joins from several texts (``JOIN.join(self)``), kept apart for a count from its texts."""


def cuts_of(text: str) -> tuple[int, int] | tuple[()]:
    """The first and last cut of ``text`` (each within ``CUT_REACH`` of its edge), or ``()``."""
    if text.isascii():  # ``first_cut`` and ``last_cut`` for ASCII text, without their calls (a pass over every text)
        found = _ASCII_CUT.search(text, 0, min(len(text), CUT_REACH + 1))
        if found is None:
            return ()
        last = _ASCII_LAST_CUT.match(text, max(len(text) - 1 - CUT_REACH, 0))
        return () if last is None or found.end() > last.end() else (found.end(), last.end())
    a = first_cut(text)
    b = last_cut(text) if a is not None else None
    return (a, b) if b is not None and a <= b else ()


def joined_count(parts: Joined, known: dict[str, int], count: Callable[[str], int], cuts: dict[str, tuple]
                 ) -> tuple[int, bool]:
    """The count of ``JOIN.join(parts)`` (texts tiktoken encodes as written) from the stretches between cuts: each
    text's count between its first and last cut (``cuts``' third figure where ``between_cuts`` left one, else the
    text's own count, from ``known`` or ``count``, less its stretches before the first cut and after the last),
    plus each stretch from one text's last cut across the join to the next one's first (``count``: short strings).
    A text with no cut near its edges stays inside the stretch being built. With whether every text was in
    ``known`` (or ``cuts``). ``cuts`` remembers the cuts of each text up to ``MEMO_TEXT`` characters (a longer one
    is not held)."""
    total, pending, found = 0, None, True
    for part in parts:
        at = cuts.get(part)
        if at is None:
            at = cuts_of(part)
            if len(part) <= MEMO_TEXT:
                cuts[part] = at
        if not at:
            pending = part if pending is None else pending + JOIN + part
            found = False
            continue
        a, b = at[0], at[1]
        head = part[:a]
        total += count(head if pending is None else pending + JOIN + head)
        if len(at) == 3:
            total += at[2]
        else:
            whole = known.get(part)
            if whole is None:
                found = False
                whole = count(part)
            total += whole - count(head) - count(part[b:])
        pending = part[b:]
    return total + count(pending), found


JOINED_SHORT = 512  # characters: a joined span whose other texts are shorter than this, its longest one not counted
# before, is encoded whole (``joined_whole``)


def joined_whole(parts: Sequence[str], known: dict[str, int]) -> bool:
    """Whether a joined span is counted by encoding it whole rather than from its texts' counts and the stretches
    across each join: where its longest text was never counted (a recorded result audited: each row's turns are
    new) and the others add fewer than ``JOINED_SHORT`` characters, encoding the whole costs about what encoding
    that text alone costs, and the stretches would cost more; a long system prompt is still counted once and
    reused (the join path)."""
    longest = max(parts, key=len)
    return longest not in known and sum(map(len, parts)) - len(longest) < JOINED_SHORT


def between_cuts(texts: list[str], cuts: dict[str, tuple], counts: Callable[[list[str]], list[int]]) -> list[tuple]:
    """For each of ``texts`` (texts tiktoken encodes as written), ``(first cut, last cut, count between them)``, or
    ``()`` where it has no cut near an edge (``cuts_of``); its stretch between the cuts counts the same wherever the
    text stands. The figures are kept in ``cuts`` for texts up to ``MEMO_TEXT`` characters (``joined_count`` reads
    them there), and ``counts`` (the text counts with the encoder ``joined_count``'s ``count`` uses) is asked once
    for every stretch not figured before."""
    found = list(map(cuts.get, texts))
    new = [k for k, at in enumerate(found) if at is None or len(at) == 2]
    if not new:
        return found
    spans = []
    for k in new:
        text = texts[k]
        at = found[k] or cuts_of(text)
        found[k] = at
        if at:
            spans.append(text[at[0]:at[1]])
    between = iter(counts(spans))
    if len(cuts) + len(new) >= 65536:
        cuts.clear()
    for k in new:
        at = found[k]
        if at:
            at = found[k] = (at[0], at[1], next(between))
        if len(texts[k]) <= MEMO_TEXT:
            cuts[texts[k]] = at
    return found
