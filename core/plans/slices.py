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

from ..alternation import countable_variants
from ..errors import CounterError
from .lists import _where_lists_part


class SliceCosts:
    """Variant counts for ``FastPlanCounts`` (a mixin: its state is set there)."""

    _built_in_asking = False  # a built-in strategy asking (``PassageCosts.compact``)

    def _slice_cost(self, name: str, entries: Sequence[Any]) -> tuple[int, int] | None:
        """``T(S=entries)`` and ``T(S=[])`` from variant counts, or ``None`` (count them whole)."""
        if name in self.into or name in self.sources:  # passages, or a message that carries them
            return None
        base = next(st.entries for st in self.states if st.plan.name == name)
        entries = entries if type(entries) is list else list(entries)  # (``cost`` hands its own copy)
        if not base:
            return None
        # the very objects (an equal tool call may be written otherwise), or, asked by a built-in strategy, equal ones:
        # its lists hold the section's own objects and notes it makes, none of which an equal object writes otherwise
        # (a note has no tool calls), and ``==`` finds the very object equal at C speed (a question at 2,000 tool-call
        # turns compared 8,000 objects one call each)
        trusted = self._built_in_asking
        if len(entries) == len(base) and (entries == base if trusted else all(map(operator.is_, entries, base))):
            cut = None
        else:
            part = _where_lists_part(base, entries, trusted)
            if part is None or part[1] <= 0 or part[2] != part[0]:  # not the candidates less one run of them
                return None
            cut = (part[0], part[0] + part[1])
        made = self._slices.get(name)
        if made is None:
            made = self._slices[name] = self._seed_slices(name, base)
        if len(made) == 4:  # the whole list counted, no variant counts made yet
            if cut is None:
                # the whole list (pin-and-fold asks only about it, drop-oldest first): its complete count answers it;
                # the variant counts, whose sampled renders cost more than that count, wait for a cut
                return made[2], self._without(name)
            made = self._slices[name] = self._make_slices(name, base, made)
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

    def _seed_slices(self, name: str, base: list[Any]) -> tuple:
        """The prompt with every candidate of section ``name`` in it counted whole, its rendered text kept for the
        variant counts (one rendering gives both, where it can): ``(None, start, total, rendered)``, where its section
        starts among the messages; ``(None, 0, 0)`` (no variant counts: counted whole) where the template refuses it."""
        view = dict(self.current)
        view[name] = list(base)
        messages = self._render(self.states, view)
        before = self.counter.full_counts
        try:
            both = self.counter.count_and_render_text(messages, self.tools)
            total, rendered = both if both is not None else (self._count(messages), None)
        except CounterError:
            return None, 0, 0
        finally:
            self.full_counts += self.counter.full_counts - before
        return None, self._section_start(name), total, rendered

    def _make_slices(self, name: str, base: list[Any], seed: tuple) -> tuple[Any, int, int]:
        """The variant counts of the prompt with every candidate of section ``name`` in it, from its ``seed``
        (``_seed_slices``), where its section starts among the messages, and its complete count."""
        _, start, total, rendered = seed
        view = dict(self.current)
        view[name] = list(base)
        messages = self._render(self.states, view)
        before = self.counter.full_counts
        try:
            variants = self.counter.variant_counts(messages, self.tools, total, rendered)
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
        # (a section that carries passages too: they are written into its first user message, so a prefix
        # without that message is the emitted prompt without it and them)
        if (name in self.into or self.final_value is None or not entries
                or len(entries) != len(current) or not all(map(operator.is_, entries, current))):
            return None
        variants = self._committed_variants(self.final_value)
        if variants is None:
            return None
        start = self._section_start(name)
        n = len(entries)
        if n == 1 and start + n == getattr(variants, "n", None) and not getattr(variants, "prefixes_ready", True):
            return None  # one prefix of a section that ends the prompt (a question): counted whole costs less than
            # the samples that would let the variants read every prefix (``HFVariants._judge_prefixes``)
        values: list[int | None] = []
        for k in range(n + 1):
            value = self.final_value if k == n else None
            if k < n:
                try:
                    value = variants.count(start + k, start + n)
                    refused = value is None
                except Exception:  # noqa: BLE001 - one it cannot vouch for: counted whole below
                    value, refused = None, False
                if refused:  # the template refuses it as it stands: counted as ``total`` counts such a prompt
                    value = self._countable_variant({name: list(entries[:k])})
                elif value is None:
                    value = self.measure({name: list(entries[:k])})
            values.append(value)
        return [b - a if a is not None and b is not None else 0 for a, b in zip(values, values[1:])]

    def _countable_variant(self, replaced: dict) -> int | None:
        """``measure`` of a prompt the template is known to refuse as it stands: its countable variants
        (``countable_variants``), without the refused count first; ``None`` when none counts."""
        messages = self._render(self.states, {**self.current, **replaced})
        if not messages:
            return self.measure(replaced)
        before = self.counter.full_counts
        try:
            for variant in countable_variants(messages):
                try:  # (with the span memo: the prompt's texts were counted as items)
                    return self._count(variant)
                except CounterError:
                    pass
            return None
        finally:
            self.full_counts += self.counter.full_counts - before

    def _section_start(self, name: str) -> int:
        """Where section ``name``'s messages start in the committed prompt."""
        return sum(len(self.current[s]) for s in self.message_sections[:self.message_sections.index(name)])

    def _committed_variants(self, value: int) -> Any:
        """The variant counts of the committed prompt, whose complete count is ``value`` (``None``: none), made
        once for it (kept until a commit changes it)."""
        made = self._final_variants
        if self._variants_made(value):
            return made[0]
        messages = self._render(self.states, self.current)
        known = self.final_rendered  # the emitted prompt's text, where its final count gave it
        rendered = known[1] if known is not None and len(known[0]) == len(messages) and all(
            map(operator.is_, known[0], messages)) else None
        try:
            variants = self.counter.variant_counts(messages, self.tools, value, rendered)
        except CounterError:
            variants = None
        self._final_variants = (variants, value, {k: list(v) for k, v in self.current.items()})
        return variants

    def _variants_made(self, value: int) -> bool:
        """Whether the committed prompt's variant counts (its complete count ``value``) are made already."""
        made = self._final_variants
        return made is not None and made[1] == value and all(
            len(made[2][k]) == len(v) and all(map(operator.is_, made[2][k], v)) for k, v in self.current.items())

    def _left_out(self, name: str, value: int) -> int | None:
        """The committed prompt with section ``name``'s messages left out, from the variant counts of the
        committed prompt (whose complete count is ``value``); ``None``: count it whole."""
        if name in self.into or name in self.sources or not self.current[name]:
            return None
        later = any(self.current[s] for s in self.message_sections[self.message_sections.index(name) + 1:])
        if later and not _middle_cuts(self.counter):
            return None  # (an hf: counter's variants are prefixes only: not worth making for this one)
        if _from_spans(self.counter) and not self._variants_made(value):
            return None  # one count from the span memo costs a fraction of making the variants for it
        variants = self._committed_variants(value)
        if variants is None:
            return None
        start = self._section_start(name)
        try:
            return variants.count(start, start + len(self.current[name]), cheap=True)
        except Exception:  # noqa: BLE001 - a variant the counter cannot vouch for is counted whole
            return None


def _from_spans(counter: Any) -> bool:
    """Whether the counter's complete counts take every span an item's text count already gave (the span memo of
    ``count_reusing_texts``: tekken), so a count of the prompt costs its rendering, not its tokenisation."""
    from ..counters.mistral import MistralCounter

    return isinstance(counter, MistralCounter) and counter._span_memo() is not None


def _middle_cuts(counter: Any) -> bool:
    """Whether the counter's variant counts answer for a slice left out of the middle (Mistral's one pass)."""
    from ..counters.mistral import MistralCounter

    return isinstance(counter, MistralCounter)
