"""The default assembly's counting: predicted complete counts, checked by complete counts.

Each item's text is counted once (cached by content in the counter) and the complete count is
predicted as the running count plus what the item adds: its text tokens plus a constant for its
shape, learned from small probe requests (a few parts of the request, not all of it) and checked
by a third probe. A shape is the roles of a turn's messages and the whitespace at their edges that
the template keeps (what it trims and keeps is learned from tiny requests: ``core.assembly_edges``). The
required request is counted whole once; so is every attempt whose prediction lands near the
allowance when the decision depends on it, and the final request. A disagreement raises
``PredictionMismatch`` and the request is assembled again by the reference method.

The span memo (``reuses_texts``). Each of this builder's complete counts (probes, near-allowance checks, the
final count) goes through ``TokenCounter.count_reusing_texts`` / ``count_whole_reusing_texts``. Where the
counter can vouch for it (``mistral:`` tekken, ``MistralCounter._span_memo``) the request is rendered into its
spans between control tokens exactly as for ``token_ids`` (same-role runs joined, the system prompt joined to
the last user turn, tool JSON, control tokens, the assistant ``rstrip``) and each span's count is taken from
the counter's text counts where that exact string was counted there by the same encoder, every other span
encoded (mistral-common encodes each span on its own, so this is still the whole request's count). Under ``hf:``
the rendered text's pieces between added tokens (and a long one's blocks and lines) are found among the pieces
and texts counted before where the tokenizer tokenises them apart (``core.counters.hf_pieces.count_known``).
Every other counter counts as before. ``token_ids`` and the reference ``Builder`` never use it; its counts by selection
are kept under another key, so the reference never receives one.
"""
from __future__ import annotations

import re
from typing import Callable

from .assembly_edges import TemplateEdges
from .assembly_merge import MergedUserTurns, merge_seams_for
from .assembly_reference import Builder, PredictionMismatch
from .assembly_tools import TOOL_TURN, ToolTurns
from .contracts import ChatMessage, Request
from .counting import TokenCounter
from .render import EvidenceBlocks, Selection, chat_message, render
from .result import trace_entry
from .text_edges import MAX_EDGE, edges

# The shape of a turn counted from the text spans it renders to (``FastBuilder._spans_shape``).
SPAN_TURN = "turn spans"
# A prediction this close to the allowance is checked by a complete count before it decides.
NEAR_ALLOWANCE = 4
MAX_BESIDE = 16  # kept turns a rewritten turn's probe takes after it (``FastBuilder._beside_later``)


class FastBuilder(TemplateEdges, Builder):
    """Predicts complete counts from small probe requests and per-item text counts, and checks them.

    A probe is a render of a few parts of the request (the question and one or two items): it
    measures what an item adds where it will be inserted (evidence blocks are appended before the
    question, history turns inserted before the newest kept turn) without tokenising the rest.
    """

    reuses_texts = True  # complete counts take each span's count from the text counts where it was counted

    def __init__(self, request: Request, counter: TokenCounter, budget: int) -> None:
        super().__init__(request, counter)
        self.budget = budget
        self.constants: dict[tuple, int | None] = {}
        self._text_memo: dict[int, int] = {}  # an item's text tokens (``_text_tokens``)
        self._required: dict[tuple[str, int], int] = {}  # a required item's marginal (``require_item``)
        self._trims: dict[str, tuple[bool, bool] | None] = {}
        self._apart: dict[tuple[str, int], bool] = {}
        self._merges_users: bool | None = None
        self.turns = request.history_turns()
        self._built_turns: dict[int, list[ChatMessage]] = {}
        rewritten = counter.rewrite_test()  # passages whose text the template rewrites (Nemotron drops '/think' from
        self.rewritten_passages = frozenset(  # a user message): counted in their place, never a constant's members
            i for i, p in enumerate(request.evidence) if rewritten is not None and rewritten(p.text))
        self._evidence_members = [i for i in range(len(request.evidence)) if i not in self.rewritten_passages]
        self._shapes: tuple[list, dict] | None = None
        self.blocks = EvidenceBlocks(request)  # o15: each passage's block built once (text count and final render)
        self._merged: MergedUserTurns | None | bool = False  # False: not yet asked
        self._tools: ToolTurns | None = None
        self._newest_of: tuple = (None, None)  # (kept turns, the newest of them)
        self._open_turns: list[bool] | None = None  # ``_open_ended`` of each turn

    def _render(self, selection: Selection):
        """A render only counted: each turn's messages built once (``render``'s ``turn_messages``)."""
        return render(self.request, selection, getattr(self, "blocks", None), self._turn_messages)

    def _turn_messages(self, t: int) -> list[ChatMessage]:
        built = self._built_turns.get(t)
        if built is None:
            built = self._built_turns[t] = [chat_message(m) for m in self.turns[t]]
        return built

    def probe(self, selection: Selection) -> int:
        before = self.counter.full_counts
        value = self._render_count(selection)
        self.probe_counts += self.counter.full_counts - before
        return value

    def delta(self, base: Selection, added: Selection) -> int:
        return self.probe(added) - self.probe(base)

    def _synthetic(self, messages: list[ChatMessage]) -> int:
        before = self.counter.full_counts
        value = self.counter.count(messages, [])
        self.probe_counts += self.counter.full_counts - before
        return value

    def _user_turns_merge(self) -> bool:
        """Whether consecutive user messages render as one (Mistral joins them), so a turn that ends
        with a user message costs what its neighbour makes of it."""
        if self._merges_users is None:
            try:
                before = self.counter.full_counts
                text = self.counter.render_text([ChatMessage(role="user", content="Alpha"),
                                                 ChatMessage(role="user", content="Beta")], [])
                self.probe_counts += max(self.counter.full_counts - before, 1)
                self._merges_users = re.search(r"Alpha\s*Beta", text) is not None
            except Exception:
                self._merges_users = True
        return self._merges_users

    def _turn_shape(self, t: int, turn) -> tuple | None:
        rewritten = self.counter.rewrite_test()
        if rewritten is not None and any(rewritten(m.content) for m in turn if m.content):
            return None  # its template writes it by what it holds (Qwen3's reasoning): probed in its place
        spans = self._spans_shape(t, turn)
        if spans is not None:
            return spans
        if any(m.tool_calls or m.role == "tool" for m in turn):
            return self._tool_turns().shape(turn)  # core.assembly_tools; None where it has no shape
        if turn[-1].role == "user" and self._user_turns_merge():
            return None
        key = []
        for m in turn:
            form = self._form(m.role, m.content or "")
            if not form or not form.strip():
                return None
            lead, trail = edges(form)
            lead = "" if lead and self._edge_apart(m.role, 0) else lead
            trail = "" if trail and self._edge_apart(m.role, 1) else trail
            if len(lead) > MAX_EDGE or len(trail) > MAX_EDGE:
                return None
            key.append((m.role, lead, trail))
        return ("history", tuple(key))

    def _spans_shape(self, t: int, turn) -> tuple | None:
        """A turn's shape from the text spans it renders to, where the counter can say them (``mistral:`` tekken,
        ``MistralCounter.turn_count``: every span between two control tokens is encoded on its own, and a turn that
        opens with a user message and ends with another role is followed by a user message, so it adds its control
        tokens and each span's text count wherever it stands: ``tests/test_turn_spans.py`` checks that against
        mistral-common's own encoding). The shape is the number of control tokens, which is its constant: no probe
        learns it (``_marginal``). The turn's text tokens are counted here, the spans being at hand."""
        found = self._turn_spans(turn)
        if found is None:
            return None
        self._text_memo[t] = found[1]
        return (SPAN_TURN, found[0])

    def _turn_spans(self, turn) -> tuple[int, int] | None:
        """(control tokens, text tokens of the spans) of ``turn`` from the counter's ``turn_count``, or None."""
        method = getattr(self.counter, "turn_count", None)
        return None if method is None else method(turn)

    def filled(self) -> None:
        """The sections are filled: what only the fills read (tool-call turns' runs, the seams of merged user turns)
        is let go before the final render and count, the peak of an assembly's memory; each is made again if asked
        for. (The turns' shapes stay: the request's memo keeps them for its replays, ``core.assembly_memo``.)"""
        self._tools, self._merged = None, False

    def _tool_turns(self) -> ToolTurns:
        if self._tools is None:
            self._tools = ToolTurns(self)
        return self._tools

    def shapes(self) -> tuple[list, dict]:
        """Each turn's shape (None: no constant can be learned) and the turns of each shape."""
        if self._shapes is None:
            shape_of, members, held = [], {}, {}
            for t, turn in enumerate(self.turns):
                shape = self._turn_shape(t, turn)
                if shape is not None:
                    shape = held.setdefault(shape, shape)  # one tuple per shape kept, not one per turn (memory)
                    members.setdefault(shape, []).append(t)
                shape_of.append(shape)
            self._shapes = (shape_of, members)
        return self._shapes

    # ---- required content: probes, then one complete count of the required request

    def require_item(self, section: str, index: int, item_id: str, selection: Selection, reason: str) -> None:
        key = (section, index)
        marginal = self._required.get(key)
        if marginal is None:  # its probes depend on the request's content only: a replay's memo lends the figure
            marginal = self._required[key] = self._required_marginal(section, index)
        self.take(selection, self.tokens + marginal)
        self.trace.append(trace_entry(section, item_id, "required", marginal, reason))

    def _required_marginal(self, section: str, index: int) -> int:
        core = Selection(instructions=True)
        if section == "instructions":
            return self.delta(Selection(), core)
        if section == "tools":
            first = core.add(tools=(0,))
            return self.delta(core, first) if index == 0 else self.delta(first, first.add(tools=(0, index)))
        if section == "current":
            return self.delta(core, core.add(question=True))
        asked = core.add(question=True)
        first = asked.add(exchanges=(0,))
        return self.delta(asked, first) if index == 0 else self.delta(first, first.add(exchanges=(0, index)))

    def check_required(self) -> None:
        exact = self.count(self.selection)
        if exact != self.tokens:
            raise PredictionMismatch(f"required parts predicted {self.tokens} tokens, a complete count gave {exact}")

    # ---- optional items

    def _constant(self, shape: tuple, members: list[int], section: str) -> int | None:
        """Tokens an item of ``shape`` adds beyond its text, learned from two probes and checked by a
        third; ``None`` when the request has too few items of that shape, or they disagree."""
        if shape in self.constants:
            return self.constants[shape]
        value = None
        if shape[0] == TOOL_TURN:
            value = self._tool_turns().constant(shape, members)
        elif len(members) >= 3:
            a, b, c = sorted(members, key=lambda i: self._text_tokens(section, i))[:3]
            values = []
            for earlier, added in (((a,), b), ((a, b), c)):
                base = self._probe(section, earlier)
                values.append(self.delta(base, self._probe(section, earlier + (added,)))
                              - self._text_tokens(section, added))
            value = values[0] if values[0] == values[1] else None
        self.constants[shape] = value
        return value

    def _first_passage_constant(self, index: int) -> int | None:
        """What the first passage adds beyond its block (the preamble and the question prefix), learned
        from two passages; None with a single passage or when they disagree."""
        if "first passage" not in self.constants:
            base = Selection(instructions=True, question=True)
            others = [j for j in self._evidence_members[:2] if j != index][:1]
            values = {self.delta(base, base.add(evidence=(k,))) - self._text_tokens("evidence", k)
                      for k in (index, *others)}
            self.constants["first passage"] = values.pop() if others and len(values) == 1 else None
        return self.constants["first passage"]

    def _probe(self, section: str, items: tuple[int, ...]) -> Selection:
        if section == "evidence":
            return Selection(question=True, evidence=items)
        return Selection(question=True, turns=items)

    def _text_tokens(self, section: str, index: int) -> int:
        key = -1 - index if section == "evidence" else index  # a history turn's index; a passage's below zero
        known = self._text_memo.get(key)
        if known is None:  # an item's rendering is built (and looked up in the counter's cache) once
            if section == "evidence":
                self._count_blocks()
                return self._text_memo[key]
            elif (shape := self.shapes()[0][index]) is not None and shape[0] == TOOL_TURN:
                known = self._tool_turns().text_tokens(shape, index)  # the text of the runs holding its values
            elif shape is not None and shape[0] == SPAN_TURN:  # shapes lent by a replay's memo: counted again
                known = self._turn_spans(self.turns[index])[1]
            else:
                known = sum(self.counter.text_count(self._form(m.role, m.content or "") or "")
                            for m in self.turns[index])
            self._text_memo[key] = known
        return known

    def _count_blocks(self) -> None:
        """Every passage's block text-counted at once (the evidence fill weighs each one; a counter that counts
        several texts in one call does so: ``TokenCounter.text_counts``)."""
        memo = self._text_memo
        todo = [i for i in range(len(self.request.evidence)) if -1 - i not in memo]
        for i, known in zip(todo, self.counter.text_counts([self.blocks(i) for i in todo])):
            memo[-1 - i] = known

    def _open_ended(self, t: int) -> bool:
        """A turn that ends with a user message merges into the next user message where the template
        joins them (Mistral), so what it adds depends on its neighbour: predicted from the text near the
        seam (``core.assembly_merge``) where that is proven, else counted whole."""
        open_ended = self._open_turns
        if open_ended is None:  # looked at once per assembly, not once per attempt
            merges = any(turn[-1].role == "user" for turn in self.turns) and self._user_turns_merge()
            open_ended = self._open_turns = [merges and turn[-1].role == "user" for turn in self.turns]
        return open_ended[t]

    def _seams(self) -> MergedUserTurns | None:
        if self._merged is False:
            encode = merge_seams_for(self.counter)
            self._merged = None if encode is None else MergedUserTurns(self.request, self.counter, encode,
                                                                       self._seam_counted)
        return self._merged

    def _seam_counted(self) -> None:
        self.probe_counts += 1

    def _merged_marginal(self, section: str, index: int, candidate: Callable[[], Selection]) -> int:
        seams = self._seams()
        value = None
        if seams is not None:
            try:
                value = seams.turn(index, self.selection) if section == "history" else \
                    seams.first_passage(index, self.selection)
            except Exception:  # noqa: BLE001 - a text the shortcut did not foresee: count it whole
                value = None
        return self.count(candidate()) - self.tokens if value is None else value

    def fitting_turns(self, t: int) -> list[int] | None:
        """What turns ``t``, ``t - 1``, ... add where they are single-message turns figured a stretch at a time
        (``MergedUserTurns.stretch``), each just before the kept turns and those of the list before it, as far
        as each keeps the count below the allowance by more than ``NEAR_ALLOWANCE`` (no count decides them): the
        history fill keeps them all. ``None`` or empty where it asks turn by turn (``attempt``)."""
        total, limit = self.tokens, self.budget - NEAR_ALLOWANCE
        figures = self._stretch(t, True, limit - total)
        if not figures:
            return figures
        for n, marginal in enumerate(figures):
            total += marginal
            if total >= limit:
                return figures[:n]
        return figures

    def older_turns(self, t: int) -> list[int] | None:
        """What turns ``t``, ``t - 1``, ... add beside the kept turns, past the first misfit (each is dropped
        whatever it adds), where they are figured a stretch at a time; ``None`` or empty elsewhere."""
        return self._stretch(t, False)

    def _stretch(self, t: int, beside: bool, room: int | None = None) -> list[int] | None:
        if not self._open_ended(t):
            return None
        seams = self._seams()
        if seams is None:
            return None
        try:
            return seams.stretch(t, self.selection, beside, room)
        except Exception:  # noqa: BLE001 - a text the shortcut did not foresee: asked turn by turn
            return None

    def _newest(self, turns: tuple[int, ...]) -> int:
        """``max(turns)``, found once per kept-turn tuple (every passage tried before the first is kept asks)."""
        if turns is not self._newest_of[0]:
            self._newest_of = (turns, max(turns))
        return self._newest_of[1]

    def _marginal(self, section: str, index: int, candidate: Callable[[], Selection]) -> int:
        if section == "evidence":
            if index in self.rewritten_passages:
                return self.count(candidate()) - self.tokens
            if not self.selection.evidence:  # the first passage also brings the preamble
                if self.selection.turns and self._open_ended(self._newest(self.selection.turns)):
                    return self._merged_marginal(section, index, candidate)
                first = self._first_passage_constant(index)
                if first is not None:
                    return self._text_tokens(section, index) + first
                base = Selection(instructions=True, question=True)
                return self.delta(base, base.add(evidence=(index,)))
            constant = self._constant(("evidence",), self._evidence_members, section)
            if constant is None:
                neighbour = self.selection.evidence[-1:]
                return self.delta(self._probe(section, neighbour), self._probe(section, neighbour + (index,)))
            return self._text_tokens(section, index) + constant
        if self._open_ended(index):
            return self._merged_marginal(section, index, candidate)
        shape_of, members = self.shapes()
        shape = shape_of[index]
        if shape is not None and shape[0] == SPAN_TURN:  # its control tokens and its spans' text: no probe
            return self._text_tokens(section, index) + shape[1]
        if not self.selection.turns:
            return self.delta(Selection(question=True), Selection(question=True, turns=(index,)))
        if shape is None and self._rewritten(index):
            return self._beside_later(index, candidate)
        constant = self._constant(shape, members[shape], section) if shape is not None else None
        if constant is None:  # tool calls render through the template: probe this turn before the question
            return self.delta(Selection(question=True), Selection(question=True, turns=(index,)))
        return self._text_tokens(section, index) + constant

    def _rewritten(self, index: int) -> bool:
        """Whether turn ``index`` holds text its template writes by what it holds (``_turn_shape`` gives it none)."""
        rewritten = self.counter.rewrite_test()
        return rewritten is not None and any(rewritten(m.content) for m in self.turns[index] if m.content)

    def _beside_later(self, index: int, candidate: Callable[[], Selection]) -> int:
        """What turn ``index``, whose text its template rewrites by where it stands, adds beside the kept turns
        after it up to the first that holds a reply, and the current turn's calls: a template keeps a reply's
        reasoning after the last question only (Qwen3, DeepSeek-R1) or in the last reply only (LFM2.5), which a
        probe of the turn alone before the question makes it (a dropped LFM2.5 turn priced at 55 tokens for 45,
        session 18). Counted in its place where more than ``MAX_BESIDE`` kept turns come before such a reply."""
        later: list[int] = []
        for t in sorted(t for t in self.selection.turns if t > index):
            later.append(t)
            if any(m.role == "assistant" for m in self.turns[t]):
                break
        if len(later) > MAX_BESIDE:
            return self.count(candidate()) - self.tokens
        base = Selection(question=True, exchanges=self.selection.exchanges, turns=tuple(later))
        return self.delta(base, base.add(turns=(index,) + tuple(later)))

    def attempt(self, section: str, index: int, candidate: Callable[[], Selection],
                decides: bool = True) -> tuple[int, int]:
        marginal = self._marginal(section, index, candidate)
        total = self.tokens + marginal
        if decides and abs(total - self.budget) <= NEAR_ALLOWANCE:
            exact = self._render_count(candidate(), whole=True)
            if exact != total:
                raise PredictionMismatch(f"predicted {total} tokens near the allowance, a complete count gave {exact}")
        return total, marginal
