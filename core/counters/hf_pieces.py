"""An ``hf:`` counter's exact count of a rendered request from its pieces between added tokens, each counted once.

``tokenizers`` cuts its input at added tokens (``<|im_start|>``, ``<|im_end|>``...) before it normalises,
pre-tokenises and encodes what lies between, piece by piece: a text's ids are then its pieces' ids, each piece
tokenised alone, with an added token's id between them. That holds when no added token eats the whitespace
beside it (lstrip, rstrip), matches only whole words or normalised text, the normaliser and pre-tokeniser act
within a piece and never on its place in the text (no Metaspace, whose "first" scheme marks only the first
piece), and transformers passes special tokens through as such (Qwen3, Gemma 4, Nemo; not Phi-3.5, whose role
tokens strip the whitespace after them). Where it holds, a request that differs from one counted before in one
message costs that message's tokenisation; ``tests/test_hf_count_check.py`` checks the sum against ``token_ids``.

A long piece (the evidence message of a few hundred passages) is cut again at its lines where the pre-tokeniser is
one whose pre-tokens never run across a newline into an ASCII letter, digit, ``<`` or ``#`` after it (the
GPT-4-style split patterns of Qwen2/2.5/3, Llama 3 and Mistral Nemo, ``LINE_SAFE_PATTERNS``; each alternative
either holds no newline, or ends at its newlines, or is whitespace only, and the whitespace run before such a
character is matched by the newline alternative alike with or without the text after it), followed by a byte-level step
that adds no prefix space and no regex of its own, and the normaliser is none or NFC (which composes nothing
with a newline or an ASCII character): each line is then tokenised as in the whole text, and a request that
differs from one counted before by one passage costs that passage's lines.
"""
from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Callable

from ..errors import CounterError

# Normalisers and pre-tokenisers that act on each piece of text by itself.
PIECE_NORMALIZERS = frozenset({"NFC", "NFD", "NFKC", "NFKD", "Replace", "Lowercase"})
PIECE_PRE_TOKENIZERS = frozenset({"Split", "ByteLevel", "Digits", "Punctuation", "Whitespace", "WhitespaceSplit"})
CACHE_SIZE = 65536
# Split patterns (the ``Regex`` of a ``Split`` pre-tokeniser, behaviour ``Isolated``) whose pre-tokens never hold a
# newline followed by an ASCII letter, digit, "<" or "#" (checked against the real Qwen3 and Mistral Nemo tokenizers
# by ``tests/test_hf_count_check.py``).
LINE_SAFE_PATTERNS = frozenset({
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+",
})
LINE_CUT = re.compile(r"(?<=\n)(?=[A-Za-z0-9<#])")
KEEP_TOKENS = 131072  # the longest final count whose encoding is kept for the next checks (about 24 MB)
LONG_PIECE = 2048  # characters: a shorter piece is counted whole (its lines would cost more lookups than they save)


def _within_pieces(step: dict | None, allowed: frozenset) -> bool:
    if step is None:
        return True
    if step.get("type") == "Sequence":
        return all(_within_pieces(s, allowed) for s in step.get("normalizers", step.get("pretokenizers", [])))
    return step.get("type") in allowed


def added_split(tokenizer) -> Callable[[str], list[str]] | None:
    """``re.split`` at the added tokens (text, token, text, ...) where the pieces tokenise apart, else ``None``."""
    try:
        steps = _steps(tokenizer)
        added = list(tokenizer.backend_tokenizer.get_added_tokens_decoder().values())
        if not added or getattr(tokenizer, "split_special_tokens", False):
            return None
        if any(t.lstrip or t.rstrip or t.single_word or t.normalized for t in added):
            return None
        if not (_within_pieces(steps[0], PIECE_NORMALIZERS) and _within_pieces(steps[1], PIECE_PRE_TOKENIZERS)):
            return None
        tokens = sorted({t.content for t in added if t.content}, key=len, reverse=True)
        return re.compile("(" + "|".join(map(re.escape, tokens)) + ")").split  # leftmost, the longest first
    except Exception:  # noqa: BLE001 - a tokenizer whose parts cannot be read: counted whole
        return None


def _steps(tokenizer) -> list:
    backend = tokenizer.backend_tokenizer  # its parts' own JSON (the whole spec holds the vocabulary: 0.2 s)
    return [None if step is None else json.loads(step.__getstate__())
            for step in (backend.normalizer, backend.pre_tokenizer)]


def cuts_at_lines(tokenizer) -> bool:
    """Whether pieces of text may be cut at ``LINE_CUT`` and tokenised apart (see the module's docstring), from the
    tokenizer's normaliser and pre-tokeniser."""
    try:
        normalizer, pre = _steps(tokenizer)
    except Exception:  # noqa: BLE001 - parts that cannot be read: never cut
        return False
    if normalizer is not None and normalizer.get("type") != "NFC":
        return False
    if pre is None or pre.get("type") != "Sequence" or len(pre.get("pretokenizers", [])) != 2:
        return False
    split, byte_level = pre["pretokenizers"]
    return (split.get("type") == "Split" and split.get("behavior") == "Isolated" and not split.get("invert")
            and (split.get("pattern") or {}).get("Regex") in LINE_SAFE_PATTERNS
            and byte_level.get("type") == "ByteLevel" and not byte_level.get("add_prefix_space")
            and not byte_level.get("use_regex"))


def _split_of(counter):
    """The counter's split at added tokens (``added_split``, learned once), or ``None`` where pieces are not counted
    apart (its tokenizer's, or no Rust tokenizer to call directly: ``_backend``, the text counts' own guard)."""
    split = counter.__dict__.get("_split_at_added", False)
    if split is False:
        split = counter._split_at_added = added_split(counter._tokenizer)
    return None if split is None or counter._backend() is None else split


def _lines_of(counter) -> bool:
    lines = counter.__dict__.get("_cuts_at_lines")
    if lines is None:
        lines = counter._cuts_at_lines = cuts_at_lines(counter._tokenizer)
    return lines


def _pieces(split, lines: bool, text: str) -> tuple[list[str], list[int], int]:
    """The texts between added tokens (a long one cut at its lines where ``lines``), non-empty, with where each
    begins in ``text``, and how many added tokens lie between them."""
    pieces, starts, at, added = [], [], 0, 0
    for n, part in enumerate(split(text)):
        if n % 2:
            added += 1
            at += len(part)
            continue
        for piece in (LINE_CUT.split(part) if lines and len(part) >= LONG_PIECE else (part,)):
            if piece:
                pieces.append(piece)
                starts.append(at)
                at += len(piece)
    return pieces, starts, added


def _untrimmed(tokenizer) -> bool:
    """Whether tokens keep the character offsets their pre-tokens give them: no ``trim_offsets`` in the
    post-processor (where ``tokenizers`` trims a byte-level token's offsets; the pre-tokeniser's flag of that name
    is not read there), which would move a whitespace token's offsets off its piece."""
    def plain(step) -> bool:
        if step is None:
            return True
        if step.get("type") == "Sequence":
            return all(map(plain, step.get("processors", [])))
        return not step.get("trim_offsets", False)

    try:
        processor = tokenizer.backend_tokenizer.post_processor
        return plain(None if processor is None else json.loads(processor.__getstate__()))
    except Exception:  # noqa: BLE001 - parts that cannot be read: nothing remembered
        return False


def _untrimmed_of(counter) -> bool:
    known = counter.__dict__.get("_untrimmed")
    if known is None:
        known = counter._untrimmed = _untrimmed(counter._tokenizer)
    return known


def keep_encoding(counter, text: str, encoding, total: int) -> None:
    """Keep ``count_whole``'s last tokenisation (its text, encoding and length) for ``count_pieces`` to read its
    pieces' counts off when a check finds pieces it has not counted (``_remember``), where it holds at most
    ``KEEP_TOKENS`` tokens (an encoding costs about 185 bytes a token) and its pieces are counted apart; reading them
    costs a tenth of the tokenisation, paid only where a check follows."""
    if total <= KEEP_TOKENS and _split_of(counter) is not None and _untrimmed_of(counter):
        counter._last_encoding = (text, encoding, total)
    else:
        counter.__dict__.pop("_last_encoding", None)


def _remember(counter, text: str, encoding, total: int) -> None:
    """Cache the counts of the pieces of ``text`` read off its ``encoding`` (``count_whole``'s tokenisation): the
    near-allowance checks of the next assembly (a replay's, a what-if step's) then tokenise only the pieces the last
    final request did not hold. A piece's count is the index of the token at the character after it (or the
    encoding's length at the text's end) less the index of the token at its first character (``char_to_token``; no
    token runs across a piece's edge where ``count_pieces`` applies); nothing is cached unless the counts and the
    added tokens add up to the encoding's length."""
    split = _split_of(counter)
    pieces, starts, added = _pieces(split, _lines_of(counter), text)
    token_at, end = encoding.char_to_token, len(text)
    first = [token_at(a) for a in starts]
    if None in first:
        return
    after = first[1:] + [total]  # the next piece's first token, where it begins right after this one
    for n, (piece, a) in enumerate(zip(pieces, starts)):
        if a + len(piece) != (starts[n + 1] if n + 1 < len(starts) else end):  # an added token after it
            after[n] = token_at(a + len(piece))
            if after[n] is None:
                return
    counts = [b - a for a, b in zip(first, after)]
    if sum(counts) + added != total or min(counts, default=1) < 1:
        return
    cache = counter.__dict__.setdefault("_piece_counts", {})
    if len(cache) + len(pieces) >= CACHE_SIZE:
        cache.clear()
    cache.update(zip(pieces, counts))


def count_pieces(counter, rendered: Callable[[], str]) -> int | None:
    """The count of the text ``rendered()`` gives, from its pieces' counts (cached on ``counter``); ``None`` where
    the counter's tokenizer's pieces do not tokenise apart (learned once per counter)."""
    split = _split_of(counter)
    if split is None:
        return None
    texts, _, added = _pieces(split, _lines_of(counter), rendered())
    cache = counter.__dict__.setdefault("_piece_counts", {})
    known = {t: cache.get(t) for t in dict.fromkeys(texts)}
    new = [t for t, value in known.items() if value is None]
    last = counter.__dict__.pop("_last_encoding", None) if new else None
    if last is not None:  # the pieces of the last final count, read off its encoding
        _remember(counter, *last)
        known.update((t, cache.get(t)) for t in new)
        new = [t for t in new if known[t] is None]
    if new:  # one call for the pieces not counted before (one call per piece costs transformers' Python each time)
        try:
            counts = [len(e.ids) for e in counter._backend().encode_batch(new, add_special_tokens=False)]
        except BaseException as exc:  # a Rust panic is no Exception
            if type(exc).__name__ != "PanicException":
                raise
            raise CounterError(f"{counter.name}: the tokenizer failed on this request ({str(exc)[:200]})") from None
        known.update(zip(new, counts))
        if len(cache) + len(new) >= CACHE_SIZE:
            cache.clear()
        cache.update(zip(new, counts))
        counter.item_counts += len(new)
    return added + sum(known[t] for t in texts)
