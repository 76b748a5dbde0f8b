"""The reference builder: every admission attempt renders and counts the whole candidate request
(seed 003's method, literally). ``core.assembly_fast`` predicts the same counts with far fewer."""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from .contracts import Request
from .counting import TokenCounter
from .render import Selection, render
from .result import TraceEntry, trace_entry


class PredictionMismatch(Exception):
    """A shortcut disagreed with a complete count: the request goes back to the reference method."""


def _selection_memo(counter: TokenCounter) -> "OrderedDict":
    memo = getattr(counter, "_selection_memo", None)
    if memo is None:
        memo = OrderedDict()
        counter._selection_memo = memo
    return memo


class Builder:
    """Walks selections forward, counting each step against the previous one (the reference)."""

    # Whether this builder's complete counts may reuse the counter's text counts for the request's spans
    # (``TokenCounter.count_reusing_texts``, the span memo). The reference never does: it is the independent check,
    # and its counts by selection are kept apart from those that did (another key in the memo).
    reuses_texts = False

    def __init__(self, request: Request, counter: TokenCounter) -> None:
        self.request = request
        self.counter = counter
        self.full_counts = 0  # complete-request tokenisations this assembly made
        self.probe_counts = 0  # small probe requests (one or two items) it tokenised
        self.tokenised: tuple[Selection, int, str | None] | None = None  # the last selection counted whole
        # (and the text its count rendered, where the counter gave it)
        parts = (request.instructions, request.tools, request.history, request.current, request.tool_exchanges,
                 request.evidence)
        self._memo = (_selection_memo(counter), parts, tuple(map(id, parts)))
        self.selection = Selection()
        self.tokens = self.count(self.selection)
        self.trace: list[TraceEntry] = [trace_entry(
            "template", "chat-template", "required", self.tokens,
            "chat template, role markers and generation prefix with every section empty")]

    def _render_count(self, selection: Selection, whole: bool = False) -> int:
        """The counter's count of ``selection``'s render, remembered per request content: a replay
        shares the unchanged parts of its request, so it neither renders nor tokenises them again.
        ``whole`` (the default method's near-allowance checks: large requests no other content renders): counted
        with the counter's ``count_check_and_text`` where it has one (exact, from its pieces' cached counts), else tokenised
        whole (``count_whole``, or ``count_whole_reusing_texts`` under the span memo), without the counter's cache,
        whose key (a JSON dump of the whole request) costs a quarter of a count; remembered by selection as every
        count here is."""
        memo, parts, parts_key = self._memo
        key = (parts_key, selection, True) if self.reuses_texts else (parts_key, selection)
        hit = memo.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[1], parts)):
            return hit[0]
        rendered = self._render(selection)
        if whole:  # the counter's exact count from cached pieces where it has one (an hf: counter), else whole
            check = getattr(self.counter, "count_check_and_text", None)
            both = None if check is None else check(rendered.messages, rendered.tools)
            if both is not None:  # the final count may be this one, with the text it rendered
                value = both[0]
                self.tokenised = (selection, value, both[1])
            else:
                value = (self.counter.count_whole_reusing_texts if self.reuses_texts
                         else self.counter.count_whole)(rendered.messages, rendered.tools)[0]
                self.full_counts += 1
                self.tokenised = (selection, value, None)  # tokenised whole: the final count may be this one
        elif self.reuses_texts:
            value = self.counter.count_reusing_texts(rendered.messages, rendered.tools)
        else:
            value = self.counter.count(rendered.messages, rendered.tools)
        memo[key] = (value, parts)  # holding the parts keeps their ids from being reused
        if len(memo) > 4096:
            memo.popitem(last=False)
        return value

    def _render(self, selection: Selection):
        return render(self.request, selection)

    def remember_counts_in(self, memo: "OrderedDict", owner: object) -> None:
        """Remember this assembly's counts by selection in ``memo``, shared by every request with ``owner``'s
        content (``core.assembly_memo``: a replay's request, unpickled in a worker, is another object)."""
        self._memo = (memo, (owner,), (id(owner),))

    def count(self, selection: Selection) -> int:
        """Complete count of the request as ``selection`` renders it."""
        before = self.counter.full_counts
        value = self._render_count(selection)
        if self.counter.full_counts != before:  # tokenised whole here (not a count remembered from before)
            self.full_counts += self.counter.full_counts - before
            self.tokenised = (selection, value, None)
        return value

    def cost(self, selection: Selection) -> tuple[int, int]:
        total = self.count(selection)
        return total, total - self.tokens

    def attempt(self, section: str, index: int, candidate: Callable[[], Selection],
                decides: bool = True) -> tuple[int, int]:
        """Complete count and marginal cost of admitting the item ``candidate()`` adds (``decides`` is
        False when the item is dropped whatever its count: history older than its first misfit)."""
        return self.cost(candidate())

    def take(self, selection: Selection, total: int) -> None:
        self.selection = selection
        self.tokens = total

    def require_item(self, section: str, index: int, item_id: str, selection: Selection, reason: str) -> None:
        total, marginal = self.cost(selection)
        self.take(selection, total)
        self.trace.append(trace_entry(section, item_id, "required", marginal, reason))

    def check_required(self) -> None:
        """The reference counted every step whole: nothing to check."""
