"""An ``hf:`` counter's exact count of a rendered request from its pieces between added tokens, each counted once.

``tokenizers`` cuts its input at added tokens (``<|im_start|>``, ``<|im_end|>``...) before it normalises,
pre-tokenises and encodes what lies between, piece by piece: a text's ids are then its pieces' ids, each piece
tokenised alone, with an added token's id between them. That holds when no added token eats the whitespace
beside it (lstrip, rstrip), matches only whole words or normalised text, the normaliser and pre-tokeniser act
within a piece and never on its place in the text (no Metaspace, whose "first" scheme marks only the first
piece), and transformers passes special tokens through as such (Qwen3, Gemma 4, Nemo; not Phi-3.5, whose role
tokens strip the whitespace after them). Where it holds, a request that differs from one counted before in one
message costs that message's tokenisation; ``tests/test_hf_count_check.py`` checks the sum, and the ids of
``encode_by_pieces``, against transformers' own ``apply_chat_template(..., tokenize=True)``.

A long piece (the evidence message of a few hundred passages) is cut again at its lines where the pre-tokeniser is
one whose pre-tokens never run across a newline into an ASCII letter, digit, ``<`` or ``#`` after it (the
GPT-4-style split patterns of Qwen2/2.5/3, Llama 3 and Mistral Nemo, ``LINE_SAFE_PATTERNS``; each alternative
either holds no newline, or ends at its newlines, or is whitespace only, and the whitespace run before such a
character is matched by the newline alternative alike with or without the text after it), followed by a byte-level step
that adds no prefix space and no regex of its own, and the normaliser is none or NFC (which composes nothing
with a newline or an ASCII character): each line is then tokenised as in the whole text, and a request that
differs from one counted before by one passage costs that passage's lines. Such a piece is cut first where an
opening tag begins a line (``BLOCK_CUT``: one evidence block a piece), which finds a passage's block where the assembly
counted it alone.

The complete count (``token_ids``, ``count_whole``) is made this way too: every distinct piece tokenised in one
call, the ids put together in order. ``tokenizers`` slows per character as one text grows (Qwen3: 0.6 us a
character at 0.4 MB, 0.9 at 3.8 MB), its pieces do not (0.4), so a request of a million tokens counts in linear
time. The default assembly's final count and probes (``count_known``) tokenise only the pieces no check, probe or
text count has counted before.
"""
from __future__ import annotations

import json
import re
from typing import Callable

from ..errors import CounterError

# Normalisers and pre-tokenisers that act on each piece of text by itself.
PIECE_NORMALIZERS = frozenset({"NFC", "NFD", "NFKC", "NFKD", "Replace", "Lowercase"})
UNICODE_FORMS = frozenset({"NFC", "NFD", "NFKC", "NFKD"})  # none changes an ASCII text
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
BLOCK_CUT = re.compile(r"(?<=\n)(?=<[^/])")  # the line cuts before an opening tag: where each ``<evidence>`` block
# begins (a closing tag begins a line inside the block; escaping leaves no other ``<`` in a passage)
BATCH = 32  # texts a call when only their counts are wanted (``_lengths``)
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


def keeps_ascii(counter) -> bool:
    """Whether the counter's normaliser leaves ASCII text as it is (Unicode normal forms, alone or in sequence: in
    every version of Unicode), read once per counter."""
    known = counter.__dict__.get("_keeps_ascii")
    if known is None:
        try:
            step = _steps(counter._tokenizer)[0]
        except Exception:  # noqa: BLE001 - parts that cannot be read: normalised to know
            step = {}
        known = counter._keeps_ascii = step is None or _within_pieces(step, UNICODE_FORMS)
    return known


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


def _split_parts(split, text: str):
    """``split(text)`` one part at a time (text, token, text, ...): a long render's parts are not all held at once
    (together they are a second copy of it), where ``split`` is a compiled pattern's ``split``."""
    pattern = getattr(split, "__self__", None)
    if not isinstance(pattern, re.Pattern) or pattern.groups != 1:
        yield from split(text)
        return
    at = 0
    for match in pattern.finditer(text):
        start, end = match.span()
        yield text[at:start]
        yield text[start:end]
        at = end
    yield text[at:]


def _blocks(split, lines: bool, text: str):
    """The text between added tokens as ``(block, None)`` (a long one cut where an opening tag begins a line, where
    ``lines``) and each added token as ``(None, token)``, in order."""
    for n, part in enumerate(_split_parts(split, text)):
        if n % 2:
            yield None, part
        else:
            yield from ((block, None) for block in (BLOCK_CUT.split(part) if lines and len(part) >= LONG_PIECE
                                                    else (part,)))


def _lines(lines: bool, block: str) -> list[str] | tuple[str]:
    """A block cut at its lines where it is long and ``lines`` (empty pieces left for the caller to skip)."""
    return LINE_CUT.split(block) if lines and len(block) >= LONG_PIECE else (block,)


def _parts(split, lines: bool, text: str):
    """``_blocks`` with each block cut at its lines (``_lines``), no empty piece: ``(piece, None)`` or
    ``(None, token)``, in order."""
    for block, token in _blocks(split, lines, text):
        if token is not None:
            yield None, token
        else:
            yield from ((piece, None) for piece in _lines(lines, block) if piece)


def _encode(counter, texts: list[str]) -> list:
    """The Rust tokenizer's encodings of ``texts`` in one call (one call per text costs the binding's overhead each
    time; no offsets where the tokenizer can leave them out); a Rust panic is the request refused, loudly."""
    backend = counter._backend()
    encode = getattr(backend, "encode_batch_fast", None) or backend.encode_batch
    try:
        return encode(texts, add_special_tokens=False)
    except BaseException as exc:  # a Rust panic is no Exception
        if type(exc).__name__ != "PanicException":
            raise
        raise CounterError(f"{counter.name}: the tokenizer failed on this request ({str(exc)[:200]})") from None


def _lengths(counter, texts: list[str]) -> list[int]:
    """The token counts of ``texts``, tokenised ``BATCH`` at a time: the binding's encodings of a whole render's
    pieces, held at once, weighed as much as the render itself."""
    if len(texts) <= BATCH:
        return list(map(len, _encode(counter, texts)))
    out: list[int] = []
    for at in range(0, len(texts), BATCH):
        out.extend(map(len, _encode(counter, texts[at:at + BATCH])))
    return out


def _cache(counter, counts: dict[str, int]) -> None:
    cache = counter.__dict__.setdefault("_piece_counts", {})
    if len(cache) + len(counts) >= CACHE_SIZE:
        cache.clear()
    cache.update(counts)


def _added_ids(counter) -> dict[str, int]:
    known = counter.__dict__.get("_added_token_ids")
    if known is None:
        decoder = counter._backend().get_added_tokens_decoder()
        known = counter._added_token_ids = {str(t.content): int(i) for i, t in decoder.items()}
    return known


def encode_by_pieces(counter, text: str, *, want_ids: bool, reuse: bool = False
                     ) -> tuple[int, list[int] | None] | None:
    """A complete tokenisation of a rendered ``text``: its pieces between added tokens (and a long one's lines), each
    distinct one tokenised once, in one call, with the added tokens' ids between them: the ids the whole text gives
    where ``count_pieces`` applies (``None`` elsewhere), in time linear in the text (``tokenizers`` slows per
    character as one text grows: 0.6 us a character at 0.4 MB, 0.9 at 3.8 MB on Qwen3, against 0.4 for its lines).
    The pieces' counts are cached for the next near-allowance checks (a replay's, a what-if step's). ``reuse``
    (a count without ids): the pieces counted before are not tokenised again (``count_known``)."""
    split = _split_of(counter)
    if split is None:
        return None
    if reuse and not want_ids:
        return count_known(counter, split, text, tally=False), None
    parts = list(_parts(split, _lines_of(counter), text))
    distinct = list(dict.fromkeys(piece for piece, _ in parts if piece is not None))
    encodings = dict(zip(distinct, _encode(counter, distinct)))
    _cache(counter, {piece: len(e) for piece, e in encodings.items()})
    added = sum(1 for piece, _ in parts if piece is None)
    total = added + sum(len(encodings[piece]) for piece, _ in parts if piece is not None)
    if not want_ids:
        return total, None
    ids, token_id = [], _added_ids(counter)
    for piece, token in parts:
        if piece is None:
            ids.append(token_id[token])
        else:
            ids.extend(encodings[piece].ids)
    return total, ids


def count_known(counter, split, text: str, *, tally: bool) -> int:
    """The count of a rendered ``text`` from its pieces, those counted before looked up. A long piece is cut first
    where an opening tag begins a line (``BLOCK_CUT``, one of the line cuts: an evidence block is then one piece),
    and such a piece is looked up among the pieces counted before and among the counter's text counts
    (``_text_cache``, where ``counter.texts_as_pieces``: a text counted alone with the same call, as the assembly
    counts each passage's block); one not found is cut at its lines where long (``_lines``), and the
    pieces not counted before are tokenised in one call (``tally``: counted in ``item_counts``) and cached."""
    lines = _lines_of(counter)
    cache = counter.__dict__.setdefault("_piece_counts", {})
    texts = counter._text_cache if getattr(counter, "texts_as_pieces", False) else {}
    total, unknown = 0, []  # one block at a time: only those not counted before are kept (block_counts' sum)
    for block, token in _blocks(split, lines, text):
        if token is not None:
            total += 1
            continue
        hit = cache.get(block)
        if hit is None:
            hit = texts.get(block)
        if hit is not None:
            total += hit
        elif block:
            unknown.append(block)
    if unknown:
        pieces = [list(_lines(lines, block)) for block in unknown]
        known = _new_counts(counter, cache, [piece for block in pieces for piece in block], tally)
        total += sum(known[piece] for block in pieces for piece in block if piece)
    return total


def _new_counts(counter, cache: dict, pieces: list[str], tally: bool) -> dict[str, int]:
    """The counts of ``pieces`` (none empty skipped), those not counted before tokenised in one call and cached."""
    known = {piece: cache.get(piece) for piece in dict.fromkeys(pieces) if piece}
    new = [piece for piece, value in known.items() if value is None]
    if new:  # one call for the pieces not counted before
        counts = dict(zip(new, _lengths(counter, new)))
        known.update(counts)
        _cache(counter, counts)
        if tally:
            counter.item_counts += len(new)
    return known


def block_counts(counter, split, text: str, *, tally: bool) -> list[tuple[str, int]]:
    """``count_known``'s parts of ``text`` in order, each with its count: every block between added tokens (a long one
    cut where an opening tag begins a line) and every added token (1), their texts joined giving ``text``."""
    lines = _lines_of(counter)
    cache = counter.__dict__.setdefault("_piece_counts", {})
    texts = counter._text_cache if getattr(counter, "texts_as_pieces", False) else {}
    out: list[tuple[str, int | None]] = []
    unknown = []
    for block, token in _blocks(split, lines, text):
        if token is not None:
            out.append((token, 1))
            continue
        hit = cache.get(block)
        if hit is None:
            hit = texts.get(block)
        out.append((block, hit if hit is not None or not block else None))
        if hit is None and block:
            unknown.extend(_lines(lines, block))
    known = _new_counts(counter, cache, unknown, tally)
    return [(part, count if count is not None else (0 if not part else
                                                       sum(known[piece] for piece in _lines(lines, part) if piece)))
            for part, count in out]


def piece_bounds(counter, text: str) -> tuple[list[int], list[int]] | None:
    """Where the parts of a rendered ``text`` (``block_counts``') begin, then where it ends, with the tokens before
    each of those places: the tokens of ``text`` end there (its pieces tokenise apart: ``count_known``'s premise), so
    the tokens before such a place are counted without tokenising ``text`` again with offsets. A place after a part
    of no tokens is left out (no token ends there). ``None`` where the pieces are not counted apart."""
    split = _split_of(counter)
    if split is None:
        return None
    bounds, before, at, total = [0], [0], 0, 0
    for part, count in block_counts(counter, split, text, tally=False):
        at, total = at + len(part), total + count
        if count:
            bounds.append(at)
            before.append(total)
    return (bounds, before) if at == len(text) else None


def count_pieces(counter, rendered: Callable[[], str]) -> int | None:
    """The count of the text ``rendered()`` gives, from its pieces' counts (cached on ``counter``: ``count_known``);
    ``None`` where the counter's tokenizer's pieces do not tokenise apart (learned once per counter)."""
    split = _split_of(counter)
    if split is None:
        return None
    return count_known(counter, split, rendered(), tally=True)
