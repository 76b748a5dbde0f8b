"""``FastPlanCounts``: a plan's questions answered from item costs where the item model covers them, counted
whole where it must, and checked (the reference is ``counts.PlanCounts``)."""
from __future__ import annotations

import operator
from typing import Any, Sequence

from ..alternation import countable_variants
from ..contracts import ChatMessage, ToolDefinition
from ..counting import TokenCounter
from ..errors import CounterError
from .alone import AloneCosts
from .chains import ChainCosts
from .counts import NEAR_ALLOWANCE, PlanCounts, PredictionMismatch, _plan_memo
from .passages import PassageCosts
from .slices import SliceCosts, _middle_cuts
from .seams import _joins, _last_run_start, _plain, _stand_in, _tools_stand_apart


def _last_render(render: Any) -> Any:
    """``render`` that gives the messages again for the view it last rendered (the same entry objects in every
    section): the committed prompt is rendered for its count, its variant counts and the trace."""
    last: list = [None, None]

    def rendered(states: Any, view: Any) -> list[ChatMessage]:
        seen = last[0]
        if seen is not None and seen.keys() == view.keys() and all(
                len(seen[k]) == len(v) and all(map(operator.is_, seen[k], v)) for k, v in view.items()):
            return list(last[1])
        messages = render(states, view)
        last[0], last[1] = {k: list(v) for k, v in view.items()}, messages
        return list(messages)

    return rendered


class FastPlanCounts(AloneCosts, ChainCosts, PassageCosts, SliceCosts, PlanCounts):
    """Answers from item costs where it can, counts whole where it must, and checks itself."""

    reference = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._render = _last_render(self._render)
        self.memo = _plan_memo(self.counter)
        self._scope_memo: dict | None = None
        self._host_text: tuple[Any, str] = ((), "")
        self._evidence_memo: dict[int, tuple[Any, int]] = {}  # a passage's block tokens, by message
        self.block_memo: dict = {}  # (set by the assembler: its renders' evidence blocks, ``seams.block_of``)
        self._block_ids: dict[int, int] = {}
        self._steps: dict[tuple, tuple] = {}  # a chain step's constant, by the objects around it
        self._block_keep: list[Any] = []  # messages whose ids key _block_ids stay alive
        self._first_memo: dict[tuple[int, str], tuple[Any, int]] = {}
        self._text_memo: dict[int, tuple[Any, str]] = {}  # a committed message's rendered text, until a commit
        self._host_ok: dict[int, tuple[Any, bool]] = {}
        self._ctx_memo: dict[Any, Any] = {}  # a section's chain context (and its closing message), until a commit
        self._bare: dict[str, tuple] = {}  # a section left empty: its small count and outline, until a commit
        self._slices: dict[str, tuple] = {}  # a section's variant counts, until another section commits
        self._final_variants: tuple | None = None  # the emitted prompt's variant counts, once asked for
        self._chain_cache: dict[str, tuple] = {}  # per section: the last list walked, its costs and states
        self._walk_end: tuple | None = None
        self._walk_took: int | None = None  # where the last walk took the last list's costs over
        self._walk_sum = 0  # the sum of the costs the last walk walked (not those it took over)
        self._chain_total: int | None = None  # the sum of the costs ``_chain`` gave last
        self._epoch = 0  # bumped whenever a constant turns out unstable: walked costs are then not reused
        self.running: int | None = None
        self._running_checked = False
        self.message_sections = [st.plan.name for st in self.states if st.plan.into is None]
        self.into = {st.plan.name: st.plan.into for st in self.states if st.plan.into is not None}
        self.sources: dict[str, list[str]] = {}
        for st in self.states:
            if st.plan.into is not None:
                self.sources.setdefault(st.plan.into, []).append(st.plan.name)

    # ---- the running total

    def total(self, replaced: Any = None, *, exact: bool = False) -> int:
        """``PlanCounts.total``; once the emitted prompt is counted (the trace's questions come after it),
        a question about that very prompt (a section with all its committed entries) takes that count."""
        if self.final_value is not None and replaced and all(
                len(v) == len(self.current[k]) and all(map(operator.is_, v, self.current[k]))
                for k, v in replaced.items()):
            return self.final_value
        return super().total(replaced, exact=exact)

    def pinned_total(self) -> int:
        self.running = self.total()
        self._running_checked = True
        return self.running

    def running_total(self) -> int:
        """The committed sections' count, as predicted. A section's limit is worked out from it, and a
        limit off by a token would decide differently from the reference while every count near it
        agreed with itself; it is checked by the next complete count of the committed prompt (a count
        near an allowance, a commit the item model does not cover, ``settle`` before an error is
        raised) and, at the latest, by the emitted prompt's count, which holds it plus what the
        later commits added."""
        assert self.running is not None
        return self.running

    def settle(self) -> None:
        """Check the running total with a complete count if nothing has yet (an error about to be raised
        may rest on a limit worked out from it)."""
        if not self._running_checked:
            self._check_running(PlanCounts.total(self))

    def _check_running(self, exact: int) -> None:
        if exact != self.running:
            raise PredictionMismatch(f"the committed sections count {exact} tokens, the item costs predicted "
                                     f"{self.running}")
        self._running_checked = True

    def whole_cost(self, name: str, entries: Sequence[Any]) -> int:
        committed = self.current[name]
        if committed and len(entries) == len(committed) and all(map(operator.is_, entries, committed)):
            # the committed prompt itself (the check that no section is over its allowance): counted whole, and
            # the prompt without the section is a variant of it
            with_them = self.total({name: committed})
            last, last_text = self._last_whole, self._last_text
            if not self._running_checked:
                self._check_running(with_them)
            without = self._left_out(name, with_them)
            if without is not None:
                return with_them - without
            without = self.total({name: []})
            self._last_whole, self._last_text = last, last_text  # the emitted prompt is the one counted whole last
            # (``final_total``)
            return with_them - without
        without = self._without(name)
        return self.total({name: list(entries)}) - without

    def _without(self, name: str) -> int:
        """``T(S=[])``: the prompt with section ``name`` left empty, the rest as committed."""
        if self._running_checked and not self.current[name]:
            return self.running  # the committed prompt, as a complete count gave it since the last commit
        without = self.total({name: []})
        if not self._running_checked and not self.current[name]:
            self._check_running(without)  # that count is the committed prompt's
        return without

    def pins_cost(self, name: str) -> int:
        return self.whole_cost(name, self.current[name]) if self.current[name] else 0

    def commit(self, name: str, entries: Sequence[Any]) -> None:
        entries = list(entries)
        old, new = self._gain(name, self.current[name]), self._gain(name, entries)
        self._text_memo.clear()  # what carries evidence blocks may change
        self._ctx_memo.clear()  # and the prompt around every section
        self._bare.clear()
        self._slices = {k: v for k, v in self._slices.items() if k == name}  # (its own entries are replaced)
        if old is None or new is None:  # a section the model does not cover: count the whole prompt
            self.settle()  # (the count below would hide an error in the prediction so far)
            super().commit(name, entries)
            self.running = self.total()
            self._running_checked = True
            return
        super().commit(name, entries)
        self.running += new - old
        self._running_checked = False
        last = self._last_whole  # a section is often committed as the list a check near its allowance
        if last is not None and all(len(last[0][k]) == len(v) and all(map(operator.is_, last[0][k], v))
                                    for k, v in self.current.items()):  # counted whole: that is the new total
            self._check_running(last[1])

    def _count(self, messages: list[ChatMessage]) -> int:
        """A complete count with the counter's span memo (``TokenCounter.count_reusing_texts``): the prompt is
        rendered whole each time and only a span already tokenised as an item's text is not tokenised again; the
        reference method (``PlanCounts``) keeps the plain count."""
        if self.counter.counts_with_text:  # the same count, its rendered text kept beside it (``final_total``)
            both = self.counter.count_and_render_text(messages, self.tools)
            if both is not None:
                self._counted_text = (messages, both[1])
                return both[0]
        return self.counter.count_reusing_texts(messages, self.tools)

    def _count_whole(self, messages: list[ChatMessage]) -> tuple[int, list[int] | None]:
        """The emitted prompt's count with the span memo, and its rendered text where one rendering gives both
        (``final_rendered``: the check for what the template left out then renders nothing again)."""
        both = self.counter.count_and_render_text(messages, self.tools)
        if both is not None:
            self.final_rendered = (messages, both[1])
            return both[0], None
        return self.counter.count_whole_reusing_texts(messages, self.tools)

    def final_total(self) -> int:
        value = super().final_total()
        if value != self.running:
            raise PredictionMismatch(f"the emitted prompt counts {value} tokens, the item costs predicted "
                                     f"{self.running}")
        return value

    # ---- questions

    def cost(self, name: str, entries: Sequence[Any], thresholds: tuple[int, ...] | None = None) -> int:
        entries = list(entries)
        predicted = self._gain(name, entries) if thresholds is not None else None
        if predicted is None:
            sliced = self._slice_cost(name, entries)
            if sliced is None:
                return self.whole_cost(name, entries)
            with_them, without = sliced
            if not self._running_checked and not self.current[name]:
                self._check_running(without)  # that count is the committed prompt's
            return with_them - without
        return self._checked(name, predicted, thresholds, lambda: entries)

    def _checked(self, name: str, predicted: int, thresholds: tuple[int, ...], entries: Any) -> int:
        """A predicted cost of section ``name`` holding ``entries()``, counted whole and compared where it lands
        within ``NEAR_ALLOWANCE`` of a budget it is compared with."""
        self.predicted += 1
        if any(abs(predicted - t) <= NEAR_ALLOWANCE for t in thresholds):
            exact = self.whole_cost(name, entries())
            if exact != predicted:
                raise PredictionMismatch(f"section {name!r}: predicted {predicted} tokens near a budget of "
                                         f"{', '.join(map(str, thresholds))}, a complete count gave {exact}")
        return predicted

    def confirmed(self, name: str, entries: Sequence[Any], value: int) -> int:
        exact = self.whole_cost(name, entries)
        if exact != value:
            raise PredictionMismatch(f"section {name!r}: predicted {value} tokens over its allowance, a complete "
                                     f"count gave {exact}")
        return exact

    @staticmethod
    def covers(counter: TokenCounter, states: Sequence[Any], tools: Sequence[ToolDefinition]) -> bool:
        """Whether the item model covers this layout: system messages only at the head of the prompt
        (a template moves their text and joins what is around them), and tool definitions whose
        tokens do not depend on which messages come first (Llama 3.1 folds them into the first user
        message; Mistral puts them in a block of their own)."""
        started = False
        for st in states:
            if st.plan.into is not None:
                continue
            for m in st.entries:
                if m.role != "system":
                    started = True
                elif started:
                    return False
        if not tools:
            return True
        systems = [m.chat() for st in states if st.plan.into is None for m in st.entries if m.role == "system"]
        return _tools_stand_apart(counter, tuple(tools), tuple(systems))

    def kept_costs(self, name: str, entries: Sequence[Any]) -> list[int]:
        costs = self._chain(name, list(entries))
        if costs is None and _middle_cuts(self.counter) and any(m.role != "system" for m in entries):
            costs = self._slice_kept_costs(name, list(entries))  # the emitted prompt's variants: in a moment
        return costs if costs is not None else self._local_costs(name, list(entries))

    def _whole_kept_costs(self, name: str, entries: list[Any]) -> list[int]:
        """Trace costs the item model and small prompts cannot give: from the emitted prompt's variant
        counts where the counter has them, else every prefix counted whole (as the reference does)."""
        costs = self._slice_kept_costs(name, entries)
        return costs if costs is not None else PlanCounts.kept_costs(self, name, entries)

    def _local_costs(self, name: str, entries: list[Any]) -> list[int]:
        """Trace costs of entries the item model does not cover.

        A section of system messages at the head of the prompt is counted from a small prompt. Tool
        calls and results (with plain text around them) too: what each adds comes from the section
        between its neighbours, and whether the template accepts the prompt cut after it (the
        reference gives a refused cut 0 tokens) from the whole prompt's outline, every text replaced by
        a letter, which counts in a moment. Where the small prompt and the outline disagree on that,
        and for anything else (text starting with whitespace, a system message among the entries), the
        complete prompt is counted, as the reference does."""
        if name in self.into or not entries or self._reply_rewritten_before(name):
            return self._whole_kept_costs(name, entries)
        if all(m.role == "system" for m in entries):
            return self._system_costs(name, entries)
        before, after = self._neighbours(name)
        textual = [m for m in entries + [before, after] if m is not None and m.role != "tool" and not m.tool_calls]
        if (any(m.role == "system" for m in entries) or any(not _plain(m) for m in textual if m.role != "system")
                or any(_joins(a, b) for a, b in zip([before] + entries, entries + [after]))):
            return self._whole_kept_costs(name, entries)
        if self._systems(name) and (any(m.role == "user" for m in entries) or _joins(before, after)):
            return self._whole_kept_costs(name, entries)  # the start of the last run of user messages may move
        lead, tail = self._turn_opened(name, self._lead(name, before)), self._trail(name, after)
        if lead is None or self._closes_long(name):
            return self._whole_kept_costs(name, entries)
        blocks = self._blocks(name)
        host = next((m for m in entries if m.role == "user"), None) if blocks else None
        chats = [m.chat() if m is not host else m.chat().model_copy(update={"content": self._carrying(
            m.content or "", blocks)}) for m in entries]
        values: list[int | None] = []
        closings = set()
        bare = self._bare.get(name)  # the section left empty: the same for every entry asked until a commit
        if bare is None:
            bare = self._bare[name] = (self._small_or_none(lead + tail), self._accepts(name, []))
        for k in range(len(entries) + 1):
            value, accepted = bare if k == 0 else (self._small_or_none(lead + chats[:k] + tail),
                                                   self._accepts(name, entries[:k]))
            if (value is not None) != (accepted is not None):
                return self._whole_kept_costs(name, entries)
            closings.add(accepted)
            values.append(value)
        if "filled" in closings or self._systems(name) and {"plain", "closed"} <= closings:
            return self._whole_kept_costs(name, entries)  # a filler turn no small prompt has, or the system text
            # going to the closing turn in some only
        return [b - a if a is not None and b is not None else 0 for a, b in zip(values, values[1:])]

    def _accepts(self, name: str, entries: list[Any]) -> str | None:
        """How the template takes the whole prompt with section ``name`` holding ``entries``, as
        ``total`` counts it: "plain", "closed" (with an empty user turn after it), "filled" (with an empty turn
        between two of one role) or ``None`` (refused). Judged from the prompt's outline: roles, tool calls and which texts are empty."""
        hosts = {id(next((m for m in self.current[t] if m.role == "user"), None)) for t, sources in self.sources.items()
                 if any(self.current[s] for s in sources)}
        outline = []
        for section in self.message_sections:
            for m in (entries if section == name else self.current[section]):
                text = "x" if (m.content or id(m) in hosts) else m.content
                outline.append(ChatMessage(role=m.role, content=text, tool_calls=m.tool_calls,
                                           tool_call_id=m.tool_call_id))
        if not outline:
            outline = [ChatMessage(role="user", content="")]
        refuses = self.counter.refuses_surely  # (a refusal known from the roles is not counted to learn it)
        # as ``total`` counts it while budgeting: as it is, else through ``countable_variants``: an empty user turn after
        # a closing reply ("closed"), or an empty turn between two messages of one role ("filled": Mistral joins two
        # replies, one with tool calls, into one it refuses), which no small prompt makes
        def prompts():
            yield outline
            yield from countable_variants(outline)  # (made only once the prompt as it is is refused)

        kinds = ["plain"] + (["closed"] if outline[-1].role == "assistant" else []) + ["filled"]
        for kind, prompt in zip(kinds, prompts()):
            before = self.counter.full_counts
            try:
                if not refuses(prompt):
                    self.counter.count(prompt, self.tools)
                    return kind
            except CounterError:
                pass
            finally:
                self.probe_counts += self.counter.full_counts - before
        return None

    def _system_costs(self, name: str, entries: list[Any]) -> list[int]:
        """Trace costs of a section of system messages at the head of the prompt. Templates put the
        system text first (with the tool definitions) or, as Mistral does, before the first message of
        the last run of user messages: the small prompt holds the system messages, the tools and that
        message (its text cut in its middle)."""
        at = self.message_sections.index(name)
        head = [m for s in self.message_sections[:at] for m in self.current[s]]
        rest = [m for s in self.message_sections[at + 1:] for m in self.current[s]]
        start = _last_run_start(rest, False)
        if (head or start is None or any(m.role == "system" for m in rest)
                or rest[0].role != "user" or rest[-1].role != "user"):
            # the only system messages, at the head (tools stand apart, or this is not the fast method),
            # a prompt that starts and ends with a user message (templates treat the first system
            # message and the last turn specially)
            return super().kept_costs(name, entries)
        host = rest[start]
        if not _plain(host):  # leading whitespace runs the system text's seam on into what follows
            return super().kept_costs(name, entries)
        probe: list[ChatMessage] = []
        tail = [_stand_in(host, self._text(host))]
        values = []
        for k in range(len(entries) + 1):
            before = self.counter.full_counts
            try:
                values.append(self._count(probe + [m.chat() for m in entries[:k]] + tail))  # (the span memo's)
            except CounterError:
                return super().kept_costs(name, entries)
            finally:
                self.probe_counts += self.counter.full_counts - before
        return [b - a for a, b in zip(values, values[1:])]
