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
from .counters.tekken_cuts import CUT_REACH, JOIN, TEKKEN_PATTERN, _plain, between_cuts, first_cut, last_cut
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
    text near the seam. Every method returns ``None`` where it cannot vouch for a figure.

    The turns are figured a stretch of a run at a time (``_table``), not one by one: history fills newest
    first, so the turn asked next is the one before the last kept (its seam the kept turn's first word), and
    once a turn does not fit every older one is asked beside the same kept turns (one seam for all); each
    stretch's seam texts are counted in one call (``TokenCounter.text_counts``)."""

    def __init__(self, request: Request, counter: TokenCounter, encode: Callable[[str], list],
                 counted: Callable[[], None]) -> None:
        self.request = request
        self.turns = request.history_turns()
        self.encode, self.counted = encode, counted  # ``counted`` is told of every tokenisation
        self.text_counts = counter.text_counts
        n = len(self.turns)
        self.run_end = [n] * (n + 1)  # first turn at or after t that is not a single user message
        for t in range(n - 1, -1, -1):
            self.run_end[t] = self.run_end[t + 1] if len(self.turns[t]) == 1 else t
        # Seam figures depend on their strings only: remembered per counter, so a replay of the same
        # history at another allowance tokenises nothing again
        self.memo: dict[tuple, int] = counter.__dict__.setdefault("_seam_memo", {})
        # each text's cuts and its count between them: the one-pass renderer's memo, which the final count reads
        self._cuts: dict[str, tuple] = getattr(counter._renderer(), "_cuts", None)  # type: ignore[attr-defined]
        if self._cuts is None or counter._span_memo() is None:  # type: ignore[attr-defined]
            self._cuts = counter.__dict__.setdefault("_seam_cuts", {})
        self.text_token_counts = counter.text_token_counts
        self._tails: dict[bool, str | None] = {}
        self._kept: tuple = ((), None)
        self._seam_heads: dict[tuple, tuple | None] = {}
        self._middles: dict[str, tuple] | None = None
        self._tables: dict[tuple, dict[int, int | None]] = {}

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
        before, low = self._kept
        if kept is before:  # every turn older than the first misfit is tried beside the same ones
            return low
        if (low is not None and kept[-1] == low - 1 and len(kept) == len(before) + 1
                and kept[:-1] == before):  # the fill's next turn, just before the kept ones: no scan of them all
            low = low - 1
        else:
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
        low = self._kept_from(selection)
        if low is None or t >= low:
            return None
        # the turns just before the kept ones (each asked beside the turns after it), or, below the first
        # misfit, the turns asked beside one kept set: one table each, filled a stretch at a time
        key = (-1 if low == t + 1 else low, selection.instructions, selection.question, bool(selection.evidence))
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = {}
        if t not in table:
            self._table(table, t, low, selection)
        return table[t]

    def stretch(self, t: int, selection: Selection, beside: bool, room: int | None = None) -> list[int]:
        """What turns ``t``, ``t - 1``, ... add, as far as each is figured: with ``beside``, each is asked just
        before the kept turns and those of the list before it (the fill, keeping each in turn); without, each
        beside the kept turns, past the first misfit. Empty where ``t`` is not asked so. With ``room``, it stops
        after the turn whose figure brings the sum to ``room`` or past it (the fill keeps none after it), and
        figures the next turns in batches sized from the figures so far: a history whose newest turns fill the
        allowance is not figured beside them to its oldest turn (those are figured once, past the misfit)."""
        low = self._kept_from(selection)
        if low is None or t >= low or (low == t + 1) != beside:
            return []
        key = (-1 if beside else low, selection.instructions, selection.question, bool(selection.evidence))
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = {}
        out: list[int] = []
        total = 0
        while t >= 0:
            value = table.get(t, table)
            if value is table:  # not figured yet
                turn = self.turns[t]
                if len(turn) != 1 or turn[0].role != "user":
                    break
                want = None
                if room is not None and out and total > 0:  # about as many as the room left holds, and a few more
                    want = (room - total) * len(out) // total + 4
                self._table(table, t, t + 1 if beside else low, selection, want)  # beside: each seam is the next's
                value = table[t]
            if value is None:
                break
            out.append(value)
            total += value
            if room is not None and total >= room:
                break
            t -= 1
        return out

    def _table(self, table: dict[int, int | None], t: int, low: int, selection: Selection,
               want: int | None = None) -> None:
        """Figure ``t`` and the single-message turns before it, ``want`` of them (at least 16), else as many as
        ``table`` holds already (at least 16): the next ones the fill asks, in the order it asks them, so the work
        done stays within twice the turns asked. Just before the kept turns (``low == t + 1``) each turn's seam
        is the first word of the turn after it; below the first misfit every turn's seam is ``low``'s."""
        self._middle_texts()
        beside = low == t + 1
        asked, s, most = [], t, max(16, len(table) if want is None else want)
        while s >= 0 and len(asked) < most and s not in table:
            turn = self.turns[s]
            if len(turn) != 1 or turn[0].role != "user":
                if beside:  # the turn after an older single message is not a single message: another run
                    break
            else:
                asked.append(s)
            s -= 1
        if beside:
            self._figure(table, asked, self._seams_after(asked, selection))
        else:
            self._figure(table, asked, [self._seam(low, selection)] * len(asked))

    def _seams_after(self, asked: list[int], selection: Selection) -> list[tuple[str, str | None] | None]:
        """``_seam(s + 1, selection)`` of each turn ``s`` of ``asked`` (single messages of one run, newest first),
        taken from the text of turn ``s + 1`` where it is a single message with a cut (the fill's usual case): what
        precedes the run, and that message up to its first cut."""
        middles, turns, seams = self._middles or {}, self.turns, []
        end = self.run_end[asked[0] + 1] if asked else 0
        left = self._system_tail(selection) if end == len(turns) else ""
        for s in asked:
            text = turns[s + 1][0].content if s + 1 < end else None
            known = middles.get(text) if text else None
            seams.append((left, text[:known[0]]) if known and left is not None else self._seam(s + 1, selection))
        return seams

    def _figure(self, table: dict[int, int | None], asked: list[int], seams: list[tuple | None]) -> None:
        """What each turn of ``asked`` adds at its seam (``_seam``: the text before it from its last cut, and
        the run's text after it up to its first cut), into ``table``. The turn's text splits at its own first
        and last cut wherever it stands (``_middle``), so only the stretches across either seam are counted,
        all of them in one call."""
        middles = self._middle_texts()
        stretches: list[str] = []
        inners: list[tuple[int, int]] = []
        turns = self.turns
        for t, seam in zip(asked, seams):
            added = turns[t][0].content or ""
            middle = middles.get(added)  # a plain text, where it is there
            if seam is None or not added or (middle is None and not _plain(added)):
                table[t] = 0 if not added else None  # the normaliser skips an empty message
                continue
            left, head = seam
            right = "" if head is None else JOIN + head  # no head: the run had no text, the turn's is all of it
            if not middle:
                table[t] = self._difference(("turn", left, added, head), left + added + right, left + (head or ""))
                continue
            a, b, inner = middle
            inners.append((t, inner))
            stretches += (left + added[:a], added[b:] + right, left + (head or ""))
        counts = self.text_counts(stretches)
        for k, (t, inner) in enumerate(inners):
            table[t] = counts[3 * k] + inner + counts[3 * k + 1] - counts[3 * k + 2]

    def _middle_texts(self) -> dict[str, tuple]:
        """Each single message's first and last cut and its count between them (``()`` without both cuts), by
        its text (``tekken_cuts.between_cuts``). Every such message is tokenised in one call on first use (a
        tight loop keeps the tokenizer's tables in the CPU's caches, where tokenising each at its attempt,
        between the assembly's own steps, cost twice as much); the figures are remembered per counter, in the
        memo where a complete count's span memo reads them (``tekken_cuts.joined_count``)."""
        if self._middles is None:
            texts = list(dict.fromkeys(turn[0].content for turn in self.turns if len(turn) == 1))
            texts = [text for text in texts if text and _plain(text)]
            self._middles = dict(zip(texts, between_cuts(texts, self._cuts, self._between_counts)))
        return self._middles

    def _between_counts(self, texts: list[str]) -> list[int]:
        for _ in texts:
            self.counted()
        return self.text_token_counts(texts)

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
