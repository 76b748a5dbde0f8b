"""Complete counts of a section's lists that the item model does not cover (tool calls and results, text that
starts with whitespace), from the counter's exact variant counts (``TokenCounter.variant_counts``).

A strategy asks about lists that are the section's candidates with one run of them left out: entries dropped
at the front (drop-oldest), turns kept newest first after the pinned ones (newest-turns). With every other
section as committed, such a prompt is the prompt of all the section's candidates with a slice of its
messages left out, which a counter with variant counts (Mistral's one pass) counts exactly in time
proportional to the messages at the seam instead of tokenising it whole. Where the counter has none, where
a variant is one it cannot vouch for or one the template refuses, the prompt is counted whole as before.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

from ..errors import CounterError
from .chains import _where_lists_part


class SliceCosts:
    """Variant counts for ``FastPlanCounts`` (a mixin: its state is set there)."""

    def _slice_cost(self, name: str, entries: Sequence[Any]) -> tuple[int, int] | None:
        """``T(S=entries)`` and ``T(S=[])`` from variant counts, or ``None`` (count them whole)."""
        if name in self.into or name in self.sources:  # passages, or a message that carries them
            return None
        base = next(st.entries for st in self.states if st.plan.name == name)
        entries = list(entries)
        if not base:
            return None
        if len(entries) == len(base) and all(map(operator.is_, entries, base)):
            cut = None
        else:
            part = _where_lists_part(base, entries)
            if part is None or part[1] <= 0 or part[2] != part[0]:  # not the candidates less one run of them
                return None
            cut = (part[0], part[0] + part[1])
        made = self._slices.get(name)
        if made is None:
            made = self._slices[name] = self._make_slices(name, base)
        variants, start, total = made
        if variants is None:
            return None
        try:
            without = variants.count(start, start + len(base))
            with_them = total if cut is None else variants.count(start + cut[0], start + cut[1])
        except Exception:  # noqa: BLE001 - a variant the counter cannot vouch for is counted whole
            return None
        if without is None or with_them is None:  # refused as it stands: counted as ``total`` counts such
            return None
        return with_them, without

    def _make_slices(self, name: str, base: list[Any]) -> tuple[Any, int, int]:
        """The variant counts of the prompt with every candidate of section ``name`` in it, where its
        section starts among the messages, and its complete count."""
        view = dict(self.current)
        view[name] = list(base)
        messages = self._render(self.states, view)
        start = sum(len(self.current[s]) for s in self.message_sections[:self.message_sections.index(name)])
        before = self.counter.full_counts
        try:
            total = self.counter.count(messages, self.tools)
            variants = self.counter.variant_counts(messages, self.tools, total)
        except CounterError:
            return None, 0, 0
        finally:
            self.full_counts += self.counter.full_counts - before
        return variants, start, total

    def _slice_kept_costs(self, name: str, entries: list[Any]) -> list[int] | None:
        """The trace's costs of section ``name``'s committed entries (what each prefix of the section adds
        to the emitted prompt): each prefix is the emitted prompt with the rest of the section left out,
        a variant of the prompt the final count counted. A variant the counter cannot answer is counted
        as the reference counts it. ``None`` where there are no variant counts to ask."""
        current = self.current[name]
        if (name in self.into or name in self.sources or self.final_value is None or not entries
                or len(entries) != len(current) or not all(map(operator.is_, entries, current))):
            return None
        if self._final_variants is None:
            messages = self._render(self.states, self.current)
            try:
                self._final_variants = (self.counter.variant_counts(messages, self.tools, self.final_value),)
            except CounterError:
                self._final_variants = (None,)
        variants = self._final_variants[0]
        if variants is None:
            return None
        start = sum(len(self.current[s]) for s in self.message_sections[:self.message_sections.index(name)])
        n = len(entries)
        values: list[int | None] = []
        for k in range(n + 1):
            value = self.final_value if k == n else None
            if k < n:
                try:
                    value = variants.count(start + k, start + n)
                except Exception:  # noqa: BLE001 - one it cannot vouch for: counted whole below
                    value = None
                if value is None:
                    value = self.measure({name: list(entries[:k])})
            values.append(value)
        return [b - a if a is not None and b is not None else 0 for a, b in zip(values, values[1:])]
