"""How a plan's assembly counts: the complete prompt every time (reference), or item by item (default).

A plan asks one kind of question over and over: what does section S cost with entries E, the
rest of the prompt as committed so far (``T(S=E) - T(S=[])``)? Strategies ask it once per entry
they try, and the trace asks it once per entry it reports.

- :class:`PlanCounts` (``reference=True``) answers every question by rendering and counting the
  complete prompt twice, as seed 002 says: exact, and its cost grows with entries times prompt size.
- :class:`FastPlanCounts` (the default) answers from what each entry adds where it is inserted:
  its text's tokens (counted once per content and counter) plus a constant for its place. The
  constant is keyed by the kinds of message before it, itself and after it and the characters at
  the ends of its text; where a template may join two messages of one role into one text (Mistral
  joins consecutive user messages), by the characters at that seam; where an entry moves the start
  of the last run of user messages (Mistral puts the system text there), by the seams the system
  text leaves and meets. Each constant is measured from two small probe prompts (the entry and its
  neighbours, long texts cut in the middle, no tools) and checked against a second entry with the
  same key; two that disagree leave the key to complete counts. Evidence blocks placed into a user
  message add their text plus a constant from three small text counts. Tool calls and results,
  system messages and text that starts with whitespace are counted from small prompts (trace) or
  whole (decisions); so is every count a strategy asks for that does not declare, with
  ``thresholds(budget_tokens)``, which budgets it compares counts with. A count that lands within
  ``NEAR_ALLOWANCE`` of such a budget is counted whole and checked; the emitted prompt is always
  counted whole and must equal the running prediction. Any disagreement raises
  :class:`PredictionMismatch`, and the assembler starts again by the reference method and says so
  in the result's ``counting_note``.

Constants are kept on the counter per set of tools and system texts, so a replay of the same plan
(a budget edit) neither probes nor tokenises again.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Mapping, Sequence

from ..alternation import countable_variants
from ..contracts import ChatMessage, ToolDefinition
from ..counting import TokenCounter
from ..errors import ContextBudgetError, CounterError, PromptNotCountable
from .seams import thresholds_of

# A predicted count this close to a budget it is compared with is counted whole before it decides.
NEAR_ALLOWANCE = 4
_UNSTABLE = "unstable"  # a constant two entries disagreed on, or that could not be measured
_MARKS = ("constants found unstable",)  # a key no constant has: how many were marked ``_UNSTABLE`` in its memo


def mark_unstable(memo: dict, key: tuple) -> None:
    """Mark a constant unstable in ``memo`` (a counter's, shared by every assembly with it), counting the marks there:
    what a walk took as known since the count last read is still known while it is unchanged."""
    memo[key] = _UNSTABLE
    memo[_MARKS] = memo.get(_MARKS, 0) + 1


class PredictionMismatch(Exception):
    """A prediction disagreed with a complete count: the plan goes back to the reference method."""


def _plan_memo(counter: TokenCounter) -> dict:
    """Constants of the counter's template, learned once per counter and kept across assemblies."""
    memo = getattr(counter, "_plan_constants", None)
    if memo is None:
        memo = {}
        counter._plan_constants = memo
    return memo


def forget_constants(counter: TokenCounter) -> None:
    """After a mismatch, nothing learned from this counter is trusted again."""
    _plan_memo(counter).clear()


class PlanCounts:
    """The reference: every question is answered by counting the complete prompt."""

    reference = True

    def __init__(self, counter: TokenCounter, states: Sequence[Any], tools: Sequence[ToolDefinition],
                 render: Callable[[Sequence[Any], Mapping[str, Sequence[Any]]], list[ChatMessage]]) -> None:
        self.counter = counter
        self.states = list(states)
        self.tools = list(tools)
        self._render = render
        self.current: dict[str, list[Any]] = {st.plan.name: [m for m in st.entries if m.pinned] for st in states}
        self.full_counts = 0  # complete-prompt tokenisations (cache misses)
        self.probe_counts = 0  # small prompts tokenised (the fast method's probes)
        self.predicted = 0  # questions answered from item costs

    # ---- complete counts

    def total(self, replaced: Mapping[str, Sequence[Any]] | None = None, *, exact: bool = False) -> int:
        """Complete count of the prompt with some sections replaced. While budgeting, a partial
        prompt the template refuses (one ending with an assistant message) is counted with an
        empty user turn after it; the prompt that is emitted is counted ``exact``."""
        view = dict(self.current)
        view.update(replaced or {})
        messages = self._render(self.states, view)
        if not messages:
            messages = [ChatMessage(role="user", content="")]
        before = self.counter.full_counts
        try:
            self._counted_text = None
            value = self._count(messages)
            if self.counter.full_counts != before:  # counted whole just now, not from the cache
                self._last_whole = (view, value)
                self._last_text = self._counted_text
            return value
        except CounterError as exc:
            if not exact:
                for variant in countable_variants(messages):
                    try:
                        return self.counter.count(variant, self.tools)
                    except CounterError:
                        pass
            raise PromptNotCountable(f"the prompt cannot be counted: {exc}") from exc
        finally:
            self.full_counts += self.counter.full_counts - before

    def _count(self, messages: list[ChatMessage]) -> int:
        """One complete count of a prompt (the reference method: the counter's own, cached by content)."""
        return self.counter.count(messages, self.tools)

    def _count_whole(self, messages: list[ChatMessage]) -> tuple[int, list[int] | None]:
        """The emitted prompt tokenised whole, never from the count cache (and its ids, where kept)."""
        return self.counter.count_whole(messages, self.tools)

    def measure(self, replaced: Mapping[str, Sequence[Any]]) -> int | None:
        """A count for the trace; a partial prompt no template accepts is ``None``."""
        try:
            return self.total(replaced)
        except ContextBudgetError:
            return None

    def whole_cost(self, name: str, entries: Sequence[Any]) -> int:
        return self.total({name: list(entries)}) - self.total({name: []})

    # ---- the questions the assembler asks

    def pinned_total(self) -> int:
        return self.total()

    def running_total(self) -> int:
        return self.total()

    def pins_cost(self, name: str) -> int:
        """What section ``name``'s pinned entries (all it holds so far) cost in the prompt."""
        return self.whole_cost(name, self.current[name])

    def cost(self, name: str, entries: Sequence[Any], thresholds: tuple[int, ...] | None = None) -> int:
        """``T(S=entries) - T(S=[])`` with the rest of the prompt as committed."""
        return self.whole_cost(name, entries)

    def confirmed(self, name: str, entries: Sequence[Any], value: int) -> int:
        """``value`` (a cost about to be reported in an error), as a complete count says it."""
        return value

    def strategy_count(self, name: str, strategy: Any, limit: int) -> Callable[[Sequence[Any]], int]:
        thresholds = thresholds_of(strategy, limit)
        return lambda entries: self.cost(name, entries, thresholds)

    def compact(self, name: str, strategy: Any, entries: tuple, limit: int) -> Any:
        """``strategy``'s outcome for section ``name`` over its ``limit``, its counts asked here."""
        return strategy.compact(entries, budget_tokens=limit, count=self.strategy_count(name, strategy, limit))

    def commit(self, name: str, entries: Sequence[Any]) -> None:
        self.current[name] = list(entries)

    def settle(self) -> None:
        """Before an error is raised: every count so far was complete, so there is nothing to check."""

    final_ids: list[int] | None = None  # the emitted prompt's token ids, where the counter kept them
    # the emitted prompt's messages as counted and their rendered text, where the count gave it (``count_and_render_text``)
    final_rendered: tuple[list, str] | None = None
    _last_whole: tuple[dict, int] | None = None  # the prompt last counted whole by ``total`` and its count
    # its messages and rendered text, where that count gave the text (``_counted_text``, set by ``_count``)
    _last_text: tuple[list, str] | None = None
    _counted_text: tuple[list, str] | None = None
    final_value: int | None = None  # the emitted prompt's count, once counted

    def final_total(self) -> int:
        """The emitted prompt, counted whole: by the complete count just before, where that was of this
        very prompt (a check of the last section's allowance counts it), else once more (never from
        the count cache)."""
        messages = self._render(self.states, self.current)
        if not messages:
            return self.total(exact=True)
        last = self._last_whole
        if last is not None and all(len(last[0][k]) == len(v) and all(map(operator.is_, last[0][k], v))
                                    for k, v in self.current.items()):
            self.final_value = last[1]
            text = self._last_text  # (its text: the template check and the variant counts render nothing again)
            if text is not None and len(text[0]) == len(messages) and all(
                    a is b or a == b for a, b in zip(text[0], messages)):
                self.final_rendered = (messages, text[1])
            return last[1]
        before = self.counter.full_counts
        try:
            value, self.final_ids = self._count_whole(messages)
        except CounterError as exc:
            raise PromptNotCountable(f"the prompt cannot be counted: {exc}") from exc
        self.full_counts += max(1, self.counter.full_counts - before)  # (count_whole_reusing_texts tallies none)
        self.final_value = value
        return value

    def kept_costs(self, name: str, entries: Sequence[Any]) -> list[int]:
        """What each kept entry added, in order, to the final prompt (prefixes of the section)."""
        costs = []
        before = self.measure({name: []})
        for k in range(len(entries)):
            after = self.measure({name: list(entries[:k + 1])})
            costs.append(after - before if after is not None and before is not None else 0)
            before = after
        return costs

    def alone_costs(self, name: str, entries: Sequence[Any]) -> list[int]:
        """``alone_cost`` of each of ``entries``."""
        return [self.alone_cost(name, m) for m in entries]

    def alone_cost(self, name: str, entry: Any) -> int:
        """What a dropped entry would have added alone to the final prompt's section."""
        with_it, without = self.measure({name: [entry]}), self.measure({name: []})
        return with_it - without if with_it is not None and without is not None else 0
