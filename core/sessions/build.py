"""``open_session``: a file's model calls as a session, counted with one counter.

Calls are ordered by their recorded start time where every call has one (Langfuse lists observations
in no particular order), else kept in file order. Each call's complete request is rendered once with
the counter (adapted as ``count_imported`` adapts what a template refuses); the ids of a call and of
its predecessor give the common prefix exactly. Text pieces repeated from call to call are tokenised
once (``SessionTokens``); each distinct message's own tokens are counted once (``Interner``).
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from ..counting import TokenCounter
from ..errors import TemplateRefused
from ..formats.importing import import_file
from ..formats.model import ImportedFile, ImportedRequest, SpanNode
from ..formats.normalise import infer_sections
from .diffing import Interner, Predecessors, diff_calls, tool_text
from .model import CallDiff, Session, SessionCall, conversation_of, start_of
from .tokens import SessionTokens, common_prefix, pack

KEPT_IDS = 16  # packed ids of the latest calls kept for prefix comparisons; older ones are rendered again


def ordered(requests: list[ImportedRequest]) -> list[ImportedRequest]:
    starts = [start_of(r.recorded) for r in requests]
    if requests and all(s is not None for s in starts):
        order = sorted(range(len(requests)), key=lambda i: starts[i] or 0.0)  # stable: file order breaks ties
        return [requests[i] for i in order]
    return list(requests)


def span_path(spans: dict[str, SpanNode], parent: str | None) -> list[SpanNode]:
    """Ancestors of a call, root first (a parent missing from the file ends the walk)."""
    path: list[SpanNode] = []
    seen: set[str] = set()
    while parent is not None and parent in spans and parent not in seen:
        seen.add(parent)
        path.append(spans[parent])
        parent = spans[parent].parent_id
    return path[::-1]


def session_from_import(imported: ImportedFile, counter: TokenCounter, *,
                        context_window: int | None = None) -> Session:
    requests = ordered(imported.requests)
    spans = {s.span_id: s for s in imported.spans}
    tokens = SessionTokens(counter)
    interner = Interner(counter)
    trie = Predecessors()
    packed: OrderedDict[int, bytes | None] = OrderedDict()
    keys: list[list[int]] = []
    calls: list[SessionCall] = []
    diffs: list[CallDiff | None] = []
    conversations: list[int] = []
    warnings = [str(w) for w in imported.warnings]

    def ids_of(index: int) -> bytes | None:
        if index not in packed:
            request = calls[index].request
            try:
                packed[index] = pack(tokens.call_ids(list(request.messages), list(request.tools))[0])
            except TemplateRefused:
                packed[index] = None
            while len(packed) > KEPT_IDS:
                packed.popitem(last=False)
        packed.move_to_end(index)
        return packed[index]

    def compare(earlier: int, later: int) -> CallDiff:
        before, after = requests[earlier], requests[later]
        theirs, mine = ids_of(earlier), ids_of(later)
        prefix = common_prefix(theirs, mine) if mine is not None and theirs is not None else None
        return diff_calls(earlier, later, before.messages, after.messages, keys[earlier], keys[later], interner,
                          before.tools, after.tools, prefix)

    for index, request in enumerate(requests):
        call_keys = interner.ids(request.messages)
        keys.append(call_keys)
        recorded = request.recorded
        previous = trie.add(index, conversation_of(recorded), recorded.trace_id, recorded.parent_span_id, call_keys)
        conversation = conversations[previous] if previous is not None else (max(conversations, default=-1) + 1)
        conversations.append(conversation)
        message_tokens = [interner.tokens[k] for k in call_keys]
        call = SessionCall(index=index, request=request, conversation=conversation, previous=previous,
                           input_tokens=None, sections={}, message_tokens=message_tokens,
                           span_path=span_path(spans, recorded.parent_span_id))
        calls.append(call)
        try:
            ids, notes = tokens.call_ids(list(request.messages), list(request.tools))
        except TemplateRefused as exc:
            call.error = f"{counter.name} cannot count this call: {exc.template_message}"
            warnings.append(f"call {index + 1} ({request.label}): {call.error}")
            packed[index] = None
        else:
            call.input_tokens, call.count_notes = len(ids), notes
            packed[index] = pack(ids)
            call.sections = _sections(request, message_tokens, len(ids), counter)
        packed.move_to_end(index)
        while len(packed) > KEPT_IDS:
            packed.popitem(last=False)
        if previous is None:
            diffs.append(None)
            continue
        diffs.append(compare(previous, index))
    window = context_window if context_window is not None else counter.declared_context_window
    return Session(path=imported.path, format=imported.format.name, counter_name=counter.name, calls=calls,
                   diffs=diffs, spans=list(imported.spans), context_window=window, warnings=warnings,
                   compare_calls=compare)


def _sections(request: ImportedRequest, message_tokens: list[int], total: int, counter: TokenCounter) -> dict[str, int]:
    names = request.sections if len(request.sections) == len(request.messages) else infer_sections(request.messages)
    out: dict[str, int] = {}
    if request.tools:
        out["tools"] = sum(counter.text_count(tool_text(t)) for t in request.tools)
    for name, count in zip(names, message_tokens):
        out[name] = out.get(name, 0) + count
    out["template"] = max(0, total - sum(out.values()))
    return out


def open_session(path: str | Path, counter: TokenCounter, *, context_window: int | None = None) -> Session:
    """The model calls recorded in ``path`` as a session (raises ``FormatError`` as ``import_file`` does)."""
    return session_from_import(import_file(path), counter, context_window=context_window)
