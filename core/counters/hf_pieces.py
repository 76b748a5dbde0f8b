"""An ``hf:`` counter's exact count of a rendered request from its pieces between added tokens, each counted once.

``tokenizers`` cuts its input at added tokens (``<|im_start|>``, ``<|im_end|>``...) before it normalises,
pre-tokenises and encodes what lies between, piece by piece: a text's ids are then its pieces' ids, each piece
tokenised alone, with an added token's id between them. That holds when no added token eats the whitespace
beside it (lstrip, rstrip), matches only whole words or normalised text, the normaliser and pre-tokeniser act
within a piece and never on its place in the text (no Metaspace, whose "first" scheme marks only the first
piece), and transformers passes special tokens through as such (Qwen3, Gemma 4, Nemo; not Phi-3.5, whose role
tokens strip the whitespace after them). Where it holds, a request that differs from one counted before in one
message costs that message's tokenisation; ``tests/test_hf_count_check.py`` checks the sum against ``token_ids``.
"""
from __future__ import annotations

import json
import re
from typing import Callable

from ..errors import CounterError

# Normalisers and pre-tokenisers that act on each piece of text by itself.
PIECE_NORMALIZERS = frozenset({"NFC", "NFD", "NFKC", "NFKD", "Replace", "Lowercase"})
PIECE_PRE_TOKENIZERS = frozenset({"Split", "ByteLevel", "Digits", "Punctuation", "Whitespace", "WhitespaceSplit"})
CACHE_SIZE = 65536


def _within_pieces(step: dict | None, allowed: frozenset) -> bool:
    if step is None:
        return True
    if step.get("type") == "Sequence":
        return all(_within_pieces(s, allowed) for s in step.get("normalizers", step.get("pretokenizers", [])))
    return step.get("type") in allowed


def added_split(tokenizer) -> Callable[[str], list[str]] | None:
    """``re.split`` at the added tokens (text, token, text, ...) where the pieces tokenise apart, else ``None``."""
    try:
        backend = tokenizer.backend_tokenizer  # its parts' own JSON (the whole spec holds the vocabulary: 0.2 s)
        steps = [None if step is None else json.loads(step.__getstate__())
                 for step in (backend.normalizer, backend.pre_tokenizer)]
        added = list(backend.get_added_tokens_decoder().values())
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


def count_pieces(counter, tokenizer, rendered: Callable[[], str]) -> int | None:
    """The count of the text ``rendered()`` gives, from its pieces' counts (cached on ``counter``); ``None`` where
    ``tokenizer``'s pieces do not tokenise apart (learned once per counter)."""
    split = counter.__dict__.get("_split_at_added", False)
    if split is False:
        split = counter._split_at_added = added_split(tokenizer)
    backend = counter._backend()  # the Rust tokenizer, where calling it gives what ``encode`` gives (no truncation,
    if split is None or backend is None:  # no padding set): the text counts' own guard
        return None
    parts = split(rendered())
    texts, cache = parts[::2], counter.__dict__.setdefault("_piece_counts", {})
    known = {t: cache.get(t) for t in dict.fromkeys(texts) if t}
    new = [t for t, value in known.items() if value is None]
    if new:  # one call for the pieces not counted before (one call per piece costs transformers' Python each time)
        try:
            counts = [len(e.ids) for e in backend.encode_batch(new, add_special_tokens=False)]
        except BaseException as exc:  # a Rust panic is no Exception
            if type(exc).__name__ != "PanicException":
                raise
            raise CounterError(f"{counter.name}: the tokenizer failed on this request ({str(exc)[:200]})") from None
        known.update(zip(new, counts))
        if len(cache) + len(new) >= CACHE_SIZE:
            cache.clear()
        cache.update(zip(new, counts))
        counter.item_counts += len(new)
    return len(parts) // 2 + sum(known[t] for t in texts if t)
