"""The expansion record: seed chunks with their neighbours inside a section, merged into windows."""
from __future__ import annotations

from typing import Any, Mapping, Sequence
from .ids import EXPANSION_MODE, SCHEMA_VERSION, _refuse, content_id, short
from .index import IndexView, validate_index


# --------------------------------------------------------------------------------------------
# expansion: seeds -> windows


def _check_seed_list(view: IndexView, seed_ids: Any, where: str) -> list[str]:
    if not isinstance(seed_ids, list) or not all(isinstance(s, str) for s in seed_ids):
        _refuse(where, "must be a list of chunk ids", "contract")
    seen: set[str] = set()
    for rank, seed in enumerate(seed_ids, start=1):
        if seed not in view.chunks:
            _refuse(f"{where}[{rank - 1}]", f"seed {short(seed)} (rank {rank}) is not in the chunk index",
                    "unknown-chunk", chunk_id=seed)
        if seed in seen:
            _refuse(f"{where}[{rank - 1}]", f"seed {short(seed)} is ranked twice", "duplicate-id", chunk_id=seed)
        seen.add(seed)
    return list(seed_ids)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Order ranges that share a chunk become one window; merely adjacent ones stay separate passages."""
    out: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if out and low <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out


def _window(view: IndexView, source_id: str, sid: str, first: int, last: int,
            rank_of: dict[str, int]) -> dict[str, Any]:
    doc = view.documents[source_id]
    chunks = [view.by_order[(source_id, order)] for order in range(first, last + 1)]
    seeds = sorted((c.chunk_id for c in chunks if c.chunk_id in rank_of), key=rank_of.__getitem__)
    start, end = chunks[0].start, chunks[-1].end
    window = {
        "source_id": source_id, "version": doc.version, "document_revision": doc.document_revision,
        "section_id": sid, "section_title": view.sections[(source_id, sid)].title,
        "start_order": first, "end_order": last, "start": start, "end": end,
        "chunk_ids": [c.chunk_id for c in chunks], "seed_ids": seeds,
        "seed_ranks": [{"chunk_id": s, "rank": rank_of[s]} for s in seeds],
        "members": [{"chunk_id": c.chunk_id, "role": "seed" if c.chunk_id in rank_of else "neighbor",
                     "retrieval_rank": rank_of.get(c.chunk_id)} for c in chunks],
        "text": doc.text[start:end],
    }
    return {"window_id": content_id(window, "window_id"), **window}


def _expansion(view: IndexView, seed_ids: list[str], radius: int) -> dict[str, Any]:
    rank_of = {seed: rank for rank, seed in enumerate(seed_ids, start=1)}
    ranges: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for seed in seed_ids:
        chunk = view.chunks[seed]
        key = (chunk.source_id, chunk.section_id)
        first, last = view.section_orders[key]  # windows never cross a section boundary
        ranges.setdefault(key, []).append((max(first, chunk.order - radius), min(last, chunk.order + radius)))
    groups = [_window(view, source_id, sid, low, high, rank_of)
              for (source_id, sid), spans in ranges.items() for low, high in _merged(spans)]
    groups.sort(key=lambda g: g["seed_ranks"][0]["rank"])  # by priority: the earliest seed rank
    return {"schema_version": SCHEMA_VERSION, "execution_mode": EXPANSION_MODE, "index_id": view.index.index_id,
            "radius": radius, "seed_ids": list(seed_ids), "groups": groups}


def expand(index: Mapping[str, Any], ranked_seed_ids: Sequence[str], radius: int = 1) -> dict[str, Any]:
    """The expansion record: each seed chunk with up to ``radius`` neighbours on each side inside its
    section; windows that share a chunk merge; windows are ordered by their earliest seed rank."""
    if isinstance(radius, bool) or not isinstance(radius, int) or radius < 0:
        _refuse("radius", f"radius must be a whole number of chunks >= 0, not {radius!r}", "contract")
    view = validate_index(index)
    seeds = list(ranked_seed_ids) if not isinstance(ranked_seed_ids, str) else ranked_seed_ids
    return _expansion(view, _check_seed_list(view, seeds, "ranked_seed_ids"), radius)
