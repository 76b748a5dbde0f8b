"""What the requests list shows of a row, Qt-free: each column's text, its sort key and the text the
filter searches, computed once per row (by the loading worker, off the GUI thread) and kept on the row
until it changes (``Row.absorb`` drops it), so sorting or filtering 100,000 rows only compares values.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import core

from .figures import figure, signed
from .imported import counter_text
from .row import Row

COLUMNS = ("Request", "Strategy", "Format", "Counter", "Tokens", "Drift", "Kept", "Dropped", "Audit", "File")
C_LABEL, C_STRATEGY, C_FORMAT, C_COUNTER, C_TOKENS, C_DRIFT, C_KEPT, C_DROPPED, C_AUDIT, C_FILE = range(10)
STATUS_ORDER = {"invalid": 0, "rejected": 1, "error": 2, "warning": 3, "ok": 4, "pending": 5}


@dataclass(frozen=True)
class Listing:
    texts: tuple[str, ...]  # one per column, as displayed
    keys: tuple[Any, ...]  # one per column: numbers as numbers, text lowercased
    haystack: str  # what the filter box searches, lowercased
    dropped: int  # items dropped (the "has drops" toggle)
    status: str  # Row.status (the "audit errors" toggle)


def listing(row: Row) -> Listing:
    """The row's list values, computed on first use and kept on the row."""
    cached = row.__dict__.get("_listing")
    if cached is None and row.kind == "pending" and row.summary_line is not None and row.result is None:
        cached = row.__dict__["_listing"] = _pending_listing(row, row.summary_line)
    if (cached is None and row.kind in ("result", "assembled") and row.result is not None and row.imported is None
            and row.derived_from is None):
        cached = row.__dict__["_listing"] = _read_listing(row, row.result)
    if cached is None:
        texts = tuple(cell_text(row, col) for col in range(len(COLUMNS)))
        keys = tuple(_sort_key(row, col, texts[col]) for col in range(len(COLUMNS)))
        haystack = " ".join((row.label, row.strategy, row.format_name, row.file_name, row.status_text(),
                             row.kind)).lower()
        cached = row.__dict__["_listing"] = Listing(texts, keys, haystack, row.dropped_count, row.status)
    return cached


def _pending_listing(row: Row, summary: core.RowSummary) -> Listing:
    """``listing`` of a JSONL row listed from its index summary and not read yet, without asking the row's
    properties one column at a time (ten thousand of them are listed at once; tests/test_listing_fast.py
    checks it gives what the general path gives)."""
    strategy = summary.strategy or summary.kind
    tokens, budget = summary.input_tokens, summary.input_budget
    dropped = summary.dropped or 0
    file_name = row.file_name
    counter = row.counter_name or ""
    shown = "…" if tokens is None else f"{figure(tokens)} / {figure(budget)}"
    texts = (row.label, strategy, "", counter, shown, "", "…",
             "…" if summary.dropped is None else str(dropped), "not read yet",
             file_name if row.line is None else f"{file_name}:{row.line}")
    keys = (row.label.lower(), strategy.lower(), "", counter.lower(), tokens if tokens is not None else -1,
            float("-inf"), -1, dropped, STATUS_ORDER["pending"] * 10000, (row.source, row.index))
    haystack = " ".join((row.label, strategy, "", file_name, "not read yet", "pending")).lower()
    return Listing(texts, keys, haystack, dropped, "pending")


def _read_listing(row: Row, result: core.AssemblyResult) -> Listing:
    """``listing`` of a row read from one of our own files (a recorded result, or a request assembled here),
    each figure computed once rather than once per column that shows it (same test as above)."""
    kept = dropped = 0
    for entry in result.trace:
        if entry.section != "template":
            kept += entry.decision not in core.NOT_SENT
            dropped += entry.decision == "dropped"
    errors = sum(1 for f in row.findings if f.severity == "error")
    warnings = len(row.findings) - errors
    status = "error" if errors else "warning" if warnings else "ok"
    if not row.findings:
        audit = "no findings"
    else:
        parts = [f"{errors} error{'s' if errors != 1 else ''}"] if errors else []
        if warnings:
            parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        audit = ", ".join(parts)
    basis = core.bar_basis(result)
    if basis.provider:
        tokens = (f"{figure(basis.input_tokens)} / {figure(result.input_budget)} "
                  f"(provider; ours ≈{figure(basis.ours)})")
    else:
        tokens = f"{figure(result.input_tokens)} / {figure(result.input_budget)}"
    file_name = row.file_name
    counter = counter_text(row)
    strategy = result.strategy
    texts = (row.label, strategy, "", counter, tokens, "", str(kept), str(dropped), audit,
             file_name if row.line is None else f"{file_name}:{row.line}")
    keys = (row.label.lower(), strategy.lower(), "", counter.lower(), basis.input_tokens, float("-inf"), kept,
            dropped, STATUS_ORDER[status] * 10000 - errors * 100 - warnings, (row.source, row.index))
    haystack = " ".join((row.label, strategy, "", file_name, audit, row.kind)).lower()
    return Listing(texts, keys, haystack, dropped, status)


def cell_text(row: Row, col: int) -> str:
    if col == C_LABEL:
        return row.label
    if col == C_STRATEGY:
        return row.strategy
    if col == C_FORMAT:
        return row.format_name
    if col == C_COUNTER:
        return counter_text(row)
    if col == C_DRIFT:
        return signed(row.count_drift) if row.count_drift is not None else ""
    if col == C_TOKENS:
        if row.kind == "rejected":
            short = row.short_by
            return f"short by {short}" if short is not None else "rejected"
        if row.input_tokens is None:
            return "…" if row.pending else "-"
        basis = core.bar_basis(row.result) if row.result is not None else None
        if basis is not None and basis.provider:  # our count is an estimate: the provider's figure, as the bar
            return f"{figure(basis.input_tokens)} / {figure(row.allowance)} (provider; ours ≈{figure(basis.ours)})"
        return f"{figure(row.input_tokens)} / {figure(row.allowance)}"
    if col == C_KEPT:
        return str(row.kept_count) if row.result is not None else "…" if row.pending else "-"
    if col == C_DROPPED:
        if row.result is not None or (row.pending and row.summary_line.dropped is not None):
            return str(row.dropped_count)
        return "…" if row.pending else "-"
    if col == C_AUDIT:
        return row.status_text()
    if col == C_FILE:
        return row.file_name if row.line is None else f"{row.file_name}:{row.line}"
    return ""


def _sort_key(row: Row, col: int, text: str) -> Any:
    if col == C_DRIFT:  # unknown drift sorts below every known one
        return float(row.count_drift) if row.count_drift is not None else float("-inf")
    if col == C_TOKENS:
        if row.result is not None:
            return core.bar_basis(row.result).input_tokens
        return row.input_tokens if row.input_tokens is not None else -1
    if col == C_KEPT:
        return row.kept_count if row.result is not None else -1
    if col == C_DROPPED:
        return row.dropped_count
    if col == C_AUDIT:
        return STATUS_ORDER[row.status] * 10000 - row.error_count * 100 - row.warning_count
    if col == C_FILE:
        return (row.source, row.index)
    return text.lower()
