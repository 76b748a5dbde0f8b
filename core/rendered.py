"""What the chat template leaves out: items the trace calls sent that do not appear in the rendered prompt.

A real template can drop content without a word (Mistral Nemo's drops the system prompt when the
conversation ends with tool results; Phi-3.5's drops tools, tool calls and results; gpt-oss's keeps only
the first of parallel tool calls). The count is then exact and still describes a prompt the item is not
in. ``missing_items`` renders the request and looks for each sent item's own text (a message's content,
a tool call's arguments, a tool's name and description) in it; ``mark_not_rendered`` gives each such
entry the decision ``not rendered`` with 0 tokens and a reason (its tokens, the template's doing, go to
the template entry, so the trace still adds up), and the audit reports it as ``template-dropped``.
"""
from __future__ import annotations

import json
from typing import Sequence

from .contracts import ChatMessage, ToolDefinition
from .counting import TokenCounter
from .errors import CounterError
from .result import NOT_SENT, AssemblyResult, TraceEntry
from .text_index import Finder

NOT_RENDERED = "not rendered"


def _spellings(text: str) -> list[str]:
    """The text as a template may write it: as is, stripped, or JSON-quoted (a tool result passed to tojson)."""
    stripped = text.strip()
    quoted = json.dumps(stripped, ensure_ascii=False)[1:-1]
    ascii_quoted = json.dumps(stripped)[1:-1]
    return [s for s in dict.fromkeys((stripped, quoted, ascii_quoted)) if s]


def _present(rendered: str, text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and stripped in rendered or any(s in rendered for s in _spellings(text))


_HEAD = 64  # characters of a long text looked for first (``_InOrder._find``)


class _InOrder:
    """``_present`` for texts that mostly appear in the order they are asked about (a conversation's messages):
    each is looked for from where the one before it was found, then (not there) from the start, so the answer is
    ``_present``'s and a long conversation is not searched from its start for every message."""

    def __init__(self, rendered: str) -> None:
        self.rendered, self.at = rendered, 0
        self.finder = Finder(rendered)  # (``rendered.find``: a text not in it, as a reply whose reasoning the template
        # leaves out, is looked for in its index once scans to its end have cost as much, not scanned for each time)

    def __call__(self, text: str) -> bool:
        """Whether any of ``_spellings(text)`` is anywhere in the text. The cursor decides only where each is looked for
        first, never the answer: the text as it is, from the cursor and then from the start (a system prompt a
        template writes last moves the cursor past the turns before it), before any JSON-quoted spelling is made."""
        stripped = text.strip()
        if stripped:
            found = self._find(stripped, self.at)
            if found < 0 and self.at:
                found = self._find(stripped, 0)
            if found >= 0:
                self.at = found
                return True
        return self.contains(*(s for s in _spellings(text) if s != stripped))

    def _find(self, text: str, at: int) -> int:
        """``rendered.find(text, at)``. A long text is looked for by its head first, then checked whole where the head
        is: the first place the head is at that the whole text starts at is the first place of the whole text (an
        earlier one would start with the head too), and looking for a short head costs no table of the long text."""
        rendered, find = self.rendered, self.finder.find
        if len(text) <= _HEAD:
            return find(text, at)
        head = text[:_HEAD]
        found = find(head, at)
        for _ in range(4):  # a head found again and again (a text of one repeated word): the whole text's own find
            if found < 0 or rendered.startswith(text, found):
                return found
            found = find(head, found + 1)
        return rendered.find(text, found) if found >= 0 else -1

    def contains(self, *spellings: str) -> bool:
        """Whether any of ``spellings`` is in the text (``s in rendered``), looked for from the cursor first."""
        for start in (self.at, 0):
            for s in spellings:
                found = self.finder.find(s, start)
                if found >= 0:
                    self.at = found
                    return True
        return False


def _call_present(present: "_InOrder", name: str, arguments: dict) -> bool:
    if not present.contains(name):
        return False
    values = [v for v in arguments.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    return all(present(str(v)) for v in values if str(v).strip())


def without_reasoning(text: str) -> str | None:
    """``text`` as a template that leaves reasoning out writes it, where it holds reasoning markup: after its last
    ``</think>`` (Qwen3 and DeepSeek-R1 write earlier replies so), or without its ``<|channel>...<channel|>`` blocks
    (Gemma 4's ``strip_thinking``); ``None`` where it holds neither."""
    if "</think>" in text:
        text = text.split("</think>")[-1]
    elif "<|channel>" in text:
        text = "".join(part.split("<|channel>")[0] if "<|channel>" in part else part
                       for part in text.split("<channel|>"))
    else:
        return None
    return text.strip()


def _text_present(present: _InOrder, message: ChatMessage) -> bool:
    """Whether a message's text is in the render: as it is (``_InOrder``), or, for an assistant reply that holds
    reasoning, without it (a template that leaves reasoning out of earlier replies writes the rest), that spelling
    looked for first: the whole text, reasoning and all, is not written there. Only a reply (a system prompt or a tool
    result that mentions ``</think>`` is written whole, or left out whole), and only with a rest to find (a reply of
    reasoning alone is looked for as it is: a template that left it out whole would otherwise go unreported)."""
    text = message.content or ""
    answer = without_reasoning(text) if message.role == "assistant" else None
    if answer and present(answer):
        return True
    return present(text)


def missing_messages(messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition], rendered: str
                     ) -> dict[int, str]:
    """Message index -> what of it the rendered text lacks (a reply whose reasoning alone the template leaves out
    lacks nothing: it is in the prompt, without that)."""
    missing: dict[int, str] = {}
    present = _InOrder(rendered)
    for i, m in enumerate(messages):
        lacks = []
        if m.content and m.content.strip() and not _text_present(present, m):
            lacks.append(f"its text ({len(m.content)} chars)")
        for call in m.tool_calls:  # its name and each argument value (a parallel call the template drops lacks them)
            if not _call_present(present, call.name, call.arguments):
                lacks.append(f"tool call {call.id} ({call.name})")
        if lacks:
            missing[i] = " and ".join(lacks)
    return missing


def missing_tools(tools: Sequence[ToolDefinition], rendered: str) -> list[str]:
    present = _InOrder(rendered)  # the tool list is written in order: each name is looked for from the last found
    return [t.name for t in tools if not present.contains(t.name) or (t.description and not present(t.description))]


def mark_not_rendered(result: AssemblyResult, counter: TokenCounter, *, ids: Sequence[int] | None = None,
                      rendered: str | None = None) -> AssemblyResult:
    """``result`` with each sent entry whose item the template left out marked ``not rendered`` (0 tokens, a
    reason) and its tokens moved to the template entry. Unchanged when nothing is missing or rendering fails.
    ``ids``, the token ids of the result's request, spare a render where the counter can decode them; so does
    ``rendered``, its ``render_text`` (``count_and_render_text`` gave it with the final count)."""
    try:
        if rendered is None and ids is not None:
            rendered = counter.text_of_ids(ids)
        if rendered is None:
            rendered = counter.render_text(result.messages, result.tools)
    except CounterError:
        return result
    missing = missing_messages(result.messages, result.tools, rendered)
    gone_tools = set(missing_tools(result.tools, rendered))
    if not missing and not gone_tools:
        return result
    trace: list[TraceEntry] = []
    moved = 0
    for entry in result.trace:
        if entry.decision in NOT_SENT or entry.section == "template":
            trace.append(entry)
            continue
        why = None
        if entry.section == "tools" and entry.id in gone_tools:
            why = f"tool definition {entry.id} is not in the prompt {counter.name}'s chat template renders"
        elif entry.message_indices and all(i in missing for i in entry.message_indices):
            parts = "; ".join(f"message {i}: {missing[i]}" for i in entry.message_indices)
            why = f"{counter.name}'s chat template leaves it out of the rendered prompt ({parts})"
        if why is None:
            trace.append(entry)
            continue
        moved += entry.tokens
        trace.append(entry.model_copy(update={"decision": NOT_RENDERED, "tokens": 0,
                                              "reason": f"{why}; was: {entry.reason}"}))
    if moved:
        trace = [e.model_copy(update={"tokens": e.tokens + moved}) if e.section == "template" else e for e in trace]
    return result.model_copy(update={"trace": trace})
