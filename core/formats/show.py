"""What ``context-assembler show FILE`` prints: what was read, call by call (label, format, model,
each message's role, length, tool calls and ``tool_call_id``, the tool definitions by name, the
recorded usage and the notes), with the calls that could not be read as rows of their own.

``show_json`` builds the document other tools (and the conformance tests) check an import against::

    {"file", "format", "requests": [{"label", "format", "model", "messages": [{"role", "chars",
     "tool_calls": [{"id", "name"}], "tool_call_id"}], "tools": [names], "provider_input_tokens",
     "notes": [...]}], "notes": [...]}

A call that could not be read has ``"error"`` (its place and reason) and no messages or tools.
"""
from __future__ import annotations

from typing import Any

from .model import FailedCall, ImportedFile, ImportedRequest


def _request(request: ImportedRequest) -> dict[str, Any]:
    recorded = request.recorded
    return {
        "label": request.label, "format": recorded.format, "model": recorded.model,
        "messages": [{"role": m.role, "chars": len(m.content or ""),
                      "tool_calls": [{"id": c.id, "name": c.name} for c in m.tool_calls],
                      "tool_call_id": m.tool_call_id} for m in request.messages],
        "tools": [t.name for t in request.tools],
        "provider_input_tokens": recorded.input_tokens,
        "notes": [str(w) for w in request.warnings],
    }


def _failed(failure: FailedCall, file_format: str) -> dict[str, Any]:
    return {"label": failure.label, "format": file_format, "model": None, "messages": [], "tools": [],
            "provider_input_tokens": None, "notes": [], "error": f"{failure.place}: {failure.reason}"
            if failure.place else failure.reason}


def file_notes(imported: ImportedFile) -> list[str]:
    """The notes about the file itself, not about any one call read (each call carries its own)."""
    per_request = {str(w) for r in imported.requests for w in r.warnings}
    return [str(w) for w in imported.warnings if str(w) not in per_request]


def show_json(imported: ImportedFile) -> dict[str, Any]:
    """The document ``show --json`` prints for ``imported``."""
    calls = [_request(c) if isinstance(c, ImportedRequest) else _failed(c, imported.format.name)
             for c in imported.calls()]
    return {"file": imported.path, "format": imported.format.name, "requests": calls, "notes": file_notes(imported)}


def _message_line(index: int, message: dict[str, Any]) -> str:
    line = f"    {index:>3}  {message['role']:<9} {message['chars']:>7} chars"
    if message["tool_calls"]:
        line += "  calls " + ", ".join(f"{c['name']} ({c['id']})" for c in message["tool_calls"])
    if message["tool_call_id"] is not None:
        line += f"  result of {message['tool_call_id']}"
    return line


def show_text(imported: ImportedFile) -> str:
    """The same, for a person: one block per call."""
    doc = show_json(imported)
    read = len(imported.requests)
    failed = len(imported.failed)
    lines = [f"{doc['file']}: {doc['format']}: {imported.format.detail}",
             f"{read} model call(s) read" + (f", {failed} could not be read" if failed else "")]
    lines += [f"note: {n}" for n in doc["notes"]]
    for n, call in enumerate(doc["requests"], start=1):
        lines.append("")
        lines.append(f"[{n}/{len(doc['requests'])}] {call['label']}")
        if "error" in call:
            lines.append(f"  not read: {call['error']}")
            continue
        usage = call["provider_input_tokens"]
        lines.append(f"  format {call['format']}; model {call['model'] or '-'}; recorded input tokens "
                     f"{usage if usage is not None else '-'}")
        lines.append(f"  messages ({len(call['messages'])}):")
        lines += [_message_line(i, m) for i, m in enumerate(call["messages"])]
        lines.append(f"  tools ({len(call['tools'])}): {', '.join(call['tools']) or '-'}")
        lines += [f"  note: {note}" for note in call["notes"]]
    return "\n".join(lines) + "\n"
