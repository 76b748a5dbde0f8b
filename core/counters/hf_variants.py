"""Exact complete counts of the prefixes ``count_imported`` asks for, for ``hf:``, from one render and one
tokenisation of the whole request, where the chat template allows it; every other variant is counted whole.

A template is prefix-stable at a boundary (between two messages) when the request cut there renders as the
whole request's text up to the boundary, then the generation prompt. Most templates are, at most boundaries:
each message is written from its own fields and its position. Not everywhere: Qwen3 and Gemma 4 write the
reply that ends a request otherwise (an empty thinking block), Qwen3 closes a run of tool results only at its
last, Mistral Nemo moves the tool list and the system prompt to the last user message.

So what holds is learned per group of boundaries: the roles on either side (and whether each message makes tool
calls) and the shape of the turn the boundary ends (the messages from the last user message on). For each
group, a few of this request's own boundaries (its first, middle and last) are rendered cut there:

- if each cut reads exactly as the whole render up to a point, then the generation prompt, the group is
  stable: every boundary of it is found in the whole render as the text that opens its next message (the same
  at every sampled boundary of its kind) followed by that message's text, and must fall where the tokenizer
  splits (a token of the whole tokenisation ends there and an added token is spelled right after it). Its
  prefix count: the whole render's tokens before the boundary, plus the generation prompt's.
- else, if each cut reads as the whole render up to the message before, then a *window* (the system message,
  and the turn from its last user message to the cut) rendered on its own from that message on, then the
  prompt, the group is windowed: its prefix count is the whole render's tokens before that message, the
  tokens of the window's last block, and the prompt's.

The first sampled cut of each group is also counted whole and must agree. A group neither way, or a boundary
not found raises ``Unsure``: that variant is counted whole. A slice left out of the middle (what drop-oldest
asks of a section of tool-call turns) is the whole render with the text between its two boundaries taken out,
where both are located and the template is seen to write it so (``_spliced``). The samples vouch
for their group, not for every boundary in it: a template whose output at one boundary depends on something
no group tells apart could still differ there. A template that compares message texts with one another
(``compared_message_fields``: Nemo) gets no variants at all.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..errors import TemplateRefused
from ..repeats import call_text_moves, carries
from ..text_index import Finder
from .base import ID_FIELDS
from .hf_pieces import piece_bounds
from .hf_splices import STRICT_CHARS, Splices, Unsure, _general, _specific, _spellings
from .template_probes import takes_for_no_question

SAMPLES_PER_GROUP = 3
MAX_GROUPS = 32  # beyond this many groups, the rest are counted whole (each group costs renders and a count)


class HFVariants(Splices):
    def __init__(self, counter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition], total: int,
                 rendered: str | None = None):
        self.counter, self.m, self.tools, self.total = counter, list(messages), list(tools), total
        n = self.n = len(self.m)
        self.whole = whole = rendered if rendered is not None else counter.render_text(self.m, self.tools)
        bare = counter.render_without_prompt(self.m, self.tools, whole)
        eos = counter.eos_spelling()
        if not whole.startswith(bare) and eos and bare.endswith(eos):
            bare = bare[:-len(eos)]  # a template that ends with the end-of-text token when no reply is asked (Phi)
        if not whole.startswith(bare):
            raise Unsure("the generation prompt is not appended")
        self.prompt = whole[len(bare):]
        # where tokens of the whole render end: from its pieces' counts where they tokenise apart (as the complete
        # count had them), else from its tokenisation with offsets
        self.bounds = piece_bounds(counter, whole) if counter.texts_as_pieces else None
        if self.bounds is not None:
            if self.bounds[1][-1] != total:
                raise Unsure("the pieces of the render do not give the complete count")
        else:
            offsets = counter.token_offsets(whole)
            if len(offsets) != total:
                raise Unsure("the tokenisation of the render is not the complete count")
            self.starts = [start for start, _ in offsets]
            self.ends = [end for _, end in offsets]
        self.added = tuple(counter.untrusted_spellings())
        through = self._tokens_before(len(bare))
        if through is None or not self.prompt.startswith(self.added):
            raise Unsure("the generation prompt does not start where the tokenizer splits")
        self.prompt_tokens = total - through
        self._prefixes: dict[int, str | None] = {}  # renders of prefixes, by their length
        self._finder = Finder(whole)  # (``_find``, ``_only_place``: the render indexed once scans cost as much)
        self._places_memo: dict[tuple, list] = {}  # (``_placed``)
        self.turn_start = []  # the last user message at or before each message (0 when none)
        for k, x in enumerate(self.m):
            self.turn_start.append(k if x.role == "user" else (self.turn_start[-1] if k else 0))
        groups: dict[tuple, list[int]] = {}
        for k in range(1, n):  # boundary k: between messages k-1 and k
            groups.setdefault((self.kind(k), self.turn_shape(k)), []).append(k)
        self.groups = groups
        self.opening: dict[tuple, str | None] = {}
        self.mode: dict[tuple, str] = {}
        self._samples: dict[tuple, list[tuple[int, str]]] = {}
        self._sample_groups(first_only=True)  # how each kind opens, from its group's first boundary (a short prefix)
        self.cut: dict[int, int] = {}
        self._lasts: dict[int, int | None] = {}
        self._judged = False  # the groups' other samples rendered and judged (``_judge_prefixes``)
        self.group_of = {k: key for key, at in groups.items() for k in at}
        self._splices: dict[tuple, int | None] = {}
        self._splice_checked = False
        self._renders = 0
        self.seam_opening: dict[tuple, str | None] = {k: v for k, v in self.opening.items() if v is not None}
        self.seam_closing: dict[tuple, str] = {}
        # boundaries located for slices left out (learned from their renders too), each text found only where an
        # added token follows it
        self.seam_cut = self._locate(self.seam_opening, self.seam_closing)

    @property
    def prefixes_ready(self) -> bool:
        """Whether a prefix is answered without more renders (the groups' samples rendered and judged)."""
        return self._judged

    def _judge_prefixes(self) -> None:
        """Render every group's middle and last samples too, and judge each group's prefixes (``_judge``): once a
        prefix is asked. A plan asks only slices left out of the middle, whose own renders vouch for them
        (``_spliced``), and a prefix render of a long request costs a fifth of its complete count. The openings the samples teach
        are then the ones slices are located by too, over those a slice's render taught (``_learn_boundary``), and an
        opening the later samples contradict is dropped: every pair of boundaries is read again before it is trusted."""
        if self._judged:
            return
        self._judged = True
        first = dict(self.opening)
        self._sample_groups(first_only=False)
        self.cut = self._locate()
        for key in list(self._samples):
            self.mode[key] = self._judge(key)
        seam = {k: v for k, v in self.seam_opening.items() if first.get(k) is None or self.opening.get(k) is not None}
        seam.update((k, v) for k, v in self.opening.items() if v is not None)  # (over what a slice's render taught)
        if seam != self.seam_opening:
            self.seam_opening = seam
            self.seam_closing = {k: v for k, v in self.seam_closing.items() if k not in seam}
            self.seam_cut = self._locate(self.seam_opening, self.seam_closing)
            self._splices = {k: None if v is None else 0 for k, v in self._splices.items()}

    def kind(self, k: int) -> tuple:
        """The roles on either side of boundary ``k``, and whether each message makes tool calls."""
        before, after = self.m[k - 1], self.m[k]
        return before.role, bool(before.tool_calls), after.role, bool(after.tool_calls)

    def turn_shape(self, k: int) -> tuple:
        """Roles (and tool calls) of the turn boundary ``k`` ends: from its last user message to message ``k - 1``."""
        return tuple((x.role, bool(x.tool_calls)) for x in self.m[self.turn_start[k - 1]:k])

    def _tokens_before(self, offset: int) -> int | None:
        """Tokens of the whole render that end at or before ``offset``, where one ends exactly there and an added
        token is spelled right after it (the tokenizer splits the text there); else ``None``."""
        if offset == 0:
            return 0
        if self.bounds is not None:
            places, before = self.bounds
            at = bisect_left(places, offset)
            if at == len(places) or places[at] != offset:
                return None
            return before[at] if offset == len(self.whole) or self.whole.startswith(self.added, offset) else None
        count = bisect_right(self.ends, offset)
        if not count or self.ends[count - 1] != offset:
            return None
        if count < len(self.starts) and (self.starts[count] < offset
                                         or not self.whole.startswith(self.added, offset)):
            return None
        return count

    # ---- learning, from this request's own boundaries

    def _sample_groups(self, *, first_only: bool) -> None:
        """``_sample`` each of the first ``MAX_GROUPS`` groups (the rest are counted whole): at its first boundary, or
        at its first, middle and last."""
        for key, at in list(self.groups.items())[:MAX_GROUPS]:
            self._sample(key, at[:1] if first_only else at)

    def _sample(self, key: tuple, at: list[int]) -> None:
        """Render a few cuts of a group; where the cut is stable, learn its kind's opening from it."""
        cuts = []
        for k in sorted({at[0], at[len(at) // 2], at[-1]})[:SAMPLES_PER_GROUP]:
            cut = self._prefix(k)
            if cut is None:
                self._samples.pop(key, None)  # (its first boundary, sampled at the start, does not vouch alone)
                return  # never sampled: every prefix of the group is counted whole
            cuts.append((k, cut))
        self._samples[key] = cuts
        kind = key[0]
        for k, cut in cuts:
            if not self._stable_cut(cut):
                continue
            found = self._opening(k, len(cut) - len(self.prompt))
            if found is not None and self.opening.setdefault(kind, found) != found:
                self.opening[kind] = None  # two boundaries of one kind opened otherwise: none is trusted

    def _stable_cut(self, cut: str) -> bool:
        return cut.endswith(self.prompt) and self.whole.startswith(cut[:len(cut) - len(self.prompt)])

    def _opening(self, k: int, offset: int) -> str | None:
        """The text between boundary ``k`` (at ``offset``) and where message ``k``'s own text is written."""
        found = [start for content in _spellings(self.m[k].content)
                 for start in [self.whole.find(content, offset)] if start >= 0]
        return _general(self.whole[offset:min(found)], self.m[k]) if found and self._written_at(k, min(found)) else None

    def _prefix(self, k: int) -> str | None:
        """The render of ``messages[:k]`` (with the generation prompt; ``None`` where the template refuses it), once."""
        if k == self.n:
            return self.whole
        if k not in self._prefixes:
            try:
                self._prefixes[k] = self.counter.render_text(self.m[:k], self.tools)
            except TemplateRefused:
                self._prefixes[k] = None
        return self._prefixes[k]

    def _written_at(self, j: int, at: int, ends: bool = False) -> bool:
        """Whether the whole render holds message ``j``'s text from ``at`` (``ends``: up to ``at``), as a render of
        the request up to the message after it does. A template may leave a message out of the whole render (Gemma 4
        and Phi-3.5 drop a tool result whose call is not in the request): its text is then found further on, in
        another message, and what lies between is taken for the markup of a boundary. (Session 18: a boundary
        learned so put a slice of four messages left out at 241 tokens where the variant counts 351.)"""
        text = self._prefix(j + 2 if j + 2 < self.n else j + 1)
        if text is None:
            return False
        for spelling in _spellings(self.m[j].content):
            start = at - len(spelling) if ends else at
            end = start + len(spelling)
            if start >= 0 and self.whole.startswith(spelling, start) and text.startswith(self.whole[:end]):
                return True
        return False

    def _locate(self, openings: dict | None = None, closings: dict | None = None) -> dict[int, int]:
        """Boundary -> its offset in the whole render, for boundaries of kinds with a known opening, found in order;
        with ``closings`` (what follows the text of the message before a boundary of that kind), also the
        boundaries of kinds whose next message has no text (an assistant message of tool calls only)."""
        openings = self.opening if openings is None else openings
        cut: dict[int, int] = {}
        cursor = 0
        ended = None  # the message whose text ends at the cursor
        lost = False  # a message passed without its text located: the cursor lags behind where the next one opens
        strict = closings is not None
        for k in range(1, self.n):
            opening = _specific(openings.get(self.kind(k)) or "", self.m[k])
            closing = (closings or {}).get(self.kind(k))
            if not opening and closing and ended == k - 1 and self.whole.startswith(closing, cursor):
                if self._tokens_before(cursor + len(closing)) is not None:
                    cut[k] = cursor + len(closing)
            found, only = self._placed(k, opening, cursor, strict, lost)
            if not only:
                found = []  # (the first place it is written after the cursor may be an earlier message's)
            if not found:
                lost = True
                continue
            start, length = min(found)  # the first place it is written (a text cut short can match further on)
            if opening and self._tokens_before(start) is not None:
                cut[k] = start
            cursor = start + len(opening) + length
            ended, lost = k, False
        return cut

    def _placed(self, k: int, opening: str | None, cursor: int, strict: bool, lost: bool) -> tuple[list, bool]:
        """Where message ``k``'s text (any spelling) is first written with ``opening`` before it from ``cursor`` on, as
        ``[(start, length)]`` (the least pair: ``_first_spelling``; ``[]``: none), and, after a message not located
        (``lost``), whether at one place only (``_only_place``). Remembered by those values: each slice's render may
        teach an opening, and ``_locate`` then runs again over every message, most of them at their cursor before."""
        key = (k, opening, cursor, strict)
        known = self._places_memo.get(key)
        if known is None:
            spellings = _spellings(self.m[k].content) if opening is not None else []
            first = self._first_spelling(opening, spellings, cursor, strict) if spellings else None
            known = self._places_memo[key] = [[first] if first else [], spellings, None]
        found = known[0]
        if not found or not lost:
            return found, True
        if known[2] is None:
            known[2] = self._only_place(opening, known[1], cursor, strict)
        return found, known[2]

    def _only_place(self, opening: str, spellings: list[str], cursor: int, strict: bool) -> bool:
        """Whether a message's opening and text are written at one place only from ``cursor`` on (any spelling):
        after a message not located, the first place found may be an earlier message's that reads the same."""
        places = set()
        for content in spellings:
            text = opening + content
            if not strict or len(text) >= STRICT_CHARS:  # (where ``_find`` is a plain ``str.find``)
                indexed = self._finder.places(text, cursor, 2)
                if indexed is not None:
                    places.update(indexed)
                    continue
            start = self._find(text, cursor, strict)
            while start >= 0 and len(places) < 2:
                places.add(start)
                start = self._find(text, start + 1, strict)
        return len(places) == 1

    def _judge(self, key: tuple) -> str:
        """``stable``, ``windowed`` or ``whole`` for one group, from its sampled cuts (the first counted whole)."""
        cuts = self._samples[key]
        if all(self._stable_cut(cut) and k in self.cut and self.cut[k] == len(cut) - len(self.prompt)
               for k, cut in cuts):
            k = cuts[0][0]
            stable = self._tokens_before(self.cut[k]) + self.prompt_tokens
            return "stable" if stable == self.counter.count(self.m[:k], self.tools) else "whole"
        for k, cut in cuts:
            block = self._last_block(k)
            if block is None or cut != self.whole[:self.cut[k - 1]] + block + self.prompt:
                return "whole"
        k = cuts[0][0]
        return "windowed" if self._windowed_count(k) == self.counter.count(self.m[:k], self.tools) else "whole"

    # ---- a template that writes the message ending the request otherwise

    def _last_block(self, k: int) -> str | None:
        """How message ``k - 1`` is written when it ends the request, from two renders of a window (the system
        message, if any, then the turn from its last user message): the window's text after message ``k - 2``."""
        if k < 2 or k - 1 not in self.cut:
            return None
        start = min(self.turn_start[k - 2], k - 2)
        head = self.m[:1] if self.m[0].role == "system" and start > 0 else []
        try:
            shorter = self.counter.render_text(head + self.m[start:k - 1], self.tools)
            longer = self.counter.render_text(head + self.m[start:k], self.tools)
        except TemplateRefused:
            return None
        g = len(self.prompt)
        if not (shorter.endswith(self.prompt) and longer.endswith(self.prompt)
                and longer.startswith(shorter[:len(shorter) - g])):
            return None
        block = longer[len(shorter) - g:len(longer) - g]
        return block if block.startswith(self.added) else None

    def _windowed_count(self, k: int) -> int | None:
        if k not in self._lasts:
            block = self._last_block(k)
            self._lasts[k] = None if block is None else \
                self._tokens_before(self.cut[k - 1]) + self.counter.text_count(block) + self.prompt_tokens
        return self._lasts[k]

    def _rewritten_reply(self, start: int, end: int) -> bool:
        """Whether a reply or tool result in the last turn of ``messages[:start] + messages[end:]`` (from the last user
        message before ``start``) holds a text the template writes by where it stands. (A user message the template
        takes for no question, Qwen3's ``<tool_response>``, moves where that turn opens: not followed here.)"""
        rewritten = self.counter.rewrite_test()
        if rewritten is None or not self.counter.reasoning_by_position():
            return False  # (DeepSeek-R1 writes a reply alike wherever it stands)
        return any(x.role != "user" and x.content and rewritten(x.content)
                   for x in self.m[self.turn_start[start - 1]:start] + self.m[end:])

    def count(self, start: int, end: int, *, cheap: bool = False) -> int | None:
        """The complete count of ``messages[:start] + messages[end:]``: prefixes (``end == n``), and slices left
        out between two located boundaries (``_spliced``). (Every answer is cheap: ``cheap`` is the mistral
        variants' word.)"""
        if start == 0:
            raise Unsure("a variant opening with another message")
        if start == self.n:
            return self.total
        if end == self.n:
            self._judge_prefixes()
        mode = self.mode.get(self.group_of[start]) if end == self.n else None
        last_turn_cut = end == self.n or start <= self.turn_start[-1] < end
        if mode != "windowed" and last_turn_cut and self._rewritten_reply(start, end):
            # the variant's last turn holds a text the template writes by where it stands, which the whole render
            # writes before its last question (GLM-4.6 keeps a reply's reasoning after the last question: a prefix
            # ending on such a reply, of a group judged stable from other samples, counted 382 for 397); a windowed
            # group renders that turn on its own
            raise Unsure("the variant's last turn holds a text the template writes by where it stands")
        if end != self.n:
            return self._spliced(start, end)
        if mode == "stable" and start in self.cut:
            return self._tokens_before(self.cut[start]) + self.prompt_tokens
        if mode == "windowed":
            counted = self._windowed_count(start)
            if counted is not None:
                return counted
        raise Unsure("a boundary the template is not known to be prefix-stable at")


def variants(counter, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition],
             total: int, rendered: str | None = None) -> HFVariants | None:
    """Prefix counts for a request whose complete count is ``total`` (and whose render is ``rendered``, where the
    caller has it), or ``None`` where they do not apply."""
    fields = counter.compared_message_fields()
    if fields - ID_FIELDS:
        return None  # what a message adds can depend on another's text
    ids = [c.id for m in messages for c in m.tool_calls]
    if fields and len(ids) != len(set(ids)):
        return None  # a template that matches results to calls by id, and a recording that reuses an id
    if carries(counter, messages):
        return None  # a template that carries state from message to message (DeepSeek-R1's first tool call): a slice
        # left out can change how the messages after it are written
    rewritten = counter.rewrite_test()
    if rewritten is not None and counter.rewrites_by_later_reply() and any(
            m.role == "assistant" and m.content and rewritten(m.content) for m in messages):
        return None  # a reply written otherwise by whether another follows it (LFM2.5): a cut can rewrite it
    if rewritten is not None and counter.reasoning_by_position() and any(
            m.role == "user" and m.content and rewritten(m.content) and takes_for_no_question(counter, m.content)
            for m in messages):
        return None  # a user message the template takes for no question (Qwen3, a ``<tool_response>``): where the
        # last question is, and so how the replies before it are written, depends on which messages a cut leaves
    if call_text_moves(counter, messages):
        return None  # a tool call's text written by whether a final reply follows it (gpt-oss): likewise
    try:
        return HFVariants(counter, messages, tools, total, rendered)
    except Exception:  # noqa: BLE001 - Unsure, a slow tokenizer without offsets, a refusal: every variant whole
        return None
