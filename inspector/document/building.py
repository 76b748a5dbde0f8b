"""The rows a loaded entry gives: assembled with the chosen counter, opened as recorded, rejected, or
unreadable (and the pending rows of a large JSONL file, read when they are needed).

Qt-free. Every figure and rule comes from ``core``: this module only decides what each row holds.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import core

from .row import Row


def entry_label(entry: core.LoadedEntry, source: str) -> str:
    # core labels anonymous entries "#N"; prefix the file so such rows stay telling in the list
    if entry.label.startswith("#"):
        return f"{Path(source).stem} {entry.label}"
    return entry.label


def audit_result(result: core.AssemblyResult, counter: core.TokenCounter | None,
                 notes: list[str]) -> list[core.Finding]:
    try:
        return core.audit(result, counter)
    except core.ContextInspectorError as exc:
        notes.append(f"audit with the counter failed ({exc}); audited without it")
        return core.audit(result, None)


def rows_from_entry(entry: core.LoadedEntry, source: str, counter: core.TokenCounter | None,
                    counter_error: str | None = None, *, with_baseline: bool = False) -> list[Row]:
    """The rows one loaded entry gives: a request, a RAG windows request or a plan request is assembled
    with ``counter`` (a plain request, for the demo, beside its naive baseline); a result opens as
    recorded; a rejection record stays rejected."""
    label = entry_label(entry, source)
    base = dict(source=source, index=entry.index, line=entry.line, label=label, entry_kind=entry.kind)
    if entry.kind == "result":
        assert entry.result is not None
        notes: list[str] = []
        findings = audit_result(entry.result, counter, notes)
        name = entry.result.counter.name if entry.result.counter else None
        return [Row(kind="result", request=entry.result.request, result=entry.result, findings=findings,
                    counter_name=name, notes=notes, **base)]
    if entry.kind == "rejected":
        return [Row(kind="rejected", rejection=dict(entry.rejection or {}), **base)]
    plan_request = entry.extra.get("plan_request") if entry.kind == "plan" else None
    rag = entry.extra.get("rag") if entry.kind == "rag" else None
    request = entry.request
    base.update(request=request, plan_request=plan_request, rag=rag)
    if counter is None:
        return [Row(kind="invalid", error=f"{source}: not assembled: no token counter "
                                          f"({counter_error or 'none chosen'})", **base)]
    rows: list[Row] = []
    try:
        if plan_request is not None:
            result = core.assemble_plan_request(plan_request, counter)
        elif rag is not None:
            result = core.assemble_rag(rag, counter)  # attaches the window receipts
        else:
            assert request is not None
            result = core.assemble(request, counter)
    except core.RequiredContextTooLarge as exc:
        rows.append(Row(kind="rejected", rejection=exc.record(), counter_name=counter.name, **base))
    except core.ContextBudgetError as exc:
        rows.append(Row(kind="rejected", rejection=exc.record(), counter_name=counter.name, **base))
    except core.CounterError as exc:  # the file was read; the counter (its chat template) refused it
        rows.append(Row(kind="uncounted", error=f"{entry_place(entry, source)}: could not be counted with "
                                                 f"{counter.name}: {exc}", counter_name=counter.name, **base))
    except (core.ContextInspectorError, ValueError) as exc:  # ValueError: a plan the assembler cannot run
        rows.append(Row(kind="invalid", error=f"{entry_place(entry, source)}: {exc}", counter_name=counter.name,
                        **base))
    else:
        notes = []
        rows.append(Row(kind="assembled", result=result, findings=audit_result(result, counter, notes),
                        counter_name=counter.name, notes=notes, **base))
    if with_baseline and request is not None and entry.kind == "request":
        try:
            baseline = core.naive_truncate(request, counter)
        except core.CounterError as exc:
            rows.append(Row(kind="uncounted", error=f"{entry_place(entry, source)}: naive baseline: could not be "
                                                     f"counted with {counter.name}: {exc}", **base,
                            counter_name=counter.name))
        except core.ContextInspectorError as exc:
            rows.append(Row(kind="invalid", error=f"{entry_place(entry, source)}: naive baseline: {exc}",
                            counter_name=counter.name, **base))
        else:
            notes = []
            rows.append(Row(kind="assembled", result=baseline, findings=audit_result(baseline, counter, notes),
                            counter_name=counter.name, notes=notes, **base))
    return rows


def pending_row(source: str, index: core.JsonlIndex, summary: core.RowSummary, *, demo: bool = False) -> Row:
    """A JSONL line listed from its summary; ``read_pending`` reads, validates and assembles it later."""
    label = summary.label
    if label.startswith("#"):
        label = f"{Path(source).stem} {label}"
    return Row(source=source, index=summary.index, line=summary.line, kind="pending", label=label,
               entry_kind=summary.kind, summary_line=summary, lazy=(index, summary.index), demo=demo)


def unreadable_line(source: str, index: core.JsonlIndex, summary: core.RowSummary) -> Row:
    """An index row the core could not take as a request or result: the core's own message for it (the
    line is decoded again so a wrong-shaped record is named with its keys, as a whole-file read would)."""
    raw: Any = None
    try:
        with open(source, "rb") as handle:
            handle.seek(summary.offset)
            raw = json.loads(handle.read(summary.length))
    except (OSError, ValueError):
        error = str(core.InputFileError(source, summary.problem or "unreadable record", line=summary.line))
        return invalid_row(source, summary.index, summary.line, error, None)
    try:
        core.entry_from(raw, summary.index, summary.line, source)
    except core.ContextInspectorError as exc:
        return invalid_row(source, summary.index, summary.line, str(exc), raw)
    return invalid_row(source, summary.index, summary.line, f"{source}:{summary.line}: {summary.problem}", raw)


def read_pending(row: Row, counter: core.TokenCounter | None, counter_error: str | None = None) -> Row:
    """The full row for a pending one: its entry read from the file, validated and assembled or audited."""
    index, number = row.lazy
    return read_summary(row.source, index.rows[number], counter, counter_error, demo=row.demo)


def read_summary(source: str, summary: core.RowSummary, counter: core.TokenCounter | None,
                 counter_error: str | None = None, *, demo: bool = False) -> Row:
    """The full row for one index row of ``source`` (what ``read_pending`` reads; a worker process reads it
    from the summary alone): its line's bytes read at the summary's offset, then ``read_line``."""
    try:
        with open(source, "rb") as handle:
            handle.seek(summary.offset)
            raw = handle.read(summary.length)
    except OSError as exc:
        out = invalid_row(source, summary.index, summary.line, f"{source}: cannot be read: {exc}", None)
        out.demo = demo
        return out
    return read_line(source, summary, raw, counter, counter_error, demo=demo)


def read_line(source: str, summary: core.RowSummary, raw: bytes, counter: core.TokenCounter | None,
              counter_error: str | None = None, *, demo: bool = False) -> Row:
    """``read_summary`` of the line's bytes ``raw`` (read from ``source`` at the summary's offset)."""
    try:
        entry = core.entry_from_line(source, summary, raw)
    except core.ContextInspectorError as exc:
        out = invalid_row(source, summary.index, summary.line, str(exc), None)
    else:
        (out,) = rows_from_entry(entry, source, counter, counter_error)
    out.demo = demo
    return out


def entry_place(entry: core.LoadedEntry, source: str) -> str:
    if entry.line is not None:
        return f"{source}:{entry.line}"
    return f"{source}[{entry.index}]" if entry.index else source


def invalid_row(source: str, index: int, line: int | None, error: str, raw: Any) -> Row:
    label = f"{Path(source).stem} #{index + 1}"
    return Row(source=source, index=index, line=line, kind="invalid", label=label, error=error, raw=raw)
