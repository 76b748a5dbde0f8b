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
from .ids import (DEFAULT_INSTRUCTIONS, EXPANSION_MODE, RAG_KIND, SCHEMA_VERSION, SCOPE, WindowError,
                  canonical_sha256, chunk_id, content_id, document_revision, section_id, short)
from .records import (Chunk, ChunkIndex, Document, ExpansionRecord, Member, Section, SeedRank, SourceDocument,
                      Window)
from .index import IndexView, build_index, validate_index
from .expansion import expand
from .windows import check_seed_ranking, validate_windows
from .request import (assemble_windows, finish_rag_result, make_request, rag_extras, source_label,
                      window_metadata, window_receipt)
from .files import (LoadedRag, RagRequestFile, assemble_rag, assemble_rag_file, is_rag_request,
                    load_rag_request, rag_request_from)

__all__ = ["Chunk", "ChunkIndex", "DEFAULT_INSTRUCTIONS", "Document", "EXPANSION_MODE", "ExpansionRecord",
           "IndexView", "LoadedRag", "Member", "RAG_KIND", "RagRequestFile", "SCHEMA_VERSION", "SCOPE",
           "Section", "SeedRank", "SourceDocument", "Window", "WindowError", "assemble_rag",
           "assemble_rag_file", "assemble_windows", "build_index", "canonical_sha256", "check_seed_ranking",
           "chunk_id", "content_id", "document_revision", "expand", "finish_rag_result", "is_rag_request",
           "load_rag_request", "make_request", "rag_extras", "rag_request_from", "section_id", "short",
           "source_label", "validate_index", "validate_windows", "window_metadata", "window_receipt"]
