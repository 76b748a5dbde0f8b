"""The loaded rows: one per request or recorded result of the open files, with its findings or error.

Qt-free. Every figure and rule comes from ``core``: this module only decides what each row holds
(assembled with the chosen counter, opened as recorded, rejected, or unreadable) and finds an item's
original text in the request for the detail pane.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import core
from core.render import exchange_id

log = logging.getLogger("inspector")


@dataclass(eq=False)
class Row:
    """One line of the requests list.

    ``kind``: "assembled" (a request assembled here with ``counter_name``), "result" (a recorded
    result, shown as recorded), "rejected" (required content does not fit; ``rejection`` is core's
    record), "invalid" (the entry could not be read; ``error`` says why, ``raw`` is what was read),
    "pending" (a JSONL line listed from its ``summary`` and read later through ``lazy``),
    "imported" (a provider's model call counted here through ``core.formats.count_imported``),
    "uncounted" (a provider's model call the counter could not count; ``error`` says why) or
    "replayed" (a result assembled again under edits; never in the requests list).
    ``entry_kind`` is what the file held: "request", "rag", "plan", "result", "rejected" or "imported".
    A row re-assembled from an imported one names it in ``derived_from``.
    """

    source: str
    index: int
    line: int | None
    kind: str
    label: str
    request: core.Request | None = None
    result: core.AssemblyResult | None = None
    findings: list[core.Finding] = field(default_factory=list)
    rejection: dict[str, Any] | None = None
    error: str | None = None
    raw: Any = None
    counter_name: str | None = None
    notes: list[str] = field(default_factory=list)
    demo: bool = False
    entry_kind: str | None = None
    plan_request: Any = None  # core.PlanRequest of a plan entry
    rag: Any = None  # core.LoadedRag of a RAG windows entry (its receipts go on every assembly)
    summary_line: Any = None  # core.RowSummary while the row is pending
    lazy: Any = None  # (core.JsonlIndex, index) to read the entry from
    imported: Any = None  # core.ImportedRequest of a provider's model call
    import_source: Any = None  # providers.ImportedSource: the file's format and its own warnings
    derived_from: "Row | None" = None  # the imported row a re-assembled row was made from
    counted_under: int | None = None  # the context limit an imported row was counted under (None: core's assumed)

    def absorb(self, other: "Row") -> None:
        """Take everything ``other`` holds (a pending row once read): the list keeps this object."""
        self.__dict__.update(other.__dict__)

    @property
    def pending(self) -> bool:
        return self.kind == "pending"

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.source}:{self.line}"
        return f"{self.source}[{self.index}]" if self.index else self.source

    @property
    def file_name(self) -> str:
        return Path(self.source).name

    @property
    def strategy(self) -> str:
        if self.result is not None:
            return self.result.strategy
        if self.summary_line is not None:
            return self.summary_line.strategy or self.summary_line.kind
        if self.imported is not None:
            return "imported"
        return {"rejected": "rejected", "invalid": "unreadable"}.get(self.kind, self.kind)

    @property
    def format_name(self) -> str:
        """The provider format a model call was read as (``otlp-json/gen_ai``); empty for our own files."""
        if self.imported is not None:
            return self.imported.recorded.format
        if self.derived_from is not None:
            return self.derived_from.format_name
        return ""

    @property
    def count_drift(self) -> int | None:
        """Our count minus the provider's reported input tokens (core's ``count_drift``), where known."""
        if self.result is None or self.imported is None:
            return None
        drift = (self.result.model_extra or {}).get("count_drift")
        return drift if isinstance(drift, int) else None

    @property
    def input_tokens(self) -> int | None:
        if self.result is not None:
            return self.result.input_tokens
        if self.rejection is not None:
            return _int(self.rejection.get("required_input_tokens"))
        if self.summary_line is not None:
            return self.summary_line.input_tokens
        return None

    @property
    def allowance(self) -> int | None:
        if self.result is not None:
            return self.result.input_budget
        if self.rejection is not None:
            return _int(self.rejection.get("available_input_tokens"))
        if self.summary_line is not None:
            return self.summary_line.input_budget
        return None

    @property
    def short_by(self) -> int | None:
        if self.kind != "rejected":
            return None
        need, have = self.input_tokens, self.allowance
        return need - have if need is not None and have is not None else None

    def items(self) -> list[core.TraceEntry]:
        """Trace entries that are items (the template overhead is a cost, not an item)."""
        if self.result is None:
            return []
        return [e for e in self.result.trace if e.section != "template"]

    @property
    def kept_count(self) -> int:
        return sum(1 for e in self.items() if e.decision not in core.NOT_SENT)

    @property
    def dropped_count(self) -> int:
        if self.summary_line is not None and self.result is None:
            return self.summary_line.dropped or 0
        return sum(1 for e in self.items() if e.decision == "dropped")

    @property
    def error_count(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warning_count(self) -> int:
        return sum(1 for f in self.findings if f.severity != "error")

    @property
    def status(self) -> str:
        """"invalid", "rejected", "pending", "error", "warning" or "ok": what the audit column shows."""
        if self.kind in ("invalid", "rejected", "pending"):
            return self.kind
        if self.kind == "uncounted":
            return "invalid"
        if self.error_count:
            return "error"
        if self.warning_count:
            return "warning"
        return "ok"

    def status_text(self) -> str:
        if self.kind == "invalid":
            return "unreadable"
        if self.kind == "uncounted":
            return "not counted"
        if self.kind == "pending":
            return "not read yet"
        if self.kind == "rejected":
            short = self.short_by
            return f"rejected: short by {short} tokens" if short is not None else "rejected"
        if not self.findings:
            return "no findings"
        parts = []
        if self.error_count:
            parts.append(f"{self.error_count} error{'s' if self.error_count != 1 else ''}")
        if self.warning_count:
            parts.append(f"{self.warning_count} warning{'s' if self.warning_count != 1 else ''}")
        return ", ".join(parts)

    def summary(self) -> str:
        """One line for tooltips and the log."""
        if self.kind == "invalid":
            return self.error or "unreadable entry"
        if self.kind == "uncounted":
            return self.error or "not counted"
        if self.kind == "rejected":
            return rejection_text(self.rejection or {})
        if self.kind == "pending":
            return f"{self.label}: listed from the file, not read yet (it is read when selected)"
        assert self.result is not None
        r = self.result
        return (f"{self.label} ({r.strategy}): {r.input_tokens} of {r.input_budget} input tokens, "
                f"{self.kept_count} items sent, {self.dropped_count} dropped; {self.status_text()}")

    def display_json(self) -> str:
        """The raw record, pretty-printed, for the JSON tab."""
        if self.result is not None:
            return self.result.to_json()
        if self.rejection is not None:
            return json.dumps(self.rejection, indent=2, ensure_ascii=False) + "\n"
        if self.imported is not None:  # not counted: the request as the importer read it
            request = self.imported
            data = {"label": request.label, "format": request.recorded.format, "model": request.recorded.model,
                    "messages": [m.to_json() for m in request.messages],
                    "tools": [t.model_dump(mode="json") for t in request.tools],
                    "warnings": [str(w) for w in request.warnings]}
            return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if self.raw is not None:
            try:
                return json.dumps(self.raw, indent=2, ensure_ascii=False) + "\n"
            except (TypeError, ValueError):
                return repr(self.raw)
        return ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def rejection_text(record: dict[str, Any]) -> str:
    need = _int(record.get("required_input_tokens"))
    have = _int(record.get("available_input_tokens"))
    if need is None or have is None:
        message = record.get("message")
        return f"rejected: {message}" if isinstance(message, str) and message else \
            "rejected: the required context does not fit"
    return (f"rejected: the required context needs {need} input tokens but only {have} are available; "
            f"short by {need - have}")


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
    try:
        entry = index.entry(number)
    except core.ContextInspectorError as exc:
        out = invalid_row(row.source, row.index, row.line, str(exc), None)
    else:
        (out,) = rows_from_entry(entry, row.source, counter, counter_error)
    out.demo = row.demo
    return out


def entry_place(entry: core.LoadedEntry, source: str) -> str:
    if entry.line is not None:
        return f"{source}:{entry.line}"
    return f"{source}[{entry.index}]" if entry.index else source


def invalid_row(source: str, index: int, line: int | None, error: str, raw: Any) -> Row:
    label = f"{Path(source).stem} #{index + 1}"
    return Row(source=source, index=index, line=line, kind="invalid", label=label, error=error, raw=raw)


# ---- an item's original content, for the Item tab


@dataclass
class ItemContent:
    """What the Item tab shows for one trace entry: metadata pairs and text blocks (title, text)."""

    title: str
    fields: list[tuple[str, str]]
    blocks: list[tuple[str, str]]
    receipts: list[Any] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # explanations, shown as paragraphs (blocks are verbatim text)


def find_entry(result: core.AssemblyResult, section: str, item_id: str) -> core.TraceEntry | None:
    return next((e for e in result.trace if e.section == section and e.id == item_id), None)


def _message_text(message: Any) -> str:
    parts = [f"[{message.role}]"]
    if getattr(message, "tool_call_id", None):
        parts[0] = f"[{message.role} → {message.tool_call_id}]"
    if message.content:
        parts.append(message.content)
    for call in getattr(message, "tool_calls", []) or []:
        parts.append(f"call {call.id}: {call.name}({json.dumps(call.arguments, ensure_ascii=False)})")
    return "\n".join(parts)


def _turn_messages(request: core.Request, item_id: str) -> list[Any]:
    """History messages for a turn id; baseline ids name one message as ``<turn>/<k>-<role>``."""
    turns = request.history_turns()
    ids = request.turn_ids()
    if item_id in ids:
        return list(turns[ids.index(item_id)])
    turn, _, rest = item_id.partition("/")
    if turn in ids and rest:
        k = rest.split("-", 1)[0]
        messages = turns[ids.index(turn)]
        if k.isdigit() and int(k) < len(messages):
            return [messages[int(k)]]
        return list(messages)
    return []


def _exchange_blocks(request: core.Request, item_id: str) -> list[tuple[str, str]]:
    wanted = item_id.partition("/")[0]
    for x, exchange in enumerate(request.tool_exchanges):
        if exchange_id(request, x) != wanted:
            continue
        blocks = []
        if exchange.content:
            blocks.append(("assistant", exchange.content))
        for call in exchange.calls:
            blocks.append((f"call {call.id}: {call.name}", json.dumps(call.arguments, indent=2, ensure_ascii=False)))
        for res in exchange.results:
            blocks.append((f"result for {res.tool_call_id}", res.content))
        return blocks
    return []


def _receipts_for(result: core.AssemblyResult, item_id: str | None) -> list[Any]:
    """RAG window receipts a recorded result may carry (a foreign key core keeps): those that name
    the item, or all of them when none names an item."""
    extra = result.model_extra or {}
    receipts = extra.get("window_receipts")
    if not receipts:
        return []
    if not isinstance(receipts, list):
        return [receipts]
    if item_id is None:
        return receipts

    def names(receipt: Any) -> bool:
        return isinstance(receipt, dict) and item_id in {str(v) for v in receipt.values() if isinstance(v, (str, int))}

    matching = [r for r in receipts if names(r)]
    return matching


def _plan_message(plan_request: dict[str, Any], section: str, item_id: str) -> dict[str, Any] | None:
    """A plan section's message by id; the plan assembler names a message without an id
    ``<section>-<position>``, so that name finds it too."""
    messages = (plan_request.get("sections") or {}).get(section) or []
    for position, message in enumerate(messages):
        if isinstance(message, dict) and (message.get("id") or f"{section}-{position}") == item_id:
            return message
    return None


def receipt_fields(receipt: Any) -> list[tuple[str, str]]:
    """A RAG window receipt as a person reads it: source, version, span, chunks with their roles, seed
    ranks. Receipts of another shape give no fields (their JSON is still shown)."""
    if not isinstance(receipt, dict) or not isinstance(receipt.get("metadata"), dict):
        return []
    meta = receipt["metadata"]
    fields: list[tuple[str, str]] = []
    source = str(meta.get("source_id") or "")
    if meta.get("path"):
        source += f" ({meta['path']})"
    fields.append(("Source", source or "-"))
    fields.append(("Version", str(meta.get("version") or "-")))
    if meta.get("document_revision"):
        fields.append(("Document revision", str(meta["document_revision"])[:16] + "…"))
    if isinstance(meta.get("start"), int) and isinstance(meta.get("end"), int):
        fields.append(("Span", f"characters {meta['start']}–{meta['end']} ({meta['end'] - meta['start']} chars)"))
    if meta.get("section_id"):
        fields.append(("Section id", str(meta["section_id"])[:16] + "…"))
    if meta.get("url"):
        fields.append(("URL", str(meta["url"])))
    members = [m for m in receipt.get("members") or [] if isinstance(m, dict)]
    if members:
        lines = []
        for m in members:
            rank = m.get("retrieval_rank")
            lines.append(f"{str(m.get('chunk_id', ''))[:12]}… {m.get('role', '?')}"
                         + (f" (retrieval rank {rank})" if rank is not None else ""))
        fields.append((f"Chunks ({len(members)})", "\n".join(lines)))
    elif receipt.get("chunk_ids"):
        fields.append(("Chunks", ", ".join(str(c)[:12] + "…" for c in receipt["chunk_ids"])))
    ranks = [r for r in receipt.get("seed_ranks") or [] if isinstance(r, dict)]
    if ranks:
        fields.append(("Seed ranks", ", ".join(f"#{r.get('rank')} {str(r.get('chunk_id', ''))[:12]}…" for r in ranks)))
    if receipt.get("priority_seed_rank") is not None:
        fields.append(("Priority seed rank", str(receipt["priority_seed_rank"])))
    return fields


def item_content(row: Row, section: str, item_id: str) -> ItemContent | None:
    result = row.result
    if result is None:
        return None
    entry = find_entry(result, section, item_id)
    if entry is None:
        return None
    fields: list[tuple[str, str]] = [("Section", section), ("Id", entry.id), ("Decision", entry.decision),
                                     ("Tokens (marginal)", str(entry.tokens)), ("Reason", entry.reason)]
    if entry.rank is not None:
        fields.append(("Rank", str(entry.rank)))
    if entry.score is not None:
        fields.append(("Score", f"{entry.score:g}"))
    if entry.source:
        fields.append(("Source", entry.source))
    if entry.message_indices:
        fields.append(("Messages sent", ", ".join(str(i) for i in entry.message_indices)))
    if row.imported is not None and entry.message_indices:  # where each message sits in the provider's file
        places = [row.imported.places[i] for i in entry.message_indices
                  if i < len(row.imported.places) and row.imported.places[i]]
        if places:
            fields.append(("Place in the file", ", ".join(places)))
    for key, value in (entry.model_extra or {}).items():
        if key == "summary_id":
            fields.append(("Replaced by summary", str(value)))
        elif key == "replaces" and isinstance(value, list):
            fields.append((f"Replaces ({len(value)} messages)", ", ".join(str(v) for v in value)))
        else:
            fields.append((key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)))

    blocks: list[tuple[str, str]] = []
    request = result.request
    prose: list[str] = []
    if section == "template":
        prose.append("The chat template's own cost: role markers, control tokens and the generation prefix "
                     "(for a naive baseline, also cross-message effects). " + entry.reason)
    elif section == "instructions" and request is not None:
        blocks.append(("Instructions", request.instructions))
    elif section == "tools":
        tool = next((t for t in (request.tools if request else result.tools) if t.name == item_id), None)
        if tool is not None:
            blocks.append(("Description", tool.description or "(none)"))
            blocks.append(("JSON schema (parameters)", json.dumps(tool.parameters, indent=2, ensure_ascii=False)))
    elif section == "current" and request is not None:
        blocks.append(("Current question", request.current))
    elif section == "history" and request is not None:
        for message in _turn_messages(request, item_id):
            blocks.append((message.role, _message_text(message)))
    elif section == "tool_exchanges" and request is not None:
        blocks.extend(_exchange_blocks(request, item_id))
    elif section == "evidence" and request is not None:
        passage = next((p for p in request.evidence if p.id == item_id), None)
        if passage is not None:
            fields.append(("Passage source", passage.source or "(none)"))
            fields.append(("Retrieval score", f"{passage.score:g}"))
            blocks.append(("Passage text", passage.text))
    plan_request = (result.model_extra or {}).get("plan_request")
    if not blocks and isinstance(plan_request, dict):
        message = _plan_message(plan_request, section, item_id)
        if message is not None:
            blocks.append((str(message.get("role", "message")), str(message.get("content") or "")))
    if not blocks and entry.message_indices:
        # sections this build does not know, or results without their request: show what was sent
        for i in entry.message_indices:
            if 0 <= i < len(result.messages):
                blocks.append((f"message {i}", _message_text(result.messages[i])))
    if not blocks and not prose:
        prose.append("The recorded result does not carry this item's original text "
                     "(it was recorded without its request).")
    return ItemContent(title=f"{section} / {entry.id}", fields=fields, blocks=blocks,
                       receipts=_receipts_for(result, item_id), prose=prose)


def section_summary(row: Row, section: str) -> ItemContent | None:
    result = row.result
    if result is None:
        return None
    entries = [e for e in result.trace if e.section == section]
    sent = result.sent_tokens_by_section().get(section, 0)
    dropped = result.section_tokens("dropped").get(section, 0)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.decision] = counts.get(e.decision, 0) + 1
    fields = [("Section", section), ("Items", str(len(entries))),
              ("Decisions", ", ".join(f"{n} {d}" for d, n in counts.items()) or "none"),
              ("Tokens sent", str(sent)), ("Tokens dropped", str(dropped)),
              ("Share of context limit", f"{100.0 * sent / result.context_limit:.1f}%" if result.context_limit else "-")]
    lines = [f"{e.decision:>10}  {e.tokens:>6}  {e.id}  ({e.reason})" for e in entries]
    return ItemContent(title=f"Section {section}", fields=fields, blocks=[("Items", "\n".join(lines))],
                       receipts=_receipts_for(result, None) if section == "evidence" else [])
