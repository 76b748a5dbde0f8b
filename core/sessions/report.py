"""What ``context-assembler session FILE`` prints: one row per call, then the peak and the calls
where something was removed; or the whole session as one JSON document."""
from __future__ import annotations

import json
from typing import Any

from .model import COMPACTED, INSERTED, REMOVED, REWRITTEN, TOOLS, Session, SessionCall

MARKS = {COMPACTED: "C", REMOVED: "R", REWRITTEN: "W", INSERTED: "I", TOOLS: "T"}
MARK_LEGEND = ("N new conversation, C compacted, R removed, W rewritten, I inserted, T tools changed, "
               "! not counted")


def marks(session: Session, index: int) -> str:
    diff = session.diffs[index]
    out = "N" if diff is None else ""
    if diff is not None:
        kinds = {c.kind for c in diff.changes}
        out += "".join(mark for kind, mark in MARKS.items() if kind in kinds)
    if session.calls[index].error:
        out += "!"
    return out


def time_offset(session: Session, call: SessionCall) -> str:
    starts = [c.start_time for c in session.calls if c.start_time is not None]
    if call.start_time is None or not starts:
        return "-"
    return f"+{call.start_time - min(starts):.2f}s"


def _messages(indices: list[int]) -> str:
    """Message indices as runs: ``messages 2-27``, ``message 4``."""
    if len(indices) == 1:
        return f"message {indices[0]}"
    runs: list[str] = []
    start = prev = indices[0]
    for n in indices[1:] + [None]:  # type: ignore[list-item]
        if n is not None and n == prev + 1:
            prev = n
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return "messages " + ",".join(runs)


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def _share(session: Session, index: int) -> str:
    diff, share = session.diffs[index], session.cached_share(index)
    if share is None:
        return "-"
    prefix = diff.prefix_tokens if diff is not None else 0
    return f"{prefix} ({share:.0%})"


def report_text(session: Session) -> str:
    window = session.context_window
    lines = [f"{session.path}: {session.format}; {len(session.calls)} model call(s); counter {session.counter_name}; "
             f"window {window if window is not None else 'unknown (give --context-window)'}"]
    lines += [f"warning: {w}" for w in session.warnings]
    head = (f"{'call':>4} {'time':>9} {'model':<24} {'input':>7} {'window':>7} {'+added':>7} {'-removed':>8} "
            f"{'~rewritten':>10} {'cached predicted':>17} {'recorded':>8}  marks")
    lines += ["", head]
    for i, call in enumerate(session.calls):
        diff = session.diffs[i]
        lines.append(
            f"{i + 1:>4} {time_offset(session, call):>9} {(call.model or '-')[:24]:<24} {_num(call.input_tokens):>7} "
            f"{_num(session.allowance(i) if window is not None else None):>7} "
            f"{_num(diff.appended_tokens if diff else None):>7} {_num(diff.removed_tokens if diff else None):>8} "
            f"{_num(diff.rewritten_tokens if diff else None):>10} {_share(session, i):>17} "
            f"{_num(call.recorded_cached_tokens):>8}  {marks(session, i)}")
    lines.append(f"marks: {MARK_LEGEND}; window is the allowance: the window less the output the call asked room for")
    peak = session.peak
    if peak is not None:
        over = "" if window is None else f" of {window} ({peak.input_tokens / window:.0%})"
        lines.append(f"peak: call {peak.index + 1}, {peak.input_tokens} input tokens{over}")
    removals = session.removal_calls
    lines.append("calls where something was removed or rewritten: "
                 + (", ".join(str(i + 1) for i in removals) if removals else "none"))
    for i in removals:
        diff = session.diffs[i]
        assert diff is not None
        for change in diff.changes:
            if change.kind in (REMOVED, COMPACTED, REWRITTEN):
                lines.append(f"  call {i + 1} (after call {diff.earlier + 1}): {change.kind} {_messages(change.before)} "
                             f"[{change.roles}] {change.tokens_before} -> {change.tokens_after} tokens: "
                             f"{change.detail or change.preview}")
    for i, call in enumerate(session.calls):
        if call.error:
            lines.append(f"call {i + 1}: {call.error}")
    return "\n".join(lines) + "\n"


def session_json(session: Session) -> dict[str, Any]:
    calls = []
    for i, call in enumerate(session.calls):
        r = call.request.recorded
        diff = session.diffs[i]
        calls.append({
            "call": i + 1, "label": call.label, "model": call.model, "trace_id": r.trace_id, "span_id": r.span_id,
            "parent_spans": [s.name for s in call.span_path], "start_time": call.start_time,
            "duration": call.duration, "conversation": call.conversation,
            "previous": None if call.previous is None else call.previous + 1, "input_tokens": call.input_tokens,
            "sections": call.sections, "allowance": session.allowance(i),
            "cached_prefix_tokens": (diff.prefix_tokens if diff else 0) if call.input_tokens is not None else None,
            "cached_share": session.cached_share(i), "recorded_cached_tokens": call.recorded_cached_tokens,
            "provider_input_tokens": r.input_tokens, "marks": marks(session, i), "count_notes": call.count_notes,
            "error": call.error, "diff": diff.to_json() if diff else None})
    peak = session.peak
    return {"file": session.path, "format": session.format, "counter": session.counter_name,
            "context_window": session.context_window, "warnings": session.warnings,
            "peak": None if peak is None else {"call": peak.index + 1, "input_tokens": peak.input_tokens},
            "removal_calls": [i + 1 for i in session.removal_calls], "calls": calls,
            "spans": [{"span_id": s.span_id, "parent_id": s.parent_id, "name": s.name, "kind": s.kind,
                       "model_call": s.model_call, "start_time": s.start_time, "end_time": s.end_time}
                      for s in session.spans]}


def report_json(session: Session) -> str:
    return json.dumps(session_json(session), indent=2, ensure_ascii=False) + "\n"
