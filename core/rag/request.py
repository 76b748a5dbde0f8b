"""Windows as cited passages: the request, the receipts and the recount of the assembled request."""
from __future__ import annotations
import json
from typing import Any, Mapping, Sequence
from ..assembly import assemble
from ..contracts import Request, parse_request
from ..counting import TokenCounter
from ..errors import AssemblyInvariantError
from ..result import AssemblyResult
from .ids import DEFAULT_INSTRUCTIONS, SCOPE
from .records import Document, ExpansionRecord, Window, _parse
from .windows import _validated, check_seed_ranking


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
