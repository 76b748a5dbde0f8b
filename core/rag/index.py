"""Building a chunk index from documents, and validating one (sections, chunks, tiling)."""
from __future__ import annotations
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from .ids import SCHEMA_VERSION, _refuse, canonical_sha256, chunk_id, content_id, document_revision, section_id, short
from .records import Chunk, ChunkIndex, Document, Section, SourceDocument, _parse


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
