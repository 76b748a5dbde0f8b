"""The history section's fill: whole turns, newest first; the first turn that does not fit stops the section.

``fill_history`` makes the decisions and trace entries ``Builder.attempt`` makes, one turn at a time. Every turn
older than the first misfit is dropped whatever it costs, its entry giving what it would add to the turns kept
(an ``attempt`` that decides nothing). Under the default builder (``FastBuilder``) a turn priced from its text spans
(``SPAN_TURN``: ``mistral:`` tekken, ``MistralCounter.turn_count``) adds its spans' text count plus its control
tokens wherever it stands (``FastBuilder._marginal`` gives it no other figure), so such turns are weighed in one
loop over those memoised figures: a run of them that fit, none near the allowance (``NEAR_ALLOWANCE``: that one
goes through ``attempt``, which checks it with a complete count), is kept in one step, and the older turns are
priced without an ``attempt`` each. Any other turn goes through ``attempt``, exactly as before. At a small limit
most of a replay's time is these entries (about 100 turns and 300 passages for a request of 3,000 tokens).
"""
from __future__ import annotations

from typing import Iterator

from .assembly_fast import NEAR_ALLOWANCE, SPAN_TURN, FastBuilder
from .assembly_reference import Builder
from .result import ITEM_FIELDS, MADE_OK, _made, trace_entry


def fill_history(b: Builder, budget: int) -> tuple[int, int]:
    """Whole turns, newest first, until the first that does not fit: (kept, dropped)."""
    ids = b.request.turn_ids()
    trace = b.trace
    t = len(ids) - 1  # the next turn to weigh (its rank: len(ids) - t)
    stretches = getattr(b, "fitting_turns", None)
    plain = None  # every id a ``str``, as ``trace_entry`` checks (asked once, where a run is kept)
    while t >= 0:
        run = _fitting(b, t, budget) or (stretches is not None and _stretch_run(b, t, stretches(t)))
        if run:
            if plain is None:
                plain = _plain_ids(ids, range(len(ids)))
            for turn, marginal, total in run:
                trace.append(_turn_entry(plain, ids[turn], "kept", marginal,
                                         f"fits: {total} of {budget} tokens after it", len(ids) - turn))
            b.take(b.selection.add(turns=b.selection.turns + tuple(turn for turn, _, _ in run)), run[-1][2])
            t -= len(run)
            continue

        def candidate(t=t):  # built only when counted or kept: at 30,000 items the copies add up
            return b.selection.add(turns=b.selection.turns + (t,))
        total, marginal = b.attempt("history", t, candidate)
        rank = len(ids) - t
        if total <= budget:
            b.take(candidate(), total)
            trace.append(trace_entry("history", ids[t], "kept", marginal, f"fits: {total} of {budget} tokens after it",
                                     rank=rank))
            t -= 1
            continue
        trace.append(trace_entry("history", ids[t], "dropped", marginal,
                                 f"does not fit: needs {marginal}, {budget - b.tokens} left", rank=rank))
        _older(b, ids, t, rank)
        return rank - 1, len(ids) - rank + 1
    return len(ids), 0


def _span_turns(b: Builder) -> tuple[list, dict] | None:
    """The default builder's turn shapes where it has asked for them (the first ``attempt`` does), else ``None``."""
    return b._shapes if type(b) is FastBuilder else None


def _fitting(b: Builder, t: int, budget: int) -> list[tuple[int, int, int]]:
    """(turn, marginal, total) of turns ``t``, ``t - 1``, ... while each is priced from its spans and fits, its total
    not near the allowance: what ``attempt`` and ``take`` give each in turn, without a complete count. Stops at any
    other turn (``[]`` when ``t`` is one)."""
    shapes = _span_turns(b)
    if shapes is None:
        return []
    shape_of, memo = shapes[0], b._text_memo
    tokens, run = b.tokens, []
    for turn in range(t, -1, -1):
        shape = shape_of[turn]
        if shape is None or shape[0] != SPAN_TURN or b._open_ended(turn):
            break
        text = memo.get(turn)
        total = tokens + (b._text_tokens("history", turn) if text is None else text) + shape[1]
        if total > budget or abs(total - b.budget) <= NEAR_ALLOWANCE or total.__class__ is not int:
            break
        run.append((turn, total - tokens, total))
        tokens = total
    return run


def _stretch_run(b: Builder, t: int, stretch: list[int] | None) -> list[tuple[int, int, int]]:
    """(turn, marginal, total) of a stretch of single-message turns from ``t`` back that the default builder figured
    at once (``FastBuilder.fitting_turns``: each fits, none near the allowance), as ``_fitting`` gives them."""
    run, tokens = [], b.tokens
    for k, marginal in enumerate(stretch or ()):
        tokens += marginal
        run.append((t - k, marginal, tokens))
    return run


def _unchosen(b: Builder, turns: range) -> Iterator[int]:
    """What each of ``turns`` (consecutive, newest first) would add to the selection as it stands, none of them
    admitted whatever its count: ``attempt`` with ``decides=False``; for a turn priced from its spans, the figure
    ``_marginal`` gives it; for a stretch of single-message turns the default builder figures at once
    (``FastBuilder.older_turns``), its figures."""
    shapes = _span_turns(b)
    memo = None if shapes is None else b._text_memo
    stretch_of = getattr(b, "older_turns", None)
    pending: Iterator[int] = iter(())
    for t in turns:
        figure = next(pending, None)
        if figure is not None:
            yield figure
            continue
        shape = None if shapes is None else shapes[0][t]
        if shape is not None and shape[0] == SPAN_TURN and not b._open_ended(t):
            text = memo.get(t)
            yield (b._text_tokens("history", t) if text is None else text) + shape[1]
        elif stretch_of is not None and (stretch := stretch_of(t)):
            pending = iter(stretch[1:])
            yield stretch[0]
        else:
            yield b.attempt("history", t, lambda t=t: b.selection.add(turns=b.selection.turns + (t,)),
                            decides=False)[1]


def _older(b: Builder, ids: list[str], stopped: int, rank: int) -> None:
    """The entries of the turns older than ``stopped``, the first misfit (ranked from ``rank`` on): dropped, each
    with what it would add (``_unchosen``), all for the one reason."""
    reason = f"older than {ids[stopped]}, which did not fit (history stops at the first misfit)"
    older = range(stopped - 1, -1, -1)
    plain = _plain_ids(ids, older)
    trace = b.trace
    for (rank, t), marginal in zip(enumerate(older, start=rank + 1), _unchosen(b, older)):
        trace.append(_turn_entry(plain, ids[t], "dropped", marginal, reason, rank))


def _plain_ids(ids: list[str], turns: range) -> bool:
    """Whether the entries of ``turns`` can be made without validation (``result._made``): what ``trace_entry`` checks
    of an id, asked once for them all."""
    return MADE_OK and all(ids[t].__class__ is str for t in turns)


def _turn_entry(plain: bool, turn_id: str, decision: str, marginal: int, reason: str, rank: int):
    """A history turn's trace entry: made directly where its values have the schema's types (``plain`` ids, an ``int``
    figure), else through ``trace_entry``."""
    if plain and marginal.__class__ is int:
        return _made("history", turn_id, decision, marginal, reason, rank, None, None, ITEM_FIELDS)
    return trace_entry("history", turn_id, decision, marginal, reason, rank=rank)
