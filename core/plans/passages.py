"""What passages placed into a user message as evidence blocks add: their blocks' tokens plus constants from
small text counts (the first block also brings the preamble and the question's label)."""
from __future__ import annotations

from typing import Any

from ..contracts import Evidence
from ..render import evidence_block, user_content
from ..text_edges import _seam_start
from .counts import _UNSTABLE, mark_unstable
from .seams import _plain, block_of, passage
from .strategies import BUILT_IN, ByScore


class PassageCosts:
    """The item model of ``FastPlanCounts`` for passage sections (a mixin: its state is set there)."""

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

    def compact(self, name: str, strategy: Any, entries: tuple, limit: int) -> Any:
        """By score over a passage section: ``ByScore``'s own selection, each candidate weighed by
        ``_passage_fits`` (what ``cost`` would answer, without the list built and summed anew each time)."""
        fits = self._passage_fits(name, limit) if type(strategy) is ByScore and name in self.into else None
        if fits is None:
            self._built_in_asking = type(strategy) in BUILT_IN  # (``SliceCosts._slice_cost``)
            try:
                return super().compact(name, strategy, entries, limit)
            finally:
                self._built_in_asking = False
        return ByScore.fill(entries, fits)

    def _passage_fits(self, name: str, limit: int) -> Any:
        """``fits(kept, at, m)`` for ``ByScore.fill``: whether ``cost(name, kept with m at at, (limit,))`` is at
        most ``limit``, from ``_passage_gain``'s sums kept as the list grows (the same prediction, and the same
        complete count near the limit); ``None`` where the host's blocks keep no constant."""
        host, earlier, later = self._placement(name)
        if host is None or not self._passage_host_ok(host):
            return None
        tokens, question, rest = self._block_table(), host.content, earlier + later
        if any(id(m) not in tokens for m in rest):
            return None
        rest_sum = sum(map(tokens.__getitem__, map(id, rest)))
        sums = [-1, 0, None]  # kept's length and block tokens as last summed, the entry last asked about

        def fits(kept: list[Any], at: int, m: Any) -> bool:
            if sums[2] is not None and len(kept) == sums[0] + 1:  # the last one asked was taken
                sums[0], sums[1] = sums[0] + 1, sums[1] + sums[2]
            sums[2] = None
            t = tokens.get(id(m))
            if len(kept) != sums[0]:
                sums[0], sums[1] = len(kept), sum(tokens.get(id(k), -1 << 40) for k in kept)
            if t is None or sums[1] < 0:  # a message not of the plan: as ``cost`` weighs it
                return self.cost(name, kept[:at] + [m] + kept[at:], (limit,)) <= limit
            placed = len(earlier) + len(kept) + 1 + len(later)
            constant = 0
            if placed > 1:
                head = earlier[:3]
                if len(head) < 3:
                    head = (head + kept[:min(at, 3)] + [m] + kept[at:at + 2] + later[:3])[:3]
                constant = self._block_constant(question, head)
                if constant is None:
                    return self.cost(name, kept[:at] + [m] + kept[at:], (limit,)) <= limit
            first = earlier[0] if earlier else (m if at == 0 else kept[0])
            predicted = (self._first_block(question, first) + rest_sum + sums[1] + t - tokens[id(first)]
                         + constant * (placed - 1))
            if rest:
                predicted -= self._first_block(question, rest[0]) + rest_sum - tokens[id(rest[0])] + constant * (len(rest) - 1)
            sums[2] = t
            return self._checked(name, predicted, (limit,), lambda: kept[:at] + [m] + kept[at:]) <= limit

        return fits

    def _block_table(self) -> dict[int, int]:
        """Block token counts by message identity, filled for every passage of the plan at first use."""
        if not self._block_ids:
            for st in self.states:
                if st.plan.into is not None:
                    for m in st.entries:
                        self._block_ids[id(m)] = self._block_tokens(m)
        return self._block_ids

    def _placed(self, name: str) -> tuple[Any, list[Any], list[Any], bool]:
        """``_placement`` and whether its host keeps a constant (asked once for many chains)."""
        host, earlier, later = self._placement(name)
        return host, earlier, later, host is not None and self._passage_host_ok(host)

    def _passage_chain(self, name: str, entries: list[Any],
                       placed: tuple[Any, list[Any], list[Any], bool] | None = None) -> list[int] | None:
        """What each passage adds in turn to its host (the target section's first user message)."""
        host, earlier, later, ok = placed if placed is not None else self._placed(name)
        if host is None or not entries:
            return [0] * len(entries)  # no user message to carry them: they are not rendered
        if not ok:
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

    def _passage_host_ok(self, host: Any) -> bool:
        """Blocks placed into it leave the ends of its text as they were (so its constant holds)."""
        hit = self._host_ok.get(id(host))
        if hit is None or hit[0] is not host:
            ok = _plain(host) and _seam_start(host.content) == _seam_start(user_content(host.content, [passage(host)]))
            hit = self._host_ok[id(host)] = (host, ok)
        return hit[1]

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
        return block_of(self.block_memo, message)[0]

    def _carrying(self, question: str, messages: list[Any]) -> str:
        """``user_content`` of a user message whose text is ``question`` carrying the passages ``messages``."""
        made = [block_of(self.block_memo, m) for m in messages]
        return user_content(question, [e for e, _ in made], [b for _, b in made])

    def _block_tokens(self, message: Any) -> int:
        """Tokens of a passage's block on its own, counted once per content (the block as every render writes
        it: ``seams.block_of``)."""
        hit = self._evidence_memo.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, self.counter.text_count(block_of(self.block_memo, message)[1]))
            self._evidence_memo[id(message)] = hit
        return hit[1]

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
                        mark_unstable(memo, key)
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
            mark_unstable(memo, key)
            self._epoch += 1
            return None
        memo[key] = (values[0], len(values) > 1, None)
        return values[0]
