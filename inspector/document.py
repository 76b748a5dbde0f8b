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
    record) or "invalid" (the entry could not be read; ``error`` says why, ``raw`` is what was read).
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
        return {"rejected": "rejected", "invalid": "unreadable"}.get(self.kind, self.kind)

    @property
    def input_tokens(self) -> int | None:
        if self.result is not None:
            return self.result.input_tokens
        if self.rejection is not None:
            return _int(self.rejection.get("required_input_tokens"))
        return None

    @property
    def allowance(self) -> int | None:
        if self.result is not None:
            return self.result.input_budget
        if self.rejection is not None:
            return _int(self.rejection.get("available_input_tokens"))
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
        return sum(1 for e in self.items() if e.decision != "dropped")

    @property
    def dropped_count(self) -> int:
        return sum(1 for e in self.items() if e.decision == "dropped")

    @property
    def error_count(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warning_count(self) -> int:
        return sum(1 for f in self.findings if f.severity != "error")

    @property
    def status(self) -> str:
        """"invalid", "rejected", "error", "warning" or "ok": what the audit column shows."""
        if self.kind in ("invalid", "rejected"):
            return self.kind
        if self.error_count:
            return "error"
        if self.warning_count:
            return "warning"
        return "ok"

    def status_text(self) -> str:
        if self.kind == "invalid":
            return "unreadable"
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
        if self.kind == "rejected":
            return rejection_text(self.rejection or {})
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
        return "rejected: the required context does not fit"
    return (f"rejected: the required context needs {need} input tokens but only {have} are available; "
            f"short by {need - have}")


def entry_label(entry: core.LoadedEntry, source: str) -> str:
    # core labels anonymous entries "#N"; prefix the file so such rows stay telling in the list
    if entry.label.startswith("#"):
        return f"{Path(source).stem} {entry.label}"
    return entry.label


def _audit(result: core.AssemblyResult, counter: core.TokenCounter | None, notes: list[str]) -> list[core.Finding]:
    try:
        return core.audit(result, counter)
    except core.ContextInspectorError as exc:
        notes.append(f"audit with the counter failed ({exc}); audited without it")
        return core.audit(result, None)


def rows_from_entry(entry: core.LoadedEntry, source: str, counter: core.TokenCounter | None,
                    counter_error: str | None = None, *, with_baseline: bool = False) -> list[Row]:
    """The rows one loaded entry gives: a request is assembled with ``counter`` (and, for the demo,
    set beside its naive baseline); a result opens as recorded; a rejection record stays rejected."""
    label = entry_label(entry, source)
    base = dict(source=source, index=entry.index, line=entry.line, label=label)
    if entry.kind == "result":
        assert entry.result is not None
        notes: list[str] = []
        findings = _audit(entry.result, counter, notes)
        name = entry.result.counter.name if entry.result.counter else None
        return [Row(kind="result", request=entry.result.request, result=entry.result, findings=findings,
                    counter_name=name, notes=notes, **base)]
    if entry.kind == "rejected":
        return [Row(kind="rejected", rejection=dict(entry.rejection or {}), **base)]
    request = entry.request
    assert request is not None
    if counter is None:
        return [Row(kind="invalid", request=request,
                    error=f"{source}: not assembled: no token counter ({counter_error or 'none chosen'})", **base)]
    rows: list[Row] = []
    try:
        result = core.assemble(request, counter)
    except core.RequiredContextTooLarge as exc:
        rows.append(Row(kind="rejected", request=request, rejection=exc.record(), counter_name=counter.name, **base))
    except core.ContextInspectorError as exc:
        rows.append(Row(kind="invalid", request=request, error=f"{entry_place(entry, source)}: {exc}",
                        counter_name=counter.name, **base))
    else:
        notes = []
        rows.append(Row(kind="assembled", request=request, result=result, findings=_audit(result, counter, notes),
                        counter_name=counter.name, notes=notes, **base))
    if with_baseline:
        try:
            baseline = core.naive_truncate(request, counter)
        except core.ContextInspectorError as exc:
            rows.append(Row(kind="invalid", request=request, error=f"{entry_place(entry, source)}: naive baseline: {exc}",
                            counter_name=counter.name, **base))
        else:
            notes = []
            rows.append(Row(kind="assembled", request=request, result=baseline,
                            findings=_audit(baseline, counter, notes), counter_name=counter.name, notes=notes,
                            **base))
    return rows


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
    for key, value in (entry.model_extra or {}).items():
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
