"""What a history turn of one user message adds where the template joins consecutive user messages.

mistral-common's normaliser merges a run of consecutive user messages into one (their non-empty texts
joined by a blank line, the system prompt in front of the last run), so a history turn that is a single
user message has no cost of its own: it changes the text of the run it joins. Counting each such
attempt whole costs one complete count per turn, the reference's own cost. This module predicts the
change from the text near the seam only.

Why that is exact: ``core.counters.tekken_cuts`` proves that at a *cut* (a letter, then a character that is
neither a letter nor a mark) a text's count is the sum of the counts of the text either side. The cut
depends on two characters only, so a cut inside the text both requests share splits both the same way, and the difference of two run texts is the difference of the stretches between the nearest
shared cuts around the change: the joined message with a word or so either side of it. The message's
own first and last cut split it the same way wherever it stands, so its text between them is tokenised
once (every single message in one pass) and an attempt counts only the short stretches at its edges.
These figures depend on their strings only, so they are remembered per counter (a replay at another
allowance tokenises nothing again).

It is used only for a ``mistral:`` counter whose tokenizer is a Tekkenizer with exactly this pattern
and whose one-pass renderer (``core.counters.mistral_render``) is the instruct template it mirrors,
and only when a render of a tiny request shows the join. Where no cut is found near the seam the
caller counts the request whole, as before; the builder's near-allowance and final complete counts
check every prediction, and a disagreement falls back to the reference method.
"""
from __future__ import annotations

from typing import Callable

from .contracts import ChatMessage, Request
from .counters.tekken_cuts import CUT_REACH, JOIN, TEKKEN_PATTERN, _plain, first_cut, last_cut
from .counting import TokenCounter
from .render import EVIDENCE_PREAMBLE, QUESTION_PREFIX, Selection, evidence_block


def merge_seams_for(counter: TokenCounter) -> Callable[[str], list] | None:
    """Tekken's plain encoding when ``counter`` is the instruct template this module's reasoning holds for
    (what every text span of a request is encoded with), else ``None``."""
    if counter.identity.kind != "mistral-common":
        return None
    try:
        renderer = counter._renderer()  # type: ignore[attr-defined]
        model = counter._tokenizer.instruct_tokenizer.tokenizer._model  # type: ignore[attr-defined]
        if (type(renderer).__name__ != "V3Tekken" or getattr(model, "_pat_str", None) != TEKKEN_PATTERN
                or getattr(model, "_special_tokens", None)):
            return None
        text = counter.render_text([ChatMessage(role="system", content="Sys"), ChatMessage(role="user", content="Alpha"),
                                    ChatMessage(role="user", content=""), ChatMessage(role="user", content="Beta"),
                                    ChatMessage(role="assistant", content="Gamma"),
                                    ChatMessage(role="user", content="Delta"), ChatMessage(role="user", content="Omega")],
                                   [])
    except Exception:  # noqa: BLE001 - another counter or a later mistral-common: count whole
        return None
    if f"]Alpha{JOIN}Beta[" not in text or f"]Sys{JOIN}Delta{JOIN}Omega[" not in text:
        return None
    # tiktoken's core directly where it has one: texts given here are valid UTF-8 (``_plain``), which is
    # all its wrapper checks for
    return getattr(getattr(model, "_core_bpe", None), "encode_ordinary", None) or model.encode_ordinary


class MergedUserTurns:
    """Exact marginal costs of single-user-message turns (and of the first passage beside one) from the
    text near the seam. Every method returns ``None`` where it cannot vouch for a figure."""

    def __init__(self, request: Request, counter: TokenCounter, encode: Callable[[str], list],
                 counted: Callable[[], None]) -> None:
        self.request = request
        self.turns = request.history_turns()
        self.encode, self.counted = encode, counted  # ``counted`` is told of every tokenisation
        self.text_count = counter.text_count
        n = len(self.turns)
        self.run_end = [n] * (n + 1)  # first turn at or after t that is not a single user message
        for t in range(n - 1, -1, -1):
            self.run_end[t] = self.run_end[t + 1] if len(self.turns[t]) == 1 else t
        # Seam figures depend on their strings only: remembered per counter, so a replay of the same
        # history at another allowance tokenises nothing again
        self.memo: dict[tuple, int] = counter.__dict__.setdefault("_seam_memo", {})
        self._tails: dict[bool, str | None] = {}
        self._kept: tuple = ((), None)
        self._seam_heads: dict[tuple, tuple | None] = {}
        self._middles: dict[str, tuple] | None = None

    def _count(self, text: str) -> int:
        self.counted()
        return len(self.encode(text))

    def _difference(self, key: tuple, new: str, old: str) -> int:
        """``count(new) - count(old)``, remembered under ``key`` (the strings both are made of)."""
        known = self.memo.get(key)
        if known is None:
            base = self.memo.get(("base", old))
            if base is None:
                base = self._count(old)
                self.memo[("base", old)] = base
            if len(self.memo) >= 65536:
                self.memo.clear()
            known = self.memo[key] = self._count(new) - base
        return known

    def _kept_from(self, selection: Selection) -> int | None:
        """The oldest kept turn, when the kept turns are the newest ones without a gap (as history fills)."""
        kept, n = selection.turns, len(self.turns)
        if not kept:
            return n
        if kept is self._kept[0]:  # every turn older than the first misfit is tried beside the same ones
            return self._kept[1]
        low = min(kept)
        low = low if max(kept) == n - 1 and len(kept) == n - low else None
        self._kept = (kept, low)
        return low

    def _system_tail(self, selection: Selection) -> str | None:
        """What precedes the last run's text from its last cut on: the system prompt and its join."""
        if selection.instructions not in self._tails:
            system = self.request.instructions if selection.instructions else ""
            head = system + JOIN if system else ""
            cut = last_cut(head)
            tail = head[cut:] if cut is not None else head if len(head) <= CUT_REACH else None
            self._tails[selection.instructions] = tail if tail is None or _plain(tail) else None
        return self._tails[selection.instructions]

    def _run_texts(self, low: int, selection: Selection):
        """The texts of the run a turn older than ``low`` joins, in order: the kept single messages, then
        the first message of the next turn or the current message (its preamble only, with passages)."""
        n = len(self.turns)
        end = self.run_end[low]
        for s in range(low, min(end + 1, n)):
            yield self.turns[s][0].content or ""
        if end == n:
            yield EVIDENCE_PREAMBLE if selection.evidence else (self.request.current if selection.question else "")

    def turn(self, t: int, selection: Selection) -> int | None:
        """What adding single-message turn ``t`` (older than every kept turn) to ``selection`` adds."""
        added = self.turns[t][0].content or ""
        low = self._kept_from(selection)
        if low is None or t >= low or not _plain(added):
            return None
        if not added:  # the normaliser skips an empty message
            return 0
        seam = self._seam(low, selection)
        if seam is None:
            return None
        left, head = seam
        right = "" if head is None else JOIN + head  # no head: the run had no text, the turn's is all of it
        middle = self._middle(added)
        if middle is None:
            return self._difference(("turn", left, added, head), left + added + right, left + (head or ""))
        a, b, inner = middle  # ``added`` splits at its first and last cut whatever stands either side
        return self._short(left + added[:a]) + inner + self._short(added[b:] + right) - self._short(left + (head or ""))

    def _short(self, text: str) -> int:
        """Count of a short stretch beside a seam: the counter's text count (``text_count``, the same encoding),
        so the final count's span memo finds a message's edge stretches there too (``tekken_cuts.joined_count``)."""
        return self.text_count(text)

    def _middle(self, text: str) -> tuple[int, int, int] | None:
        """The first and last cut of a single message's text and the count between them. Every such
        message is tokenised in one pass on first use (one tight loop keeps the tokenizer's tables in
        the CPU's caches; tokenising each at its attempt, between the assembly's own steps, cost twice
        as much), remembered per counter by the text."""
        if self._middles is None:
            self._middles = {}
            for turn in self.turns:
                content = turn[0].content if len(turn) == 1 else None
                if content and content not in self._middles and _plain(content):
                    known = self.memo.get(("middle", content))
                    if known is None:
                        a = first_cut(content)
                        b = last_cut(content) if a is not None else None
                        # the text's own count (the counter's text counts: a complete count's span memo finds it
                        # there) less its stretches before the first cut and after the last
                        known = (a, b, self.text_count(content) - self._short(content[:a]) - self._short(content[b:])
                                 ) if b is not None else ()
                        self.counted()
                        self.memo[("middle", content)] = known
                    self._middles[content] = known
        return self._middles.get(text) or None

    def _seam(self, low: int, selection: Selection) -> tuple[str, str | None] | None:
        """The text either side of where a turn older than ``low`` joins its run: what precedes it from the
        last cut on (the system prompt's tail where the run is the last one), and the run's text up to
        its first cut (``None`` when the run has no text)."""
        key = (low, selection.instructions, selection.question, bool(selection.evidence))
        if key in self._seam_heads:
            return self._seam_heads[key]
        last = self.run_end[low] == len(self.turns)  # the run holds the current message: the system prompt leads
        left = self._system_tail(selection) if last else ""
        found: tuple | None = None
        if left is not None:
            head, whole = "", True
            for part in self._run_texts(low, selection):
                if not part:
                    continue
                if not _plain(part) or len(head) > CUT_REACH:
                    head = None
                    break
                start = len(head)
                head = head + JOIN + part if head else part
                cut = first_cut(head, start)
                if cut is not None:
                    head, whole = head[:cut], False
                    break
            # with passages only the preamble of the current message was looked at: no cut in it, no figure
            if head is not None and not (whole and last and selection.evidence):
                found = (left, head or None)
        self._seam_heads[key] = found
        return found

    def first_passage(self, index: int, selection: Selection) -> int | None:
        """What the first passage adds when the newest kept turn is a single user message: the current
        message, joined to it, gains the preamble, the block and the question prefix before the question."""
        low = self._kept_from(selection)
        question = self.request.current if selection.question else ""
        n = len(self.turns)
        if low is None or low >= n or not question or not _plain(question):
            return None
        left, before = None, ""  # the run's text before the current message, back to its last cut
        for s in range(n - 1, low - 1, -1):
            if len(self.turns[s]) != 1:
                break  # the run starts after this turn
            text = self.turns[s][0].content or ""
            if not text:
                continue  # the normaliser skips an empty message
            if not _plain(text) or len(before) > CUT_REACH:
                return None
            joined = text + JOIN
            cut = last_cut(joined)  # no cut straddles into ``before``: the join ends in a newline
            if cut is not None:
                left = joined[cut:] + before
                break
            before = joined + before
        if left is None:  # no cut in the run's kept messages: the system prompt's tail starts the stretch
            tail = self._system_tail(selection)
            if tail is None:
                return None
            left = tail + before
        cut = first_cut(question)
        head = question[:cut] if cut is not None else question
        if cut is None and len(question) > 4 * CUT_REACH:
            return None
        block = evidence_block(self.request.evidence[index])
        if not _plain(block):
            return None
        return self._difference(("passage", left, block, head),
                                left + EVIDENCE_PREAMBLE + block + QUESTION_PREFIX + head, left + head)
