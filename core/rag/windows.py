"""Validating windows: every window recomputed from its source spans before it is cited."""
from __future__ import annotations

from itertools import zip_longest
from typing import Any, Mapping, Sequence
from .ids import _refuse, content_id, short
from .records import Chunk, Document, ExpansionRecord, Section, SeedRank, Window, _parse
from .index import IndexView, validate_index
from .expansion import _check_seed_list, _expansion


# --------------------------------------------------------------------------------------------
# validating windows


def validate_windows(index: Mapping[str, Any], windows: Mapping[str, Any]) -> ExpansionRecord:
    """Check the index, then recompute every window of the expansion record from its source spans."""
    return _validated(index, windows)[1]


def _validated(index: Mapping[str, Any], windows: Mapping[str, Any]) -> tuple[IndexView, ExpansionRecord]:
    view = validate_index(index)
    record = _parse(ExpansionRecord, windows, "windows")
    if record.index_id != view.index.index_id:
        _refuse("windows.index_id", f"the expansion record was built from index {short(record.index_id)}, "
                                    f"not this chunk index ({short(view.index.index_id)})", "index-mismatch")
    seeds = _check_seed_list(view, record.seed_ids, "windows.seed_ids")
    rank_of = {seed: rank for rank, seed in enumerate(seeds, start=1)}
    for g, window in enumerate(record.groups):
        _check_window(view, window, f"windows.groups[{g}]", rank_of)
    _check_seed_coverage(record, rank_of)
    _check_is_expansion(view, record)
    return view, record


def _check_window(view: IndexView, w: Window, where: str, rank_of: dict[str, int]) -> None:
    doc, section = _window_source(view, w, where)
    chunks = _window_chunks(view, w, where, section)
    _check_seeds(w, where, rank_of)
    _check_span_and_text(w, where, doc, section, chunks)
    recomputed = content_id(w.model_dump(), "window_id")
    if w.window_id != recomputed:
        _refuse(f"{where}.window_id", f"window {short(w.window_id)}: window_id does not match its content "
                                      f"(recomputed {short(recomputed)})", "window-id", window_id=w.window_id)


def _window_source(view: IndexView, w: Window, where: str) -> tuple[Document, Section]:
    label = f"window {short(w.window_id)}"
    doc = view.documents.get(w.source_id)
    if doc is None:
        _refuse(f"{where}.source_id", f"{label}: source {w.source_id} is not in the chunk index", "unknown-source",
                window_id=w.window_id)
    if (w.version, w.document_revision) != (doc.version, doc.document_revision):
        _refuse(where, f"{label}: records {w.source_id} version {w.version} revision {short(w.document_revision)}, "
                       f"the index holds version {doc.version} revision {short(doc.document_revision)}", "revision",
                window_id=w.window_id)
    section = view.sections.get((w.source_id, w.section_id))
    if section is None:
        _refuse(f"{where}.section_id", f"{label}: section {short(w.section_id)} is not a section of {w.source_id}",
                "unknown-section", window_id=w.window_id)
    if w.section_title != section.title:
        _refuse(f"{where}.section_title", f"{label}: section title {w.section_title!r} differs from the index's "
                                          f"{section.title!r}", "section", window_id=w.window_id)
    return doc, section


def _window_chunks(view: IndexView, w: Window, where: str, section: Section) -> list[Chunk]:
    label = f"window {short(w.window_id)}"
    if not w.members:
        _refuse(f"{where}.members", f"{label}: has no members", "members", window_id=w.window_id)
    chunks = []
    for m, member in enumerate(w.members):
        chunk = view.chunks.get(member.chunk_id)
        if chunk is None:
            _refuse(f"{where}.members[{m}].chunk_id", f"{label}: member {short(member.chunk_id)} is not in the chunk "
                                                      "index", "unknown-chunk", window_id=w.window_id,
                    chunk_id=member.chunk_id)
        if (chunk.source_id, chunk.section_id) != (w.source_id, w.section_id):
            other = view.sections[(chunk.source_id, chunk.section_id)].title
            _refuse(f"{where}.members[{m}].chunk_id",
                    f"{label}: member {short(chunk.chunk_id)} belongs to section {other!r} of {chunk.source_id}, "
                    f"not this window's section {section.title!r} of {w.source_id}", "section",
                    window_id=w.window_id, chunk_id=chunk.chunk_id)
        chunks.append(chunk)
    member_ids = [c.chunk_id for c in chunks]
    if w.chunk_ids != member_ids:
        at = next(i for i, (a, b) in enumerate(zip_longest(w.chunk_ids, member_ids)) if a != b)
        _refuse(f"{where}.chunk_ids", f"{label}: chunk_ids differ from the members at position {at}", "members",
                window_id=w.window_id)
    orders = [c.order for c in chunks]
    if orders != list(range(w.start_order, w.end_order + 1)):
        _refuse(where, f"{label}: members have chunk orders {orders}, not the consecutive chunks "
                       f"{w.start_order}-{w.end_order} of the section", "members", window_id=w.window_id)
    return chunks


def _check_seeds(w: Window, where: str, rank_of: dict[str, int]) -> None:
    label = f"window {short(w.window_id)}"
    if not w.seed_ids:
        _refuse(f"{where}.seed_ids", f"{label}: has no seed", "missing-seed", window_id=w.window_id)
    for m, member in enumerate(w.members):
        rank = rank_of.get(member.chunk_id)
        is_seed = member.chunk_id in w.seed_ids
        if rank is not None and not is_seed:
            _refuse(f"{where}.seed_ids", f"{label}: member {short(member.chunk_id)} is seed rank {rank} of the "
                                         "expansion record but not a seed of this window", "missing-seed",
                    window_id=w.window_id, chunk_id=member.chunk_id)
        if rank is None and is_seed:
            _refuse(f"{where}.seed_ids", f"{label}: seed {short(member.chunk_id)} is not in the expansion record's "
                                         "seed list", "unknown-seed", window_id=w.window_id, chunk_id=member.chunk_id)
        expected = ("seed", rank) if is_seed else ("neighbor", None)
        if (member.role, member.retrieval_rank) != expected:
            _refuse(f"{where}.members[{m}]", f"{label}: member {short(member.chunk_id)} is recorded as {member.role} "
                                             f"rank {member.retrieval_rank}, the expansion record makes it "
                                             f"{expected[0]} rank {expected[1]}", "member-role",
                    window_id=w.window_id, chunk_id=member.chunk_id)
    missing = [s for s in w.seed_ids if s not in w.chunk_ids]
    if missing:
        _refuse(f"{where}.seed_ids", f"{label}: seed {short(missing[0])} is not one of its members", "unknown-seed",
                window_id=w.window_id, chunk_id=missing[0])
    expected_ranks = sorted(w.seed_ids, key=rank_of.__getitem__)
    ranks = [SeedRank(chunk_id=s, rank=rank_of[s]) for s in expected_ranks]
    if w.seed_ids != expected_ranks or w.seed_ranks != ranks:
        _refuse(f"{where}.seed_ranks", f"{label}: seed_ids/seed_ranks are not its seeds in the expansion record's "
                                       "rank order", "seed-ranking", window_id=w.window_id)


def _check_span_and_text(w: Window, where: str, doc: Document, section: Section, chunks: list[Chunk]) -> None:
    label = f"window {short(w.window_id)}"
    if not section.start <= w.start < w.end <= section.end:
        _refuse(where, f"{label}: span chars {w.start}-{w.end} is not inside section {section.title!r} "
                       f"(chars {section.start}-{section.end})", "span", window_id=w.window_id)
    if (w.start, w.end) != (chunks[0].start, chunks[-1].end):
        _refuse(where, f"{label}: span chars {w.start}-{w.end} does not match its member chunks "
                       f"(chars {chunks[0].start}-{chunks[-1].end})", "span", window_id=w.window_id)
    if w.text != doc.text[w.start:w.end]:
        _refuse(f"{where}.text", f"{label}: text does not match source {w.source_id} chars {w.start}-{w.end}",
                "text-mismatch", window_id=w.window_id)
    if w.text != "".join(c.text for c in chunks):
        _refuse(f"{where}.text", f"{label}: text is not its member chunks' texts in order", "text-mismatch",
                window_id=w.window_id)


def _check_seed_coverage(record: ExpansionRecord, rank_of: dict[str, int]) -> None:
    """Every ranked seed is in exactly one window."""
    holders: dict[str, list[str]] = {seed: [] for seed in rank_of}
    for window in record.groups:
        for seed in window.seed_ids:
            holders[seed].append(window.window_id)
    for seed, windows in holders.items():
        if len(windows) != 1:
            where = "in no window" if not windows else f"in {len(windows)} windows"
            _refuse("windows.groups", f"seed {short(seed)} (rank {rank_of[seed]}) is {where}", "missing-seed"
                    if not windows else "duplicate-seed", chunk_id=seed)


def _check_is_expansion(view: IndexView, record: ExpansionRecord) -> None:
    """The record must be exactly what expanding its seeds at its radius gives (no trimmed neighbours,
    no reordered or extra windows)."""
    expected = _expansion(view, list(record.seed_ids), record.radius)["groups"]
    given = [w.model_dump() for w in record.groups]
    if len(given) != len(expected):
        _refuse("windows.groups", f"the record has {len(given)} windows; expanding its seeds at radius "
                                  f"{record.radius} gives {len(expected)}", "expansion")
    for g, (have, want) in enumerate(zip(given, expected)):
        if have != want:
            # name a content field rather than the id, which differs whenever content does
            field = next((k for k in want if k != "window_id" and have.get(k) != want[k]), "window_id")
            _refuse(f"windows.groups[{g}].{field}", f"window {short(have['window_id'])}: {field} differs from the "
                                                    f"radius-{record.radius} expansion of its seeds", "expansion",
                    window_id=have["window_id"])


def check_seed_ranking(ranked_seed_ids: Any, record: ExpansionRecord) -> None:
    """The separately supplied ranked seed list must equal the expansion record's, rank for rank."""
    if (isinstance(ranked_seed_ids, str) or not isinstance(ranked_seed_ids, Sequence)
            or not all(isinstance(s, str) for s in ranked_seed_ids)):
        _refuse("ranked_seed_ids", "must be a list of chunk ids", "contract")
    for rank, (given, recorded) in enumerate(zip_longest(ranked_seed_ids, record.seed_ids), start=1):
        if given != recorded:
            _refuse(f"ranked_seed_ids[{rank - 1}]", f"seed ranking differs from the expansion record at rank {rank}: "
                                                    f"the ranked list has {short(given)}, the record has "
                                                    f"{short(recorded)}", "seed-ranking", chunk_id=given or recorded)
