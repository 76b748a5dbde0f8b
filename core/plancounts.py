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

import functools
import json
import operator
import unicodedata
from typing import Any, Callable, Mapping, Sequence

from .contracts import ChatMessage, Evidence, ToolCall, ToolDefinition
from .alternation import countable_variants
from .counting import TokenCounter
from .errors import ContextBudgetError, CounterError, PromptNotCountable
from .render import evidence_block, user_content

# A predicted count this close to a budget it is compared with is counted whole before it decides.
NEAR_ALLOWANCE = 4
_UNSTABLE = "unstable"  # a constant two entries disagreed on, or that could not be measured


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


SEAM_CHARS = 64  # text kept on each side of a seam in a constant's key (to the next whitespace)
STAND_IN_CHARS = 2048  # text kept at each end of a long message in a small probe prompt


def _head(text: str | None, size: int = SEAM_CHARS) -> str:
    """The start of ``text``: ``size`` characters, then on to the next whitespace (so the piece of
    text touching the seam is whole)."""
    if text is None or len(text) <= size:
        return text or ""
    end = next((i for i in range(size, len(text)) if text[i].isspace()), len(text))
    return text[:end]


def _tail(text: str | None, size: int = SEAM_CHARS) -> str:
    """The end of ``text``: ``size`` characters, back to a whitespace character (kept)."""
    if text is None or len(text) <= size:
        return text or ""
    start = next((i for i in range(len(text) - size, -1, -1) if text[i].isspace()), 0)
    return text[start:]


def _last_run_start(messages: list[Any], users_follow: bool) -> int | None:
    """Where the last run of user messages starts: the run ending the list when user messages follow
    it (they join it), else the list's last run; ``None`` when there is none."""
    i = len(messages)
    if not users_follow:
        while i > 0 and messages[i - 1].role != "user":
            i -= 1
    if i == 0 or messages[i - 1].role != "user":
        return None
    while i > 0 and messages[i - 1].role == "user":
        i -= 1
    return i


SEAM_RUN = 16  # a longer run of punctuation at a seam puts the text around it in the key


@functools.lru_cache(maxsize=65536)
def _seam_end(text: str | None) -> tuple[str, str]:
    """What of a text's end can reach across a seam: its closing run of characters that are neither
    letters nor digits (a pre-tokenizer may join it with the separator after it) and the class of
    the character before that run. A long run stands for itself with the text before it."""
    text = text or ""
    i = len(text)
    while i > 0 and not text[i - 1].isalnum():
        i -= 1
    run = text[i:]
    if len(run) > SEAM_RUN:
        return ("text", _tail(text))
    return (run, _char_class(text[i - 1]) if i > 0 else "")


@functools.lru_cache(maxsize=65536)
def _seam_start(text: str | None) -> tuple[str, str]:
    """What of a text's start can reach across a seam (see ``_seam_end``)."""
    text = text or ""
    i = 0
    while i < len(text) and not text[i].isalnum():
        i += 1
    run = text[:i]
    if len(run) > SEAM_RUN:
        return ("text", _head(text))
    return (run, _char_class(text[i]) if i < len(text) else "")


def _stand_in(message: Any, text: str) -> ChatMessage:
    """A message for a small probe prompt: its role and tool calls, and its text with a long middle
    cut out (what a message adds depends on the seams beside it, not on the far side of its neighbours)."""
    head, tail = _head(text, STAND_IN_CHARS), _tail(text, STAND_IN_CHARS)
    if len(head) + len(tail) < len(text):
        text = head + " " + tail
    return message.chat().model_copy(update={"content": text})


def passage(message: Any) -> Evidence:
    """A plan message of a passage section, as the evidence block it renders to."""
    return Evidence(id=message.id or "", source=message.source or "", text=message.content or "",
                    score=message.score or 0.0)


def _kind(message: Any) -> str | None:
    if message is None:
        return None
    return message.role + ("+calls" if message.tool_calls else "")


def _char_class(char: str) -> str:
    if char.isspace():
        return "space"
    category = unicodedata.category(char)
    return category[0] if category[0] in "LN" else category


_STUB = ChatMessage(role="user", content="")  # the empty user turn after a prompt a template will not end on


def _needs_closing_turn(counter: TokenCounter) -> bool:
    """Whether the counter's template refuses a prompt that ends with an assistant message (Mistral):
    then ``total`` counts such a prompt with an empty user turn after it."""
    known = getattr(counter, "_refuses_assistant_end", None)
    if known is None:
        try:
            counter.count([ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="b")], [])
            known = False
        except CounterError:
            known = True
        counter._refuses_assistant_end = known
    return known


_TOOLS_APART: dict[tuple, bool] = {}


def _tools_stand_apart(counter: TokenCounter, tools: tuple, systems: tuple) -> bool:
    """Whether the tool definitions add the same tokens whatever the conversation after the system
    messages looks like (a first message of either role, texts starting with a letter or not): then
    probes without them measure what the prompt with them does. Asked once per counter, tools and
    system messages."""
    key = (id(counter), json.dumps([[t.model_dump(mode="json") for t in tools], [m.content for m in systems]]))
    known = _TOOLS_APART.get(key)
    if known is not None:
        return known
    shapes = [[("user", "Where is it?")], [("user", "(see below) where")], [("assistant", "Hello."), ("user", "Ok.")],
              [("user", "a"), ("assistant", "b"), ("user", "c")], [("user", "a"), ("user", "b")]]
    call = ToolCall(id="probecall", name=tools[0].name, arguments={})
    shapes.append([ChatMessage(role="assistant", tool_calls=[call]),
                   ChatMessage(role="tool", content="{}", tool_call_id="probecall"), ("user", "Ok.")])
    shapes.append([("user", "a"), ChatMessage(role="assistant", tool_calls=[call]),
                   ChatMessage(role="tool", content="{}", tool_call_id="probecall"), ("user", "Ok.")])
    added = set()
    try:
        for shape in shapes:
            messages = list(systems) + [m if isinstance(m, ChatMessage) else ChatMessage(role=m[0], content=m[1])
                                        for m in shape]
            added.add(counter.count(messages, list(tools)) - counter.count(messages, []))
    except CounterError:
        added = {None, 0}
    apart = len(added) == 1
    if len(_TOOLS_APART) > 256:
        _TOOLS_APART.clear()
    _TOOLS_APART[key] = apart
    return apart


def _compress_runs(messages: list[Any]) -> list[Any]:
    """A run of consecutive user messages cut to its first and last: what is between is joined to
    them either way, and the seams at the run's ends are what a small probe must keep."""
    out: list[Any] = []
    for i, m in enumerate(messages):
        inside = (m.role == "user" and 0 < i < len(messages) - 1 and messages[i - 1].role == "user"
                  and messages[i + 1].role == "user")
        if not inside:
            out.append(m)
    return out


def _joins(first: Any, second: Any) -> bool:
    """Whether a template may join two neighbouring messages into one text: same role, same kind."""
    return first is not None and second is not None and _kind(first) == _kind(second)


def _plain(message: Any) -> bool:
    """A message whose cost is its text's tokens plus a constant: user or assistant text, no tool
    calls, starting with no whitespace (Mistral runs leading whitespace into the system text's seam).
    Trailing whitespace is allowed: the constant is learned per closing run of the text."""
    content = message.content
    return (message.role in ("user", "assistant") and not message.tool_calls and bool(content)
            and not content[0].isspace() and bool(content.strip()))


def thresholds_of(strategy: Any, limit: int) -> tuple[int, ...] | None:
    """The budgets a strategy compares ``count`` with, if it declares them (``thresholds(limit)``)."""
    declare = getattr(strategy, "thresholds", None)
    if not callable(declare):
        return None
    try:
        values = tuple(int(v) for v in declare(limit))
    except Exception:  # a third party's declaration that does not work is no declaration
        return None
    return values



def _where_lists_part(old: list[Any], new: list[Any]) -> tuple[int, int, int] | None:
    """Where ``new`` differs from ``old`` by one change in one place (entries dropped, added or replaced
    there; the same objects before and after it): the first index that differs, ``len(old) - len(new)``
    and the index in ``new`` from which the two hold the same objects again. ``None`` for any other change."""
    step, p = 1, 0
    limit = min(len(old), len(new))
    while p < limit and old[p] is new[p]:  # gallop over the common start: strategies change the front
        span = min(step, limit - p)
        if all(map(operator.is_, old[p:p + span], new[p:p + span])):
            p += span
            step *= 2
        else:
            step = 1
            p += 1
    d = len(old) - len(new)
    rejoin = p + max(-d, 0) if d else p + 1
    if rejoin > len(new) or not all(map(operator.is_, new[rejoin:], old[rejoin + d:])):
        return None
    return p, d, rejoin


def _back(state: tuple, n: int) -> tuple:
    """A walk's state before position ``n`` with its run starts as distances back from ``n`` (so a state
    taken over from a list the entries moved in still holds)."""
    previous, text, trail, last, previous_user = state
    return (previous, text, None if trail is None else n - trail, None if last is None else n - last, previous_user)


def _at(state: tuple, n: int) -> tuple:
    """``_back``'s state with its run starts as positions again."""
    previous, text, trail, last, previous_user = state
    return (previous, text, None if trail is None else n - trail, None if last is None else n - last, previous_user)


def _same_run(distance: int | None, start: int | None, n: int, rejoined: int) -> bool:
    """Whether a run start (a position in this list, before position ``n``) is the one the last list's
    state had (``distance`` back), among the entries both lists share from where they meet again (a start
    before that spans the change)."""
    if distance is None or start is None:
        return distance is None and start is None
    return start >= rejoined and distance == n - start


def _same_context(a: tuple, b: tuple) -> bool:
    """Whether two chain contexts are the same committed prompt around the section (by identity)."""
    for x, y in zip(a[:-1], b[:-1]):
        if isinstance(x, list):
            if len(x) != len(y) or not all(map(operator.is_, x, y)):
                return False
        elif not (x is y or (isinstance(x, (str, bool, tuple)) and x == y)):
            return False
    return True


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
            return self.counter.count(messages, self.tools)
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

    def commit(self, name: str, entries: Sequence[Any]) -> None:
        self.current[name] = list(entries)

    final_ids: list[int] | None = None  # the emitted prompt's token ids (its text decodes from them)

    def final_total(self) -> int:
        """The emitted prompt, tokenised once more (never from a cache)."""
        messages = self._render(self.states, self.current)
        if not messages:
            return self.total(exact=True)
        before = self.counter.full_counts
        try:
            ids = self.counter.token_ids(messages, self.tools)
        except CounterError as exc:
            raise PromptNotCountable(f"the prompt cannot be counted: {exc}") from exc
        self.full_counts += 1 + self.counter.full_counts - before
        self.final_ids = ids
        return len(ids)

    def kept_costs(self, name: str, entries: Sequence[Any]) -> list[int]:
        """What each kept entry added, in order, to the final prompt (prefixes of the section)."""
        costs = []
        before = self.measure({name: []})
        for k in range(len(entries)):
            after = self.measure({name: list(entries[:k + 1])})
            costs.append(after - before if after is not None and before is not None else 0)
            before = after
        return costs

    def alone_cost(self, name: str, entry: Any) -> int:
        """What a dropped entry would have added alone to the final prompt's section."""
        with_it, without = self.measure({name: [entry]}), self.measure({name: []})
        return with_it - without if with_it is not None and without is not None else 0


class FastPlanCounts(PlanCounts):
    """Answers from item costs where it can, counts whole where it must, and checks itself."""

    reference = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memo = _plan_memo(self.counter)
        self._scope_memo: dict | None = None
        self._host_text: tuple[Any, str] = ((), "")
        self._evidence_memo: dict[int, tuple[Any, Evidence, int | None]] = {}
        self._block_ids: dict[int, int] = {}
        self._steps: dict[tuple, tuple] = {}  # a chain step's constant, by the objects around it
        self._block_keep: list[Any] = []  # messages whose ids key _block_ids stay alive
        self._first_memo: dict[tuple[int, str], tuple[Any, int]] = {}
        self._chain_cache: dict[str, tuple] = {}  # per section: the last list walked, its costs and states
        self._walk_end: tuple | None = None
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

    def pinned_total(self) -> int:
        self.running = self.total()
        self._running_checked = True
        return self.running

    def running_total(self) -> int:
        """Exact: a section's limit is worked out from it, and a limit off by a token would decide
        differently from the reference while every count near it agreed with itself."""
        assert self.running is not None
        if not self._running_checked:
            exact = self.total()
            if exact != self.running:
                raise PredictionMismatch(f"the committed sections count {exact} tokens, the item costs predicted "
                                         f"{self.running}")
            self._running_checked = True
        return self.running

    def pins_cost(self, name: str) -> int:
        return self.whole_cost(name, self.current[name]) if self.current[name] else 0

    def commit(self, name: str, entries: Sequence[Any]) -> None:
        entries = list(entries)
        old, new = self._gain(name, self.current[name]), self._gain(name, entries)
        if old is None or new is None:  # a section the model does not cover: count the whole prompt
            super().commit(name, entries)
            self.running = self.total()
            self._running_checked = True
            return
        super().commit(name, entries)
        self.running += new - old
        self._running_checked = False

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
            return self.whole_cost(name, entries)
        self.predicted += 1
        if any(abs(predicted - t) <= NEAR_ALLOWANCE for t in thresholds):
            exact = self.whole_cost(name, entries)
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
        return costs if costs is not None else self._local_costs(name, list(entries))

    def alone_cost(self, name: str, entry: Any) -> int:
        costs = self._chain(name, [entry])
        return costs[0] if costs is not None else self._local_costs(name, [entry])[0]

    def _local_costs(self, name: str, entries: list[Any]) -> list[int]:
        """Trace costs of entries the item model does not cover.

        A section of system messages at the head of the prompt is counted from a small prompt. Tool
        calls and results (with plain text around them) too: what each adds comes from the section
        between its neighbours, and whether the template accepts the prompt cut after it (the
        reference gives a refused cut 0 tokens) from the whole prompt's outline, every text replaced by
        a letter, which counts in a moment. Where the small prompt and the outline disagree on that,
        and for anything else (text starting with whitespace, a system message among the entries), the
        complete prompt is counted, as the reference does."""
        if name in self.into or not entries:
            return super().kept_costs(name, entries)
        if all(m.role == "system" for m in entries):
            return self._system_costs(name, entries)
        before, after = self._neighbours(name)
        textual = [m for m in entries + [before, after] if m is not None and m.role != "tool" and not m.tool_calls]
        if (any(m.role == "system" for m in entries) or any(not _plain(m) for m in textual if m.role != "system")
                or any(_joins(a, b) for a, b in zip([before] + entries, entries + [after]))):
            return super().kept_costs(name, entries)
        if self._systems(name) and (any(m.role == "user" for m in entries) or _joins(before, after)):
            return super().kept_costs(name, entries)  # the start of the last run of user messages may move
        lead, tail = self._lead(name, before), self._trail(name, after)
        blocks = self._blocks(name)
        host = next((m for m in entries if m.role == "user"), None) if blocks else None
        chats = [m.chat() if m is not host else m.chat().model_copy(update={"content": user_content(
            m.content or "", [self._evidence(b) for b in blocks])}) for m in entries]
        values: list[int | None] = []
        closings = set()
        for k in range(len(entries) + 1):
            try:
                value: int | None = self._count_small(lead + chats[:k] + tail)
            except CounterError:
                value = None
            accepted = self._accepts(name, entries[:k])
            if (value is not None) != (accepted is not None):
                return super().kept_costs(name, entries)
            closings.add(accepted)
            values.append(value)
        if self._systems(name) and {"plain", "closed"} <= closings:
            return super().kept_costs(name, entries)  # the system text goes to the closing turn in some only
        return [b - a if a is not None and b is not None else 0 for a, b in zip(values, values[1:])]

    def _accepts(self, name: str, entries: list[Any]) -> str | None:
        """How the template takes the whole prompt with section ``name`` holding ``entries``, as
        ``total`` counts it: "plain", "closed" (with an empty user turn after it) or ``None``
        (refused). Judged from the prompt's outline: roles, tool calls and which texts are empty."""
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
        before = self.counter.full_counts
        try:
            self.counter.count(outline, self.tools)
            return "plain"
        except CounterError:
            if outline[-1].role != "assistant":
                return None
            try:
                self.counter.count(outline + [ChatMessage(role="user", content="")], self.tools)
                return "closed"
            except CounterError:
                return None
        finally:
            self.probe_counts += self.counter.full_counts - before

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
                values.append(self.counter.count(probe + [m.chat() for m in entries[:k]] + tail, self.tools))
            except CounterError:
                return super().kept_costs(name, entries)
            finally:
                self.probe_counts += self.counter.full_counts - before
        return [b - a for a, b in zip(values, values[1:])]

    # ---- the model

    def _gain(self, name: str, entries: list[Any]) -> int | None:
        if name in self.into:
            return self._passage_gain(name, entries)
        costs = self._chain(name, entries)
        return None if costs is None else sum(costs)

    def _placement(self, name: str) -> tuple[Any, list[Any], list[Any]]:
        """For passage section ``name``: its host (the target's first user message, or ``None``) and the
        committed passages of the sections placed into the same host before and after it."""
        target = self.into[name]
        host = next((m for m in self.current[target] if m.role == "user"), None)
        sources = self.sources[target]
        at = sources.index(name)
        earlier = [m for s in sources[:at] for m in self.current[s]]
        later = [m for s in sources[at + 1:] for m in self.current[s]]
        return host, earlier, later

    def _passage_gain(self, name: str, entries: list[Any]) -> int | None:
        """What the passages ``entries`` add to their host, in one sum (strategies ask this for every
        candidate list, so it is kept to C-level loops over cached block counts)."""
        host, earlier, later = self._placement(name)
        if host is None or not entries:
            return 0
        if not self._passage_host_ok(host):
            return None
        question = host.content
        placed = earlier + entries + later
        constant = self._block_constant(question, placed[:3]) if len(placed) > 1 else 0
        if constant is None:
            return None
        tokens = self._block_table()
        rest = earlier + later
        try:
            rest_sum = sum(map(tokens.__getitem__, map(id, rest))) if rest else 0
            entry_sum = sum(map(tokens.__getitem__, map(id, entries)))
        except KeyError:  # a strategy's own messages: count them once too
            for m in placed:
                if id(m) not in tokens:
                    tokens[id(m)] = self._block_tokens(m)
                    self._block_keep.append(m)
            rest_sum = sum(map(tokens.__getitem__, map(id, rest))) if rest else 0
            entry_sum = sum(map(tokens.__getitem__, map(id, entries)))

        def cost(first: Any, count: int, block_sum: int) -> int:
            return self._first_block(question, first) + block_sum - tokens[id(first)] + constant * (count - 1)

        with_them = cost(placed[0], len(placed), rest_sum + entry_sum)
        without = cost(rest[0], len(rest), rest_sum) if rest else 0
        return with_them - without

    def _block_table(self) -> dict[int, int]:
        """Block token counts by message identity, filled for every passage of the plan at first use."""
        if not self._block_ids:
            for st in self.states:
                if st.plan.into is not None:
                    for m in st.entries:
                        self._block_ids[id(m)] = self._block_tokens(m)
        return self._block_ids

    def _chain(self, name: str, entries: list[Any]) -> list[int] | None:
        """What each entry adds in turn, inserted after the previous one and before the next section,
        to the committed prompt. A strategy asks about one list after another, each a small change of
        the one before (an entry dropped at the front, a turn added): the walk over the entries resumes
        from the last list's state where the two lists part, and takes the last list's costs again
        from where its state is met again (so a 10,000-entry section is not walked 10,000 times)."""
        if name in self.into:
            return self._passage_chain(name, entries)
        ctx = self._chain_context(name)
        if ctx[2]:  # evidence blocks in the section's first user message: walk it whole
            return self._walk(ctx, entries, 0, ctx[-1], None)[0]
        cached = self._chain_cache.get(name)
        resume = None
        if cached is not None and cached[0] == self._epoch and _same_context(cached[1], ctx):
            resume = _where_lists_part(cached[2], entries)
        if resume is None:
            costs, states = self._walk(ctx, entries, 0, ctx[-1], None)
        else:
            p, d, rejoin = resume
            old_costs, old_states = cached[3], cached[4]
            costs, states = self._walk(ctx, entries, p, old_states[p] if p < len(old_states) else cached[5],
                                       (old_costs, old_states, d, rejoin))
            if costs is not None:
                costs, states = old_costs[:p] + costs, old_states[:p] + states
        if costs is not None and states is not None:
            end_state = self._walk_end
            self._chain_cache[name] = (self._epoch, ctx, list(entries), costs, states, end_state)
        return costs

    def _chain_context(self, name: str) -> tuple:
        """What a chain's costs depend on besides its entries: the committed prompt around the section."""
        before, after = self._neighbours(name)
        blocks = self._blocks(name)
        after_text = self._text(after)
        # Mistral puts the system text at the start of the last run of user messages (consecutive user
        # messages are joined into one): an entry that moves that start moves the seam of the system text
        systems = self._systems(name)
        at = self.message_sections.index(name)
        earlier = [m for s in self.message_sections[:at] for m in self.current[s] if m.role != "system"]
        later = [m for s in self.message_sections[at + 1:] for m in self.current[s] if m.role != "system"]
        later_users = [i for i, m in enumerate(later) if m.role == "user"]
        # does the last run of user messages after the section reach back to its first message?
        reaches = not later_users or all(m.role == "user" for m in later[:later_users[-1] + 1])
        follow = bool(later_users)
        stub_end = bool(systems) and not later and _needs_closing_turn(self.counter)
        after_seam = _seam_start(after_text) if after is not None else None
        # where the last run of user messages starts in earlier + entries so far (index), tracked as
        # entries are added: the run ending the sequence (trail) and the latest run (last)
        trail = last = None
        previous_user = False
        for i, m in enumerate(earlier):
            if m.role == "user":
                if not previous_user:
                    trail = last = i
                previous_user = True
            else:
                trail, previous_user = None, False
        state = _back((before, self._text(before), trail, last, previous_user), len(earlier))
        return (name, before, blocks, after, after_text, systems, earlier, later, reaches, follow, stub_end,
                after_seam, state)

    def _walk(self, ctx: tuple, entries: list[Any], k0: int, state: tuple, resume: tuple | None
              ) -> tuple[list[int] | None, list[tuple] | None]:
        """Costs of ``entries[k0:]`` and the walk's state before each, from ``state`` before entry ``k0``;
        with ``resume`` (the last list's costs and states, its offset and where the lists meet again), the
        last list's costs are taken over from the first entry whose state is the one it had there."""
        (name, before, blocks, after, after_text, systems, earlier, later, reaches, follow, stub_end,
         after_seam, _) = ctx
        host = next((k for k, m in enumerate(entries) if m.role == "user"), None) if blocks else None
        size = len(earlier)
        previous, previous_text, trail, last, previous_user = _at(state, size + k0)

        def item(i: int) -> Any:
            return earlier[i] if i < size else entries[i - size]

        costs: list[int] = []
        states: list[tuple] = []
        for k in range(k0, len(entries)):
            message = entries[k]
            if resume is not None and k >= resume[3]:
                old_costs, old_states, d, rejoin = resume
                was = old_states[k + d] if k + d < len(old_states) else None
                n = size + k
                if (was is not None and was[0] is previous and was[4] == previous_user
                        and _same_run(was[2], trail, n, size + rejoin) and _same_run(was[3], last, n, size + rejoin)):
                    self._walk_end = self._chain_cache[name][5]
                    return costs + old_costs[k + d:], states + old_states[k + d:]
            states.append(_back((previous, previous_text, trail, last, previous_user), size + k))
            if not _plain(message):
                return None, None
            text = user_content(message.content, [self._evidence(b) for b in blocks]) if host == k else message.content
            moves: list[Any] | None = None
            n = len(earlier) + k
            if message.role == "user":
                new_trail = trail if previous_user else n
                new_last = new_trail
            else:
                new_trail, new_last = None, last
            if systems and reaches:
                old = trail if follow else last
                new = new_trail if follow else new_last
                fallback = later[0] if follow else None
                old_first = item(old) if old is not None else fallback
                new_first = (message if new == n else item(new)) if new is not None else fallback
                if stub_end:  # a prompt ending with anything but a user message is counted with an empty
                    # user turn after it, and that turn is then where the system text goes
                    if not previous_user:
                        old, old_first = None, _STUB
                    if message.role != "user":
                        new, new_first = None, _STUB
                if old_first is not new_first:
                    if old_first is None or new_first is None:
                        return None, None
                    start = min(i for i in (old, new, n) if i is not None)
                    if n - start > 64:
                        return None, None
                    lead = _compress_runs([item(i) for i in range(start, n)])
                    if len(lead) > 16:
                        return None, None
                    moves = [lead, old_first, new_first]
            trail, last, previous_user = new_trail, new_last, message.role == "user"
            step = None
            if host != k:
                step = (id(previous), id(message), id(after), _seam_end(previous_text), after_seam,
                        (id(moves[1]), id(moves[2]), _seam_start(self._text(moves[1])),
                         _seam_start(self._text(moves[2]))) if moves is not None else None)
            hit = self._steps.get(step) if step is not None else None
            if (hit is not None and hit[2] is previous and hit[3] is message and hit[4] is after
                    and self._scope().get(hit[1]) != _UNSTABLE):
                constant = hit[0]
            else:
                constant, key = self._constant(name, previous, previous_text, message, text, after,
                                               after_text, systems if moves is not None else [], moves)
                if constant is None:
                    return None, None
                if step is not None:  # the objects are held, so their ids are not reused meanwhile
                    self._steps[step] = (constant, key, previous, message, after)
            if host == k:  # its text is the question's plus what the evidence blocks add
                placed = self._passages(message.content, blocks)
                if placed is None:
                    return None, None
                costs.append(self.counter.text_count(message.content) + placed + constant)
            else:
                costs.append(self.counter.text_count(text) + constant)
            previous, previous_text = message, text

        self._walk_end = _back((previous, previous_text, trail, last, previous_user), size + len(entries))
        return costs, states

    def _neighbours(self, name: str) -> tuple[Any, Any]:
        """The messages rendered just before and just after section ``name``."""
        at = self.message_sections.index(name)
        before = next((self.current[s][-1] for s in reversed(self.message_sections[:at]) if self.current[s]), None)
        after = next((self.current[s][0] for s in self.message_sections[at + 1:] if self.current[s]), None)
        return before, after

    def _lead(self, name: str, before: Any) -> list[ChatMessage]:
        """The message before section ``name`` for a small prompt, with the assistant message whose
        tool calls it answers (and the results between) when it is a tool result."""
        if before is None:
            return []
        lead = [before]
        if before.role == "tool":
            at = self.message_sections.index(name)
            earlier = [m for s in self.message_sections[:at] for m in self.current[s]]
            for m in reversed(earlier[:-1]):
                lead.insert(0, m)
                if m.role != "tool":
                    break
        return [_stand_in(m, self._text(m)) for m in lead]

    def _trail(self, name: str | None, after: Any, after_text: str | None = None) -> list[ChatMessage]:
        """The message after section ``name`` for a small prompt, with the tool results that answer it
        when it is an assistant message with tool calls."""
        if after is None:
            return []
        trail = [_stand_in(after, after_text if after_text is not None else self._text(after))]
        if after.tool_calls and name is not None:
            at = self.message_sections.index(name)
            later = [m for s in self.message_sections[at + 1:] for m in self.current[s]]
            for m in later[1:]:
                if m.role != "tool":
                    break
                trail.append(_stand_in(m, self._text(m)))
        return trail

    def _systems(self, name: str) -> list[Any]:
        """The system messages of the prompt outside section ``name``."""
        return [m for s in self.message_sections if s != name for m in self.current[s] if m.role == "system"]

    def _blocks(self, name: str) -> list[Any]:
        """The passages placed into section ``name``'s first user message, in order."""
        return [m for source in self.sources.get(name, ()) for m in self.current[source]]

    def _text(self, message: Any) -> str | None:
        """A committed message's text as rendered (with its evidence blocks, if it carries them)."""
        if message is None:
            return None
        for target in self.sources:
            if next((m for m in self.current[target] if m.role == "user"), None) is message:
                blocks = self._blocks(target)
                if blocks:
                    key = (id(message), tuple(map(id, blocks)))
                    if self._host_text[0] != key:
                        self._host_text = (key, user_content(message.content or "", [self._evidence(b) for b in blocks]))
                    return self._host_text[1]
        return message.content or ""

    def _constant(self, name: str | None, previous: Any, previous_text: str | None, message: Any, text: str,
                  after: Any, after_text: str | None, systems: list[Any],
                  moves: list | None) -> tuple[int | None, tuple | None]:
        """Tokens an entry adds beyond its text between ``previous`` and ``after`` (``None``: count whole),
        and the key they are known by.

        Learned per kind of neighbour and class of the entry's first and last characters. Where one
        role meets itself (entry and neighbour, or the two neighbours the entry parts), a template may
        join the two into one text (Mistral joins consecutive user messages) and the tokens at the
        seam depend on the characters beside it, so the key holds the text at that seam as well."""
        # the ends of its text: a template may trim whitespace, and a pre-tokenizer may join a closing
        # run of punctuation or whitespace with what follows
        key: list = ["message", _kind(previous), message.role, _kind(after), _seam_start(text), _seam_end(text)]
        joined_before, joined_after = _joins(previous, message), _joins(message, after)
        parted = _joins(previous, after)
        seams = [t for m, t, at_seam in ((previous, previous_text, joined_before or parted),
                                         (after, after_text, joined_after or parted)) if at_seam]
        if any(not (t and t.strip()) or t[0].isspace() for t in seams):
            return None, None  # a neighbour of whitespace only lets the seams beside it run together
        if joined_before:
            key.append(("seam-before", _seam_end(previous_text), _seam_start(text)))
        if joined_after:
            key.append(("seam-after", _seam_end(text), _seam_start(after_text)))
        if parted:
            key.append(("seam-parted", _seam_end(previous_text), _seam_start(after_text)))
        if systems:  # the system text moves from one message to another
            lead, old_first, new_first = moves
            key.append(("system-moves", _seam_end(systems[-1].content), _seam_start(self._text(old_first)
                        if old_first is not message else text), _seam_start(self._text(new_first)
                        if new_first is not message else text)))
        key = tuple(key)
        memo = self._scope()
        known = memo.get(key)
        if known == _UNSTABLE:
            return None, key
        if known is not None and (known[1] or text == known[2]):
            return known[0], key
        measured = self._measure_constant(name, previous, previous_text, message, text, after, after_text,
                                          systems, moves)
        if measured is None or (known is not None and measured != known[0]):
            memo[key] = _UNSTABLE
            self._epoch += 1
            return None, key
        # (value, checked by a second entry, the first entry's text)
        memo[key] = (measured, known is not None, text)
        return measured, key

    def _scope(self) -> dict:
        """The constants learned for this counter, these tools and these system messages."""
        if self._scope_memo is None:
            systems = [m.content for st in self.states for m in st.entries if m.role == "system"]
            key = json.dumps([[t.model_dump(mode="json") for t in self.tools], systems], sort_keys=True)
            if key not in self.memo and len(self.memo) >= 64:
                self.memo.clear()
            self._scope_memo = self.memo.setdefault(key, {})
        return self._scope_memo

    def _measure_constant(self, name: str | None, previous: Any, previous_text: str | None, message: Any, text: str,
                          after: Any, after_text: str | None, systems: list[Any], moves: list | None) -> int | None:
        """Tokens ``message`` adds beyond its text between ``previous`` and ``after``, from two counts of
        a small prompt: the two neighbours (a long text cut in its middle) and it, and where the entry
        takes the system text over, the system messages and the messages from the last user one."""
        lead = [_stand_in(previous, previous_text)] if previous is not None else []
        if previous is not None and previous.role == "tool" and name is not None:
            lead = self._lead(name, previous)
        if systems:  # the messages from where the last run of user messages starts (else the neighbour)
            span = [_stand_in(m, self._text(m)) for m in moves[0]]
            if span and (span[0].role == "tool" or span[-1].role == "tool" and not any(m.tool_calls for m in span)):
                return None  # a tool result without its call: no small prompt holds it
            lead = [m.chat() for m in systems] + (span or lead)
        tail = self._trail(name, after, after_text)
        middle = _stand_in(message, text)
        try:
            with_it = self._count_small(lead + [middle] + tail)
            without = self._count_small(lead + tail)
        except CounterError:
            return None
        return with_it - without - self.counter.text_count(middle.content)

    def _count_small(self, messages: list[ChatMessage]) -> int:
        """A small prompt counted as ``total`` counts one (an empty user turn after a final assistant
        message the template refuses to end on)."""
        if not messages:
            messages = [ChatMessage(role="user", content="")]
        before = self.counter.full_counts
        try:
            return self.counter.count(messages, [])
        except CounterError:
            if messages[-1].role != "assistant":
                raise
            return self.counter.count(messages + [ChatMessage(role="user", content="")], [])
        finally:
            self.probe_counts += self.counter.full_counts - before

    # ---- passages placed into a user message

    def _passage_chain(self, name: str, entries: list[Any]) -> list[int] | None:
        """What each passage adds in turn to its host (the target section's first user message)."""
        host, earlier, later = self._placement(name)
        if host is None or not entries:
            return [0] * len(entries)  # no user message to carry them: they are not rendered
        if not self._passage_host_ok(host):
            return None
        question = host.content
        constant = 0
        if len(earlier) + len(entries) + len(later) > 1:
            constant = self._block_constant(question, (earlier + entries + later)[:3])
            if constant is None:
                return None
        costs = []
        for i, message in enumerate(entries):
            if earlier or i:
                costs.append(self._block_tokens(message) + constant)
                continue
            cost = self._first_block(question, message)  # it brings the preamble and the question's label
            if later:  # the block that was first becomes a further one
                cost += self._block_tokens(later[0]) + constant - self._first_block(question, later[0])
            costs.append(cost)
        return costs

    @staticmethod
    def _passage_host_ok(host: Any) -> bool:
        """Blocks placed into it leave the ends of its text as they were (so its constant holds)."""
        return _plain(host) and _seam_start(host.content) == _seam_start(user_content(host.content,
                                                                                      [passage(host)]))

    def _passages(self, question: str, messages: list[Any]) -> int | None:
        """Tokens the evidence blocks of ``messages`` add to a user message whose text is ``question``."""
        if not messages:
            return 0
        value = self._first_block(question, messages[0])
        if len(messages) > 1:
            constant = self._block_constant(question, messages[:3])
            if constant is None:
                return None
            value += sum(self._block_tokens(m) for m in messages[1:]) + constant * (len(messages) - 1)
        return value

    def _evidence(self, message: Any) -> Evidence:
        hit = self._evidence_memo.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, passage(message), None)
            self._evidence_memo[id(message)] = hit
        return hit[1]

    def _block_tokens(self, message: Any) -> int:
        """Tokens of a passage's block on its own, counted once per content."""
        hit = self._evidence_memo.get(id(message))
        if hit is None or hit[0] is not message or hit[2] is None:
            evidence = self._evidence(message)
            hit = (message, evidence, self.counter.text_count(evidence_block(evidence)))
            self._evidence_memo[id(message)] = hit
        return hit[2]

    def _first_block(self, question: str, message: Any) -> int:
        """Tokens the first block adds with the preamble and the question's label: its block's own tokens
        plus a constant (the block's ends, the preamble and the label are the same text for every passage),
        once three passages have measured the same constant from text counts; measured until then, and
        always where two passages disagreed."""
        hit = self._first_memo.get((id(message), question))
        if hit is None or hit[0] is not message:
            key = ("first-block", question)
            memo = self._scope()
            known = memo.get(key)
            if known is not None and known != _UNSTABLE and known[1] >= 2:
                value = self._block_tokens(message) + known[0]
            else:
                text = self.counter.text_count
                value = text(user_content(question, [self._evidence(message)])) - text(question)
                constant = value - self._block_tokens(message)
                if known is None:
                    memo[key] = (constant, 0, message.content)
                elif known != _UNSTABLE and known[2] != message.content:
                    if known[0] == constant:
                        memo[key] = (constant, known[1] + 1, message.content)
                    else:
                        memo[key] = _UNSTABLE
                        self._epoch += 1
            hit = (message, value)
            self._first_memo[(id(message), question)] = hit
        return hit[1]

    def _block_constant(self, question: str, messages: list[Any]) -> int | None:
        """Tokens a further block adds beyond its own text, from three small text counts (two when
        only two blocks exist), checked against each other."""
        key = ("evidence-block",)
        memo = self._scope()
        known = memo.get(key)
        if known == _UNSTABLE:
            return None
        if known is not None and known[1]:
            return known[0]
        text = self.counter.text_count
        blocks = [self._evidence(m) for m in messages]
        values = []
        for k in range(1, min(len(blocks), 3)):
            values.append(text(user_content(question, blocks[:k + 1])) - text(user_content(question, blocks[:k]))
                          - text(evidence_block(blocks[k])))
        if known is not None:
            values.append(known[0])
        if len(set(values)) != 1:
            memo[key] = _UNSTABLE
            self._epoch += 1
            return None
        memo[key] = (values[0], len(values) > 1, None)
        return values[0]
