"""Why a plan's item costs cannot be trusted, where they cannot: the plan is then assembled with the reference
method (``PlanCounts``, a complete count for every question), with a note that says why."""
from __future__ import annotations

from typing import Any, Sequence

from .. import repeats
from ..counting import TokenCounter


def repeated_text(counter: TokenCounter, states: Sequence[Any]) -> str | None:
    """Why item costs cannot be trusted for this plan (``core.repeats``): the counter's chat template compares
    messages by value and two of the plan's messages hold the same text (whatever their roles), or one reads as
    a message carrying evidence blocks; or the last user message holds markup the template looks for
    (``TokenCounter.rewrite_test``: Qwen3 takes a user message that is a ``<tool_response>`` for no question and writes
    the replies before it by where the last question is; passages written into it make it a question again), so
    what an entry adds depends on entries no small prompt holds. Passages are written into a message, never
    messages of their own."""
    apart = repeats.runs_together(counter)
    if apart:
        return apart
    rewritten = counter.rewrite_test()
    if rewritten is not None:
        last = None
        for st in states:
            if st.plan.into is None:
                last = next((m for m in reversed(st.entries) if m.role == "user"), last)
        if last is not None and last.content and rewritten(last.content):
            return "the last user message holds markup the chat template looks for, so what each entry adds " \
                   "depends on the others"
    state = repeats.carries(counter, (m for st in states for m in st.entries))
    if state:
        return state
    moves = repeats.call_text_moves(counter, [m for st in states for m in st.entries])
    if moves:
        return moves
    texts = (("", m.content) for st in states if st.plan.into is None for m in st.entries if m.content)
    return repeats.repeated_text(counter, texts)
