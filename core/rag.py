"""The RAG window adapter (seed 004): verified source windows become cited passages.

A chunk index holds documents (text, revision, sections) and the chunks that tile each section.
An expansion record groups the consecutive chunks of one section around ranked seed chunks
(``expand``). Before anything is assembled the index is validated, every window is recomputed
from its source spans and the ranked seed list must equal the record's: a citation label is never
attached to text the index does not hold. Each whole window then becomes one ``Evidence`` passage
whose score is minus its priority (the earliest contributing seed rank), ``core.assemble`` admits
windows whole, and the complete request is recounted.

Identifiers are sha256 digests of canonical JSON (sorted keys, no spaces, UTF-8):

- ``document_revision``: the document text;
- ``section_id``: source id, revision, title and body span;
- ``chunk_id``: source id, revision, span and text;
- ``index_id`` / ``window_id``: every other field of the index / window.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any, Literal, Mapping, NamedTuple, NoReturn, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .assembly import assemble
from .contracts import Request, parse_request, problems_from
from .counting import TokenCounter
from .errors import AssemblyInvariantError, RequestError
from .loading import read_json
from .result import AssemblyResult

SCHEMA_VERSION = 1
EXPANSION_MODE = "offline-explicit-seed-expansion"
RAG_KIND = "rag-windows"
DEFAULT_INSTRUCTIONS = ("Answer the current question only from the supplied reference passages and cite the "
                        "passage id you used. If the passages do not answer it, say so.")
SCOPE = ("whole-window admission; complete serialized request includes source labels, wrappers, chat template "
         "and generation prefix")


class WindowError(RequestError):
    """A chunk index, expansion record or ranked seed list that does not hold up; refused before assembly.

    ``rule`` names the broken rule (``text-mismatch``, ``seed-ranking``...), ``window_id`` and
    ``chunk_id`` the items concerned (full ids; the message shortens them).
    """

    def __init__(self, problems: list[tuple[str, str]], *, source: str | None = None, rule: str = "contract",
                 window_id: str | None = None, chunk_id: str | None = None):
        super().__init__(problems, source=source)
        self.rule = rule
        self.window_id = window_id
        self.chunk_id = chunk_id

    def with_source(self, source: str) -> "WindowError":
        return WindowError(self.problems, source=source, rule=self.rule, window_id=self.window_id,
                           chunk_id=self.chunk_id)


def _refuse(where: str, message: str, rule: str, *, window_id: str | None = None,
            chunk_id: str | None = None) -> NoReturn:
    raise WindowError([(where, message)], rule=rule, window_id=window_id, chunk_id=chunk_id)


def short(identifier: str | None) -> str:
    """An id as messages show it: 8 characters and an ellipsis."""
    if identifier is None:
        return "nothing"
    return identifier[:8] + "…" if len(identifier) > 12 else identifier


# --------------------------------------------------------------------------------------------
# identifiers


def canonical_sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_revision(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_id(source_id: str, revision: str, title: str, start: int, end: int) -> str:
    return canonical_sha256({"source_id": source_id, "document_revision": revision, "title": title,
                             "start": start, "end": end})


def chunk_id(source_id: str, revision: str, start: int, end: int, text: str) -> str:
    return canonical_sha256({"source_id": source_id, "document_revision": revision, "start": start, "end": end,
                             "text": text})


def content_id(record: Mapping[str, Any], id_key: str) -> str:
    """sha256 of every field but the id itself (``index_id``, ``window_id``)."""
    return canonical_sha256({k: v for k, v in record.items() if k != id_key})


# --------------------------------------------------------------------------------------------
# shapes: strict, unknown keys refused, so an id covers everything a record carries


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Section(_Record):
    section_id: str
    title: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Document(_Record):
    source_id: str = Field(min_length=1)
    version: str
    path: str
    url: str | None = None
    document_revision: str
    text: str
    sections: list[Section]


class Chunk(_Record):
    chunk_id: str
    source_id: str
    section_id: str
    order: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = Field(min_length=1)


class ChunkIndex(_Record):
    schema_version: Literal[1]
    index_id: str
    documents: list[Document]
    chunks: list[Chunk]


class SeedRank(_Record):
    chunk_id: str
    rank: int = Field(ge=1)


class Member(_Record):
    chunk_id: str
    role: Literal["seed", "neighbor"]
    retrieval_rank: int | None


class Window(_Record):
    window_id: str
    source_id: str
    version: str
    document_revision: str
    section_id: str
    section_title: str
    start_order: int = Field(ge=0)
    end_order: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    chunk_ids: list[str]
    seed_ids: list[str]
    seed_ranks: list[SeedRank]
    members: list[Member]
    text: str


class ExpansionRecord(_Record):
    schema_version: Literal[1]
    execution_mode: Literal["offline-explicit-seed-expansion"]
    index_id: str
    radius: int = Field(ge=0)
    seed_ids: list[str]
    groups: list[Window]


class SourceDocument(_Record):
    """A document as ``build_index`` takes it; ``## `` headings open its sections."""

    source_id: str = Field(min_length=1)
    version: str
    path: str
    url: str | None = None
    text: str


_Model = TypeVar("_Model", bound=_Record)


def _parse(model: type[_Model], data: Any, where: str) -> _Model:
    if isinstance(data, BaseModel):
        data = data.model_dump()
    if not isinstance(data, Mapping):
        _refuse(where, f"must be a JSON object, not {type(data).__name__}", "contract")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise WindowError([(f"{where}.{path}" if path else where, msg) for path, msg in problems_from(exc)],
                          rule="contract") from None


# --------------------------------------------------------------------------------------------
# building an index from markdown-like documents

_HEADING = re.compile(r"^## (.+)\n", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")


def _section_spans(text: str) -> list[tuple[str, int, int]]:
    """``(title, start, end)`` of each ``## `` section body, blank lines around it left out."""
    headings = list(_HEADING.finditer(text))
    spans = []
    for n, heading in enumerate(headings):
        limit = headings[n + 1].start() if n + 1 < len(headings) else len(text)
        body = text[heading.end():limit]
        start = heading.end() + len(body) - len(body.lstrip("\n"))
        content = body.strip("\n")
        end = start + len(content) + (1 if content and body.rstrip("\n") != body else 0)
        spans.append((heading.group(1).strip(), start, end))
    return spans


def _paragraph_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Paragraphs of ``text[start:end]``; each keeps the blank lines after it, so they tile the span."""
    cuts = [start] + [m.end() for m in _PARAGRAPH_BREAK.finditer(text, start, end) if m.end() < end]
    return [(a, b) for a, b in zip(cuts, cuts[1:] + [end]) if a < b]


def build_index(documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A chunk index over ``documents`` ({source_id, version, path, url, text}): ``## `` headings open
    sections, paragraphs are chunks, numbered in text order per document."""
    out_documents: list[dict[str, Any]] = []
    out_chunks: list[dict[str, Any]] = []
    for n, given in enumerate(documents):
        doc = _parse(SourceDocument, given, f"documents[{n}]")
        revision = document_revision(doc.text)
        sections = []
        order = 0
        for title, start, end in _section_spans(doc.text):
            sid = section_id(doc.source_id, revision, title, start, end)
            sections.append({"section_id": sid, "title": title, "start": start, "end": end})
            for a, b in _paragraph_spans(doc.text, start, end):
                out_chunks.append({"chunk_id": chunk_id(doc.source_id, revision, a, b, doc.text[a:b]),
                                   "source_id": doc.source_id, "section_id": sid, "order": order,
                                   "start": a, "end": b, "text": doc.text[a:b]})
                order += 1
        out_documents.append({"source_id": doc.source_id, "version": doc.version, "path": doc.path,
                              "url": doc.url, "document_revision": revision, "text": doc.text,
                              "sections": sections})
    body = {"schema_version": SCHEMA_VERSION, "documents": out_documents, "chunks": out_chunks}
    return {"schema_version": SCHEMA_VERSION, "index_id": canonical_sha256(body), "documents": out_documents,
            "chunks": out_chunks}


# --------------------------------------------------------------------------------------------
# validating the index


@dataclass(frozen=True)
class IndexView:
    """A validated index and the lookups windows are checked against."""

    index: ChunkIndex
    documents: dict[str, Document]
    sections: dict[tuple[str, str], Section]
    chunks: dict[str, Chunk]
    by_order: dict[tuple[str, int], Chunk]
    section_orders: dict[tuple[str, str], tuple[int, int]]  # first and last chunk order of each section


def validate_index(index: Mapping[str, Any] | ChunkIndex) -> IndexView:
    """Check every id and span of a chunk index; raise ``WindowError`` naming the first problem."""
    parsed = _parse(ChunkIndex, index, "index")
    documents: dict[str, Document] = {}
    sections: dict[tuple[str, str], Section] = {}
    for d, doc in enumerate(parsed.documents):
        where = f"index.documents[{d}]"
        if doc.source_id in documents:
            _refuse(f"{where}.source_id", f"source {doc.source_id} appears twice", "duplicate-id")
        documents[doc.source_id] = doc
        for section in _checked_sections(doc, where):
            sections[(doc.source_id, section.section_id)] = section
    chunks = _checked_chunks(parsed, documents, sections)
    by_order = {(c.source_id, c.order): c for c in chunks.values()}
    section_orders = _checked_tiling(parsed, sections)
    recomputed = content_id(parsed.model_dump(), "index_id")
    if parsed.index_id != recomputed:
        _refuse("index.index_id", f"index_id {short(parsed.index_id)} does not match the index content "
                                  f"(recomputed {short(recomputed)})", "index-id")
    return IndexView(parsed, documents, sections, chunks, by_order, section_orders)


def _checked_sections(doc: Document, where: str) -> list[Section]:
    revision = document_revision(doc.text)
    if doc.document_revision != revision:
        _refuse(f"{where}.document_revision", f"source {doc.source_id}: document_revision "
                f"{short(doc.document_revision)} does not match its text (sha256 {short(revision)})", "revision")
    previous_end = 0
    seen: set[str] = set()
    for s, section in enumerate(doc.sections):
        at = f"{where}.sections[{s}]"
        if not previous_end <= section.start <= section.end <= len(doc.text):
            _refuse(at, f"source {doc.source_id}: section {section.title!r} chars {section.start}-{section.end} "
                        f"is out of order or outside the text (0-{len(doc.text)})", "span")
        expected = section_id(doc.source_id, revision, section.title, section.start, section.end)
        if section.section_id != expected:
            _refuse(f"{at}.section_id", f"source {doc.source_id}: section_id {short(section.section_id)} does not "
                                        f"match section {section.title!r} (recomputed {short(expected)})", "section-id")
        if section.section_id in seen:
            _refuse(f"{at}.section_id", f"source {doc.source_id}: section {section.title!r} appears twice",
                    "duplicate-id")
        seen.add(section.section_id)
        previous_end = section.end
    return list(doc.sections)


def _checked_chunks(index: ChunkIndex, documents: dict[str, Document],
                    sections: dict[tuple[str, str], Section]) -> dict[str, Chunk]:
    chunks: dict[str, Chunk] = {}
    for c, chunk in enumerate(index.chunks):
        at = f"index.chunks[{c}]"
        label = f"chunk {short(chunk.chunk_id)}"
        doc = documents.get(chunk.source_id)
        if doc is None:
            _refuse(f"{at}.source_id", f"{label}: source {chunk.source_id} is not in the index", "unknown-source",
                    chunk_id=chunk.chunk_id)
        section = sections.get((chunk.source_id, chunk.section_id))
        if section is None:
            _refuse(f"{at}.section_id", f"{label}: section {short(chunk.section_id)} is not a section of "
                                        f"{chunk.source_id}", "unknown-section", chunk_id=chunk.chunk_id)
        if not section.start <= chunk.start < chunk.end <= section.end:
            _refuse(at, f"{label}: chars {chunk.start}-{chunk.end} are not inside section {section.title!r} "
                        f"(chars {section.start}-{section.end})", "span", chunk_id=chunk.chunk_id)
        if chunk.text != doc.text[chunk.start:chunk.end]:
            _refuse(f"{at}.text", f"{label}: text does not match source {chunk.source_id} chars "
                                  f"{chunk.start}-{chunk.end}", "text-mismatch", chunk_id=chunk.chunk_id)
        expected = chunk_id(chunk.source_id, doc.document_revision, chunk.start, chunk.end, chunk.text)
        if chunk.chunk_id != expected:
            _refuse(f"{at}.chunk_id", f"{label}: chunk_id does not match its source span and text "
                                      f"(recomputed {short(expected)})", "chunk-id", chunk_id=chunk.chunk_id)
        if chunk.chunk_id in chunks:
            _refuse(f"{at}.chunk_id", f"{label} appears twice", "duplicate-id", chunk_id=chunk.chunk_id)
        chunks[chunk.chunk_id] = chunk
    return chunks


def _checked_tiling(index: ChunkIndex,
                    sections: dict[tuple[str, str], Section]) -> dict[tuple[str, str], tuple[int, int]]:
    """Chunks are numbered 0..n-1 in text order per document and tile each section without gaps,
    so a run of consecutive chunks is exactly the source text between its ends."""
    per_document: dict[str, list[Chunk]] = {}
    for chunk in index.chunks:
        per_document.setdefault(chunk.source_id, []).append(chunk)
    orders: dict[tuple[str, str], tuple[int, int]] = {}
    for source_id, chunks in per_document.items():
        chunks.sort(key=lambda c: c.start)
        for expected, chunk in enumerate(chunks):
            if chunk.order != expected:
                _refuse("index.chunks", f"chunk {short(chunk.chunk_id)}: order {chunk.order}, but it is chunk "
                                        f"{expected} of {source_id} in text order", "order", chunk_id=chunk.chunk_id)
            key = (source_id, chunk.section_id)
            first, _ = orders.get(key, (chunk.order, chunk.order))
            orders[key] = (first, chunk.order)
    for (source_id, sid), section in sections.items():
        members = [c for c in per_document.get(source_id, []) if c.section_id == sid]
        position = section.start
        for chunk in members:
            if chunk.start != position:
                _refuse("index.chunks", f"chunk {short(chunk.chunk_id)} starts at char {chunk.start}, but section "
                                        f"{section.title!r} of {source_id} continues at {position}; chunks must tile "
                                        "their section", "tiling", chunk_id=chunk.chunk_id)
            position = chunk.end
        if position != section.end:
            _refuse("index.chunks", f"section {section.title!r} of {source_id}: chars {position}-{section.end} are in "
                                    "no chunk; chunks must tile their section", "tiling")
    return orders


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


# --------------------------------------------------------------------------------------------
# windows -> request


def window_metadata(window: Window, document: Document) -> dict[str, Any]:
    """What a citation records: source, version, path, url, revision, section and character span."""
    return {"source_id": window.source_id, "version": window.version, "path": document.path, "url": document.url,
            "document_revision": window.document_revision, "section_id": window.section_id,
            "start": window.start, "end": window.end}


def source_label(metadata: Mapping[str, Any]) -> str:
    return json.dumps(metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def window_receipt(window: Window, metadata: dict[str, Any]) -> dict[str, Any]:
    return {"window_id": window.window_id, "priority_seed_rank": min(r.rank for r in window.seed_ranks),
            "metadata": metadata, "chunk_ids": list(window.chunk_ids), "seed_ids": list(window.seed_ids),
            "seed_ranks": [r.model_dump() for r in window.seed_ranks],
            "members": [m.model_dump() for m in window.members]}


def make_request(index: Mapping[str, Any], windows: Mapping[str, Any], ranked_seed_ids: Sequence[str],
                 question: str, *, context_limit: int, max_new_tokens: int, margin: int = 0,
                 instructions: str = DEFAULT_INSTRUCTIONS,
                 request_id: str | None = None) -> tuple[Request, list[dict[str, Any]]]:
    """Validate, then turn each whole window into one cited passage; returns the request and the receipts."""
    view, record = _validated(index, windows)
    check_seed_ranking(ranked_seed_ids, record)
    evidence: list[dict[str, Any]] = []
    receipts: list[dict[str, Any]] = []
    for window in record.groups:
        metadata = window_metadata(window, view.documents[window.source_id])
        receipt = window_receipt(window, metadata)
        # Score is minus the priority so the assembler's highest-score-first order is seed-rank order.
        evidence.append({"id": window.window_id, "source": source_label(metadata), "text": window.text,
                         "score": -float(receipt["priority_seed_rank"])})
        receipts.append(receipt)
    data: dict[str, Any] = {"instructions": instructions, "current": question, "evidence": evidence,
                            "context_limit": context_limit, "max_new_tokens": max_new_tokens, "margin": margin,
                            "fill_order": ["evidence", "history"]}
    if request_id is not None:
        data["id"] = request_id
    return parse_request(data), receipts


def rag_extras(record: ExpansionRecord | Mapping[str, Any]) -> dict[str, Any]:
    """The fields a recorded RAG result carries besides the receipts (as seed 004's record does)."""
    record = _parse(ExpansionRecord, record, "windows")
    return {"index_id": record.index_id, "ranked_seed_ids": list(record.seed_ids)}


def finish_rag_result(result: AssemblyResult, request: Request, receipts: list[dict[str, Any]],
                      counter: TokenCounter, extras: Mapping[str, Any] | None = None) -> AssemblyResult:
    """Recount the complete request (uncached) and attach the receipts and diagnostics to ``result``."""
    if [p.id for p in request.evidence] != [r["window_id"] for r in receipts]:
        raise AssemblyInvariantError("the receipts do not describe the request's passages")
    recount = len(counter.token_ids(result.messages, result.tools))
    if recount != result.input_tokens:
        raise AssemblyInvariantError(f"a recount of the complete request gave {recount} tokens, the assembly "
                                     f"recorded {result.input_tokens}")
    kept = set(result.kept_evidence)
    result.window_receipts = receipts
    result.full_request_recount = recount
    # A diagnostic contrast only: pieces counted alone miss labels, wrappers and the chat template.
    result.separate_text_counts = {
        "instructions": counter.text_count(request.instructions),
        "question": counter.text_count(request.current),
        "all_window_texts": sum(counter.text_count(p.text) for p in request.evidence),
        "kept_window_texts": sum(counter.text_count(p.text) for p in request.evidence if p.id in kept),
    }
    result.scope = SCOPE
    for key, value in (extras or {}).items():
        setattr(result, key, value)
    return result


def assemble_windows(index: Mapping[str, Any], windows: Mapping[str, Any], ranked_seed_ids: Sequence[str],
                     question: str, counter: TokenCounter, *, context_limit: int, max_new_tokens: int,
                     margin: int = 0, instructions: str = DEFAULT_INSTRUCTIONS, request_id: str | None = None,
                     reference: bool = False) -> AssemblyResult:
    """Validate the windows, assemble them as passages under the budget and recount the request.

    ``RequiredContextTooLarge`` from the assembler propagates unchanged.
    """
    request, receipts = make_request(index, windows, ranked_seed_ids, question, context_limit=context_limit,
                                     max_new_tokens=max_new_tokens, margin=margin, instructions=instructions,
                                     request_id=request_id)
    result = assemble(request, counter, reference=reference)
    return finish_rag_result(result, request, receipts, counter, rag_extras(windows))


# --------------------------------------------------------------------------------------------
# RAG request files


class RagRequestFile(_Record):
    """``{"kind": "rag-windows", ...}``: the index (inline or by path), the expansion record, the ranked
    seeds, the question and the budget. Paths are relative to the file."""

    kind: Literal["rag-windows"]
    id: str | None = Field(default=None, min_length=1)
    index: dict[str, Any] | None = None
    index_path: str | None = Field(default=None, min_length=1)
    windows: dict[str, Any] | None = None
    windows_path: str | None = Field(default=None, min_length=1)
    ranked_seed_ids: list[str]
    question: str = Field(min_length=1)
    instructions: str = Field(default=DEFAULT_INSTRUCTIONS, min_length=1)
    context_limit: int
    max_new_tokens: int
    margin: int = 0

    @model_validator(mode="after")
    def _one_of_each(self) -> "RagRequestFile":
        if (self.index is None) == (self.index_path is None):
            raise ValueError("give the chunk index either inline ('index') or by path ('index_path'), exactly once")
        if self.windows is not None and self.windows_path is not None:
            raise ValueError("give the expansion record either inline ('windows') or by path ('windows_path'), "
                             "not both")
        return self


class LoadedRag(NamedTuple):
    """A RAG request file, validated: the request to assemble, its window receipts and the extra
    result fields (``index_id``, ``ranked_seed_ids``). Unpacks as ``request, receipts, extras``."""

    request: Request
    receipts: list[dict[str, Any]]
    extras: dict[str, Any]


def is_rag_request(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == RAG_KIND


def rag_request_from(data: Any, *, base_dir: str | Path = ".", source: str | None = None,
                     windows: Mapping[str, Any] | None = None) -> LoadedRag:
    """Validate a decoded RAG request object; ``windows`` (e.g. from ``--windows``) replaces its record."""
    try:
        return _rag_request_from(data, Path(base_dir), windows)
    except RequestError as exc:
        raise exc.with_source(source) if source else exc


def _rag_request_from(data: Any, base_dir: Path, windows: Mapping[str, Any] | None) -> LoadedRag:
    if not is_rag_request(data):
        raise RequestError([("kind", f"a RAG request is a JSON object with \"kind\": \"{RAG_KIND}\"")])
    try:
        spec = RagRequestFile.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc)) from None
    index = spec.index if spec.index is not None else read_json(base_dir / str(spec.index_path))
    if windows is None:
        windows = spec.windows if spec.windows is not None else (
            read_json(base_dir / spec.windows_path) if spec.windows_path is not None else None)
    if windows is None:
        raise RequestError([("windows", "no expansion record: give 'windows', 'windows_path' or --windows")])
    request, receipts = make_request(index, windows, spec.ranked_seed_ids, spec.question,
                                     context_limit=spec.context_limit, max_new_tokens=spec.max_new_tokens,
                                     margin=spec.margin, instructions=spec.instructions, request_id=spec.id)
    return LoadedRag(request, receipts, rag_extras(windows))


def load_rag_request(path: str | Path, *, windows_path: str | Path | None = None) -> LoadedRag:
    """Read and validate a RAG request file; ``windows_path`` supplies or replaces its expansion record."""
    path = Path(path)
    windows = read_json(windows_path) if windows_path is not None else None
    source = str(path) if windows_path is None else f"{path} (windows from {windows_path})"
    return rag_request_from(read_json(path), base_dir=path.parent, source=source, windows=windows)


def assemble_rag(loaded: LoadedRag, counter: TokenCounter, *, reference: bool = False,
                 stats: dict[str, int] | None = None) -> AssemblyResult:
    """Assemble a loaded RAG request and attach its receipts; ``loaded._replace(request=...)`` may
    first change the budget (the windows and receipts stay valid)."""
    request, receipts, extras = loaded
    result = assemble(request, counter, reference=reference, stats=stats)
    return finish_rag_result(result, request, receipts, counter, extras)


def assemble_rag_file(path: str | Path, counter: TokenCounter, *, windows_path: str | Path | None = None,
                      reference: bool = False) -> AssemblyResult:
    """``load_rag_request`` then ``assemble_rag``: the whole path for one file."""
    return assemble_rag(load_rag_request(path, windows_path=windows_path), counter, reference=reference)
