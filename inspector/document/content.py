"""An item's original content, for the Item tab: its text found in the request, its receipts, its fields.

Qt-free; read from the core request and result.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import core
from core.render import exchange_id

from .row import Row


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
                                     ("Tokens (marginal)", f"{entry.tokens:,}"), ("Reason", entry.reason)]
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
              ("Tokens sent", f"{sent:,}"), ("Tokens dropped", f"{dropped:,}"),
              ("Share of context limit", f"{100.0 * sent / result.context_limit:.1f}%" if result.context_limit else "-")]
    lines = [f"{e.decision:>10}  {e.tokens:>7,}  {e.id}  ({e.reason})" for e in entries]
    return ItemContent(title=f"Section {section}", fields=fields, blocks=[("Items", "\n".join(lines))],
                       receipts=_receipts_for(result, None) if section == "evidence" else [])
