"""What each dropped entry of a plan section would have added alone to the final prompt (the trace's figure for
it): from the item model where it covers the entry, else from a small prompt, else counted whole, as the
reference counts it (``counts.PlanCounts.alone_cost``)."""
from __future__ import annotations

from typing import Any, Sequence

from ..alternation import countable_variants
from ..text_edges import _seam_end, _seam_start
from .chains import _never
from .counts import _UNSTABLE
from .seams import STAND_IN_CHARS, _plain


class AloneCosts:
    """``alone_costs`` for ``FastPlanCounts`` (a mixin: its state is set there)."""

    def alone_costs(self, name: str, entries: Sequence[Any]) -> list[int]:
        """Each entry on its own in the final prompt's section: the walk of a one-entry list, its context
        and (for passages) its host's placement worked out once for them all."""
        if not entries:
            return []
        if name in self.into:
            placed = self._placed(name)
            costs = [self._passage_chain(name, [m], placed) for m in entries]
            return [c[0] if c is not None else self._local_costs(name, [m])[0] for c, m in zip(costs, entries)]
        ctx = self._chain_context(name)
        if ctx[2]:
            return [self.alone_cost(name, m) for m in entries]
        # Alone between the same neighbours, an entry's constant is its kind's and its text's ends' (the key
        # ``_constant`` learns it by): once a walk has met that key checked, the rest of its kind take it. That holds
        # where the entry moves the system text too (a user message alone starts the last run of user messages):
        # walked alone from one state, every entry has the same run starts, so the same lead, the same message the
        # system text leaves and, for the one it goes to, the entry itself (its text's start, in the kind) or the
        # same earlier one; the key holds those seams, the lead is the same for the whole call.
        memo, kinds, out = self._scope(), {}, []
        rewritten = self.counter.rewrite_test() or _never
        whole: list | None = None  # the section left empty, counted once, where an entry is cheaper counted whole
        for m in entries:
            plain = _plain(m) and not rewritten(m.content)
            kind = (m.role, _seam_start(m.content), _seam_end(m.content)) if plain else None
            hit = kinds.get(kind) if kind is not None else None
            if hit is not None:
                known = memo.get(hit[1])
                if known is not None and known != _UNSTABLE and known[1] and known[0] == hit[0]:
                    out.append(self.counter.text_count(m.content) + hit[0])
                    continue
            self._last_step = None
            costs = self._walk(ctx, [m], 0, ctx[-1], None)[0]
            if costs is None:  # (tool calls and results): a small prompt, or the prompt whole where it is as small
                if whole is None:
                    whole = [self._as_probe(lambda: self.measure({name: []}))] if self._small_around(name) else []
                out.append(self._as_probe(lambda: self._counted_alone(name, m, whole[0])) if whole
                           else self._local_costs(name, [m])[0])
                continue
            out.append(costs[0])
            step = self._last_step
            if kind is not None and step is not None and step[0] is not None:
                kinds[kind] = (costs[0] - self.counter.text_count(m.content), step[0])
        return out

    def alone_cost(self, name: str, entry: Any) -> int:
        costs = self._chain(name, [entry])
        return costs[0] if costs is not None else self._local_costs(name, [entry])[0]

    def _small_around(self, name: str) -> bool:
        """Whether the final prompt around section ``name`` is no larger than the small prompt that prices an entry
        the item model does not cover: no more messages than the neighbours it stands between (plus one), no
        passages written into one, and texts no longer together than the small prompt's stand-ins (each cut to
        ``STAND_IN_CHARS`` at either end). Counting the prompt whole with the entry in it then costs about what that
        small prompt does, and needs no check of its outline besides (``_local_costs``); a long text would be
        rendered again at every count (a template renders it whole, a passage block is written into the question)."""
        around = [m for s in self.message_sections if s != name for m in self.current[s]]
        before, after = self._neighbours(name)
        frame = len(self._lead(name, before)) + len(self._trail(name, after))
        if len(around) > frame + 1 or any(self.current[s] for s in self.into):
            return False
        return sum(len(m.content or "") for m in around) <= 2 * STAND_IN_CHARS * max(frame, 1)

    def _as_probe(self, count: Any) -> Any:
        """``count()``, its complete counts told as probes (``probe_counts``): they count a prompt no larger than the
        small prompt they stand in for (``_small_around``), not the prompt the plan's complete counts are of."""
        before = self.full_counts
        try:
            return count()
        finally:
            self.probe_counts += self.full_counts - before
            self.full_counts = before

    def _counted_alone(self, name: str, entry: Any, without: int | None) -> int:
        """``PlanCounts.alone_cost`` of ``entry``, the section left empty counted beforehand (``without``). A prompt
        the template surely refuses, and every countable variant of it (``refuses_surely``: Mistral's check of the
        roles; a tool result alone), is not counted to learn that it counts nothing."""
        if without is None:
            return 0
        messages = self._render(self.states, {**self.current, name: [entry]})
        refuses = self.counter.refuses_surely
        if messages and refuses(messages) and all(refuses(v) for v in countable_variants(messages)):
            return 0
        with_it = self.measure({name: [entry]})
        return with_it - without if with_it is not None else 0
