"""The evidence section's fill: passages by score (ties by id), each admitted if it fits, else skipped.

``fill_evidence`` makes the decisions and trace entries ``Builder.attempt`` makes, one passage at a time. Under
the default builder (``FastBuilder``), once a passage is kept and the passages' shape constant is known, what
each further passage adds is its block's text count plus that constant, whatever else is kept
(``FastBuilder._marginal``): the run of passages after it is then weighed in one loop over those memoised
figures, without a candidate selection or an attempt per passage. A passage whose prediction lands near the
allowance (``NEAR_ALLOWANCE``) goes through ``attempt``, which checks it with a complete count, exactly as
before; so does every passage while no passage is kept (the first brings the preamble) or when the constant is
unknown. The ranking and the check that each passage's id, score and source have the types a validated trace
entry holds are worked out once per request content (kept on the memo's evidence blocks).
"""
from __future__ import annotations

from .assembly_fast import NEAR_ALLOWANCE, FastBuilder
from .assembly_reference import Builder
from .render import evidence_ranking
from .result import MADE_OK, PASSAGE_FIELDS, _made, trace_entry

_EVIDENCE = ("evidence",)


def _ranking(b: Builder) -> tuple[list[int], bool]:
    """``evidence_ranking`` of the request, and whether its passages' fields can go into ``_made`` as they are;
    kept on the builder's evidence blocks (one per request content, lent by ``core.assembly_memo``)."""
    request = b.request
    blocks = getattr(b, "blocks", None)
    known = getattr(blocks, "ranking", None)
    if known is not None and known[0] is request.evidence:
        return known[1], known[2]
    ranking = evidence_ranking(request)
    plain = MADE_OK and all(p.id.__class__ is str and p.score.__class__ is float
                            and (p.source is None or p.source.__class__ is str) for p in request.evidence)
    if blocks is not None:
        blocks.ranking = (request.evidence, ranking, plain)
    return ranking, plain


def fill_evidence(b: Builder, budget: int) -> tuple[list[str], list[str]]:
    """Passages by score (ties by id); one that does not fit is skipped and the next is tried."""
    ranking, plain = _ranking(b)
    kept: list[str] = []
    dropped: list[str] = []
    batched = plain and type(b) is FastBuilder
    position = 0
    while position < len(ranking):
        constant = _constant(b, ranking[position]) if batched else None
        if constant is not None:
            position, near = _run(b, budget, ranking, position, constant, kept, dropped)
            if not near:
                continue
        _attempt(b, budget, position + 1, ranking[position], kept, dropped)
        position += 1
    return kept, dropped


def _constant(b: FastBuilder, index: int) -> int | None:
    """What every passage adds beyond its block's text count while the selection stays as it is, as
    ``FastBuilder._marginal`` finds it (asked in the same order), or ``None`` where it asks otherwise: the
    passages' shape constant once one is kept; before that, the first passage's constant (it brings the
    preamble), unless the newest kept turn ends open (its seam with the question depends on the passage)."""
    if index in b.rewritten_passages:  # counted in its place (``FastBuilder._marginal``)
        return None
    if b.selection.evidence:
        return b._constant(_EVIDENCE, b._evidence_members, "evidence")
    if b.selection.turns and b._open_ended(b._newest(b.selection.turns)):
        return None
    return b._first_passage_constant(index)


def _attempt(b: Builder, budget: int, rank: int, i: int, kept: list[str], dropped: list[str]) -> None:
    """One passage through ``b.attempt``."""
    passage = b.request.evidence[i]

    def candidate():
        return b.selection.add(evidence=b.selection.evidence + (i,))
    total, marginal = b.attempt("evidence", i, candidate)
    if total <= budget:
        b.take(candidate(), total)
        kept.append(passage.id)
        b.trace.append(trace_entry("evidence", passage.id, "kept", marginal, f"fits: {total} of {budget} tokens after it",
                                   rank=rank, score=passage.score, source=passage.source))
    else:
        dropped.append(passage.id)
        b.trace.append(trace_entry("evidence", passage.id, "dropped", marginal,
                                   f"does not fit: needs {marginal}, {budget - b.tokens} left", rank=rank,
                                   score=passage.score, source=passage.source))


def _run(b: FastBuilder, budget: int, ranking: list[int], position: int, constant: int,
         kept: list[str], dropped: list[str]) -> tuple[int, bool]:
    """Passages ``ranking[position:]`` weighed by text count plus ``constant`` (``_constant``), until the end, a
    prediction near the allowance (the position returned is that passage's, with ``True``) or the first passage
    kept (the one after it)."""
    evidence, trace, memo = b.request.evidence, b.trace, b._text_memo
    tokens = b.tokens
    left = budget - tokens
    for position in range(position, len(ranking)):
        i = ranking[position]
        if i in b.rewritten_passages:
            return position, True  # (``attempt`` counts it in its place)
        text = memo.get(-1 - i)
        if text is None:
            text = b._text_tokens("evidence", i)
        marginal = text + constant
        if abs(marginal - left) <= NEAR_ALLOWANCE or marginal.__class__ is not int:  # near the budget: ``attempt``
            return position, True  # checks it whole (and a count that is not an ``int`` is validated there)
        passage = evidence[i]
        if marginal <= left:
            tokens += marginal
            b.take(b.selection.add(evidence=b.selection.evidence + (i,)), tokens)
            kept.append(passage.id)
            trace.append(_made("evidence", passage.id, "kept", marginal, f"fits: {tokens} of {budget} tokens after it",
                               position + 1, passage.score, passage.source, PASSAGE_FIELDS))
            if len(b.selection.evidence) == 1:  # the first kept: what the next ones add is the shape constant
                return position + 1, False
            left = budget - tokens
        else:
            dropped.append(passage.id)
            trace.append(_made("evidence", passage.id, "dropped", marginal,
                               f"does not fit: needs {marginal}, {left} left", position + 1, passage.score,
                               passage.source, PASSAGE_FIELDS))
    return len(ranking), False
