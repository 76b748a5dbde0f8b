"""What each message entry of a plan section adds, inserted after the one before it: its text's tokens plus a
constant for its place, learned from small probe prompts, and walked incrementally as a strategy asks about
one list after another."""
from __future__ import annotations

from typing import Any

from ..errors import CounterError
from ..text_edges import _seam_end, _seam_start
from .counts import _MARKS, _UNSTABLE, mark_unstable
from .lists import Pieces, _at, _back, _moved, _same_context, _same_run, _where_lists_part
from .neighbours import SectionContext
from .probes import SmallPrompts
from .seams import _STUB, _compress_runs, _kind, _needs_closing_turn, _stand_in, tools_key


_TEXT_ROLES = ("user", "assistant")


def _never(text: str) -> bool:
    return False


def _sum_before(costs: Pieces, at: int, total: int) -> int:
    """``sum(costs[:at])`` from the shorter side, ``total`` being ``sum(costs)``."""
    if at <= 0:
        return 0
    return costs.total(0, at) if at <= len(costs) // 2 else total - costs.total(at, len(costs))


class ChainCosts(SmallPrompts, SectionContext):
    """The item model of ``FastPlanCounts`` for message sections (a mixin: its state is set there)."""

    def _gain(self, name: str, entries: list[Any]) -> int | None:
        if name in self.into:
            return self._passage_gain(name, entries)
        costs = self._walked(name, entries)
        return None if costs is None else self._chain_total

    def _chain(self, name: str, entries: list[Any]) -> list[int] | None:
        """What each entry adds in turn, inserted after the previous one and before the next section, to the committed
        prompt (``_walked``, or for passages ``_passage_chain``)."""
        if name in self.into:
            return self._passage_chain(name, entries)
        costs = self._walked(name, entries)
        return None if costs is None else costs.read(0, len(costs))

    def _walked(self, name: str, entries: list[Any]) -> Pieces | None:
        """What each message entry adds in turn, inserted after the previous one and before the next section,
        to the committed prompt (its sum: ``_chain_total``). A strategy asks about one list after another, each a small change of
        the one before (an entry dropped at the front, a turn added): the walk over the entries resumes
        from the last list's state where the two lists part, and takes the last list's costs again
        from where its state is met again (so a 10,000-entry section is not walked 10,000 times)."""
        ctx = self._chain_context(name)
        if ctx[2]:  # evidence blocks in the section's first user message: walk it whole
            costs = self._walk(ctx, entries, 0, ctx[-1], None)[0]
            self._chain_total = None if costs is None else self._walk_sum  # (a walk from the start: every cost walked)
            return costs
        # the last two lists walked (a commit asks about the committed list and the one it replaces, and
        # the strategy's last question is usually the list committed)
        records = [r for r in self._chain_cache.get(name, ())
                   if r[0] == self._epoch and (r[1] is ctx or _same_context(r[1], ctx))]
        resume = cached = None
        for record in records:  # the one to walk least from (a commit asks about the empty list, then the kept one)
            found = _where_lists_part(record[2], entries, True)  # (every entry of a list walked has no tool calls)
            if found is not None and (resume is None or found[2] - found[0] < resume[2] - resume[0]):
                resume, cached = found, record
                if found[2] - found[0] <= 8:  # near enough: the lists are not compared with the others
                    break
        total = None
        if resume is None:
            costs, states = self._walk(ctx, entries, 0, ctx[-1], None)
            if costs is not None:
                total = self._walk_sum  # (a walk from the start: every cost walked)
        elif resume[0] == len(entries) == len(cached[2]):  # the very list walked before: its costs
            costs, states, self._walk_end, total = cached[3], cached[4], cached[5], cached[6]
        else:
            p, d, rejoin = resume
            old_costs, old_states = cached[3], cached[4]
            costs, states = self._walk(ctx, entries, p, old_states[p] if p < len(old_states) else cached[5],
                                       (old_costs, old_states, d, rejoin, cached[5]))
            if costs is not None:
                # the sum from the last list's where the two share costs (a strategy asks about a long list one small
                # change after another: each question then costs about the change, not the list)
                took = self._walk_took
                total = (_sum_before(old_costs, p, cached[6]) + self._walk_sum
                         + (0 if took is None else cached[6] - _sum_before(old_costs, took, cached[6])))
                costs, states = old_costs.head(p) + costs, old_states.head(p) + states
        self._chain_total = total
        if costs is not None and states is not None:
            end_state = self._walk_end
            # the list walked first, then the two walked before it (a commit asks about the list it replaces, then
            # about the one kept: the strategy's last, walked two questions ago), the very same list once
            same = cached is not None and resume[0] == len(entries) == len(cached[2])
            kept = [r for r in records if not (same and r is cached)][:2]
            self._chain_cache[name] = [(self._epoch, ctx, list(entries), costs, states, end_state, total)] + kept
        return costs

    def _chain_context(self, name: str) -> tuple:
        """What a chain's costs depend on besides its entries: the committed prompt around the section
        (kept until the next commit)."""
        ctx = self._ctx_memo.get(name)
        if ctx is None:
            ctx = self._ctx_memo[name] = self._make_chain_context(name)
        return ctx

    def _make_chain_context(self, name: str) -> tuple:
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
        # a text in the last turn, which the section is in (no user message after it), that the template writes by
        # what it holds (Qwen3 keeps a reply's reasoning after the last user message only): what an entry adds then
        # depends on that text, which no key holds. Where a user message follows the section, the last user message
        # is there whatever the section holds, and every text around it is written alike with an entry and without
        around, rewritten = False, self.counter.rewrite_test()
        if rewritten is not None and not any(m.role == "user" for m in later):
            opened = max((i for i, m in enumerate(earlier) if m.role == "user"), default=0)
            around = any(rewritten(self._text(m)) for m in earlier[opened:] + later + [before, after]
                         if m is not None and m.content)
        around = around or self._reply_rewritten_before(name)
        return (name, before, blocks, after, after_text, systems, earlier, later, reaches, follow, stub_end,
                after_seam, around, state)

    def _walk(self, ctx: tuple, entries: list[Any], k0: int, state: tuple, resume: tuple | None
              ) -> tuple[Pieces | None, Pieces | None]:
        """Costs of ``entries[k0:]`` and the walk's state before each, from ``state`` before entry ``k0``;
        with ``resume`` (the last list's costs and states, its offset and where the lists meet again), the
        last list's costs are taken over from the first entry whose state is the one it had there."""
        (name, before, blocks, after, after_text, systems, earlier, later, reaches, follow, stub_end,
         after_seam, around, _) = ctx
        # what the walk reads of the counter and the prompt around the section: the same until a commit (``_ctx_memo``
        # is cleared there), taken once per chain context
        prep = self._ctx_memo.get((name, "walk"))
        if prep is None or prep[0] is not ctx:
            prep = self._ctx_memo[(name, "walk")] = (
                ctx, after is not None and self._closes_long(name), self._closing(name) if after is not None else None,
                self.counter.writes_by_turn(), self.counter.rewrite_test() or _never)
        _, closes_long, closing, by_turn, rewritten = prep
        if around or closes_long:  # (``_make_chain_context``, ``_closes_long``):
            return None, None  # each entry counted in its place instead
        host = next((k for k, m in enumerate(entries) if m.role == "user"), None) if blocks else None
        size = len(earlier)
        previous, previous_text, trail, last, previous_user = _at(state, size + k0)

        def item(i: int) -> Any:
            return earlier[i] if i < size else entries[i - size]

        costs: list[int] = []
        states: list[tuple] = []
        self._walk_took = None  # where in the last list's costs this walk took them over (``None``: it did not)
        text_count, text_of, scope, steps = self.counter.text_count, self._text, self._scope(), self._steps
        marks = scope.get(_MARKS, 0)  # (a constant marked unstable counts here: a step stored since, its key was not)
        counted = self.counter.counted_texts()
        # without passages written into a message, every text is its message's own (frozen) content: the objects
        # name the seams, and a step is known by them alone
        by_objects = not self.sources
        # (``closing`` is in a step's key: it may change at a commit)
        for k in range(k0, len(entries)):
            message = entries[k]
            if resume is not None and k >= resume[3]:
                old_costs, old_states, d, rejoin, old_end = resume
                was = old_states[k + d] if k + d < len(old_states) else None
                n = size + k
                if (was is not None and was[0] is previous and was[4] == previous_user
                        and _same_run(was[2], trail, n, size + rejoin) and _same_run(was[3], last, n, size + rejoin)):
                    self._walk_end, self._walk_took, self._walk_sum = old_end, k + d, sum(costs)
                    return Pieces.of(costs) + old_costs.tail_from(k + d), Pieces.of(states) + old_states.tail_from(k + d)
                if (was is not None and was[0] is previous and previous_user and was[4] and None not in
                        (trail, last, was[2], was[3]) and old_end[2] is not None and old_end[2] >= len(entries) - k):
                    # inside a run of user messages that lasts to the end of both lists (the entries from here are
                    # the last list's from ``k + d``, and its closing run started at most ``len(entries) - k`` back
                    # from its end): where the run starts moves nothing after here (each entry joins the run the last
                    # did), so the last list's costs hold; its states and end state are the run's start moved to
                    # this list's
                    shift = (n - trail) - was[2], (n - last) - was[3]
                    end = _moved(old_end, shift)
                    self._walk_end, self._walk_took, self._walk_sum = end, k + d, sum(costs)
                    return (Pieces.of(costs) + old_costs.tail_from(k + d),
                            Pieces.of(states) + old_states.tail_from(k + d, shift))
            n = size + k
            states.append((previous, previous_text, None if trail is None else n - trail,  # (``_back``'s)
                           None if last is None else n - last, previous_user))
            # the user message that opens the turn ``previous`` belongs to, where the small prompt would
            # start without one (``_measure_constant``)
            query = item(last) if by_turn and last is not None and previous is not None and not previous_user else None
            text = message.content  # (``_plain``, inline: a walk takes this step for every entry)
            if (message.role not in _TEXT_ROLES or message.tool_calls or not text or text[0].isspace()
                    or rewritten(text)):  # (a template that writes the text by what it holds: counted whole)
                return None, None
            if host == k:
                text = self._carrying(text, blocks)
            moves: list[Any] | None = None
            if message.role == "user":
                new_trail = trail if previous_user else n
                new_last = new_trail
            else:
                new_trail, new_last = None, last
            if systems and reaches:
                old = trail if follow else last
                new = new_trail if follow else new_last
                fallback = later[0] if follow else None
                old_first = (earlier[old] if old < size else entries[old - size]) if old is not None else fallback
                new_first = (message if new == n else earlier[new] if new < size else entries[new - size]) \
                    if new is not None else fallback
                if stub_end:  # a prompt ending with an assistant reply (or the system text alone) is counted with
                    # an empty user turn after it, and that turn is then where the system text goes (not after a tool
                    # result: the prompt ends there as it is, its system text at the last run of user messages)
                    if not previous_user and (previous is None or previous.role in ("assistant", "system")):
                        old, old_first = None, _STUB
                    if message.role == "assistant":
                        new, new_first = None, _STUB
                if old_first is not new_first:
                    if old_first is None or new_first is None:
                        return None, None
                    start = min(n, n if old is None else old, n if new is None else new)
                    if n - start > 64:
                        return None, None
                    lead: Any = (lambda start=start, n=n: _compress_runs([item(i) for i in range(start, n)]))
                    if n - start > 16:  # (only then can the compressed span be longer than 16)
                        lead = lead()
                        if len(lead) > 16:
                            return None, None
                    moves = [lead, old_first, new_first]  # the span is needed only to measure a constant
            trail, last, previous_user = new_trail, new_last, message.role == "user"
            step = None
            if host != k:
                if by_objects:
                    step = (id(previous), id(message), id(after), id(query), id(closing)) if moves is None else \
                        (id(previous), id(message), id(after), id(query), id(closing), id(moves[1]), id(moves[2]))
                else:
                    step = (id(previous), id(message), id(after), id(query), id(closing), _seam_end(previous_text),
                            after_seam,
                            (id(moves[1]), id(moves[2]), _seam_start(text_of(moves[1])),
                             _seam_start(text_of(moves[2]))) if moves is not None else None)
                if previous is not None and previous.role == "tool":  # (as ``_constant``'s key: whether it answers a call
                    step += (self._answered(name, previous),)  # before it, which the same objects may and may not)
            hit = steps.get(step) if step is not None else None
            if (hit is not None and hit[2] is previous and hit[3] is message and hit[4] is after and hit[6] is query
                    and hit[7] is closing and (hit[5] == marks or scope.get(hit[1]) != _UNSTABLE)):
                constant, key = hit[0], hit[1]
            else:
                constant, key = self._constant(name, previous, previous_text, message, text, after,
                                               after_text, systems if moves is not None else [], moves, query,
                                               closing)
                if constant is None:
                    return None, None
                if step is not None:  # the objects are held, so their ids are not reused meanwhile
                    steps[step] = (constant, key, previous, message, after, marks, query, closing)
            self._last_step = (key, moves is not None)
            if host == k:  # its text is the question's plus what the evidence blocks add
                placed = self._passages(message.content, blocks)
                if placed is None:
                    return None, None
                costs.append(text_count(message.content) + placed + constant)
            else:
                tokens = counted(text)
                costs.append((text_count(text) if tokens is None else tokens) + constant)
            previous, previous_text = message, text

        self._walk_end = _back((previous, previous_text, trail, last, previous_user), size + len(entries))
        self._walk_sum = sum(costs)
        return Pieces.of(costs), Pieces.of(states)

    def _constant(self, name: str | None, previous: Any, previous_text: str | None, message: Any, text: str,
                  after: Any, after_text: str | None, systems: list[Any],
                  moves: list | None, query: Any = None, closing: tuple | None = None
                  ) -> tuple[int | None, tuple | None]:
        """Tokens an entry adds beyond its text between ``previous`` and ``after`` (``None``: count whole),
        and the key they are known by.

        Learned per kind of neighbour and class of the entry's first and last characters. Where one
        role meets itself (entry and neighbour, or the two neighbours the entry parts), a template may
        join the two into one text (Mistral joins consecutive user messages) and the tokens at the
        seam depend on the characters beside it, so the key holds the text at that seam as well."""
        # the ends of its text: a template may trim whitespace, and a pre-tokenizer may join a closing
        # run of punctuation or whitespace with what follows
        before_kind, kind, after_kind = _kind(previous), _kind(message), _kind(after)
        key: list = ["message", before_kind, message.role, after_kind, _seam_start(text), _seam_end(text)]
        # (``_joins`` of each pair, each kind made once)
        joined_before, joined_after = before_kind is not None and before_kind == kind, after_kind == kind
        parted = before_kind is not None and before_kind == after_kind
        # a neighbour of whitespace only lets the seams beside it run together
        if (joined_before or parted) and (not previous_text or previous_text[0].isspace() or not previous_text.strip()):
            return None, None
        if (joined_after or parted) and (not after_text or after_text[0].isspace() or not after_text.strip()):
            return None, None
        if joined_before:
            key.append(("seam-before", _seam_end(previous_text), _seam_start(text)))
        if joined_after:
            key.append(("seam-after", _seam_end(text), _seam_start(after_text)))
        if parted:
            key.append(("seam-parted", _seam_end(previous_text), _seam_start(after_text)))
        if previous is not None and previous.role == "tool":  # a template may leave out a result whose call is not
            key.append(("answered", self._answered(name, previous)))  # in the prompt (Gemma 4, Phi-3.5)
        if query is not None and not systems:  # the turn's user message leads the small prompt (its seams: a
            query_text = self._text(query)  # template may read what the message is, Qwen3 a tool response)
            key.append(("turn-opened", _seam_start(query_text), _seam_end(query_text)))
        if closing is not None:  # and the rest of the turn of the message after it ends it (``_trail``)
            key.append(("turn-closed",) + tuple((_kind(m), _seam_start(self._text(m)), _seam_end(self._text(m)))
                                                for m in closing[1:]))
        if systems:  # the system text moves from one message to another
            lead, old_first, new_first = moves
            key.append(("system-moves", _seam_end(systems[-1].content), _seam_start(self._text(old_first)
                        if old_first is not message else text), _seam_start(self._text(new_first)
                        if new_first is not message else text)))
        key = tuple(key)
        memo = self._scope_memo if self._scope_memo is not None else self._scope()
        known = memo.get(key)
        if known == _UNSTABLE:
            return None, key
        if known is not None and (known[1] or text == known[2]):
            return known[0], key
        measured = self._measure_constant(name, previous, previous_text, message, text, after, after_text,
                                          systems, moves, query)
        if measured is None or (known is not None and measured != known[0]):
            mark_unstable(memo, key)
            self._epoch += 1
            return None, key
        # (value, checked by a second entry, the first entry's text)
        memo[key] = (measured, known is not None, text)
        return measured, key

    def _answered(self, name: str | None, result: Any) -> tuple | None:
        """What tool result ``result``, the message before section ``name``, follows: the kind of the message before its
        run of results (``None``: none) and whether that message makes a call of its id. A template may leave a
        result out by it (Gemma 4 and Phi-3.5 leave out one that follows no message with calls, and a plan can
        summarise or drop the call and keep the result). ``None`` where it is not the message before the section."""
        if name is None:
            return None
        at = self.message_sections.index(name)
        earlier = [m for s in self.message_sections[:at] for m in self.current[s]]
        if not earlier or earlier[-1] is not result:
            return None
        for m in reversed(earlier[:-1]):
            if m.role != "tool":
                return _kind(m), any(call.id == result.tool_call_id for call in m.tool_calls)
        return None, False

    def _scope(self) -> dict:
        """The constants learned for this counter, these tools and these system messages."""
        if self._scope_memo is None:
            systems = [m.content for st in self.states for m in st.entries if m.role == "system"]
            key = tools_key(self.tools, systems)
            if key not in self.memo and len(self.memo) >= 64:
                self.memo.clear()
            self._scope_memo = self.memo.setdefault(key, {})
        return self._scope_memo

    def _measure_constant(self, name: str | None, previous: Any, previous_text: str | None, message: Any, text: str,
                          after: Any, after_text: str | None, systems: list[Any], moves: list | None,
                          query: Any = None) -> int | None:
        """Tokens ``message`` adds beyond its text between ``previous`` and ``after``, from two counts of
        a small prompt: the two neighbours (a long text cut in its middle) and it, and where the entry
        takes the system text over, the system messages and the messages from the last user one. Where
        ``previous`` is no user message and a user message comes before it (``query``: the one opening its
        turn), that message leads the small prompt: a template may write a message otherwise after the
        last user message than before any (Qwen3 writes a reply that ends the prompt after the last user
        message with an empty thinking block), so a small prompt without one can count otherwise."""
        lead = [_stand_in(previous, previous_text)] if previous is not None else []
        if previous is not None and previous.role == "tool" and name is not None:
            lead = self._lead(name, previous)
        if query is not None and not systems and lead and lead[0].role != "user":  # (``_constant``'s key says so)
            lead = [_stand_in(query, self._text(query))] + lead
        if systems:  # the messages from where the last run of user messages starts (else the neighbour)
            span = [_stand_in(m, self._text(m)) for m in (moves[0]() if callable(moves[0]) else moves[0])]
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
