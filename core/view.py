"""The rendered request as the model sees it, with where each section, item, control token,
escaped boundary and audit finding sits in it (character spans into one string).

The chat template decides the layout (Mistral folds the system prompt into the last user
message, others wrap each role in markers), so spans are found by locating each message's
content in the rendered text rather than by assuming an order.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Sequence

from .audit import OPENER, TAG, Finding
from .counting import TokenCounter
from .errors import CounterError
from .render import escape, unescape
from .result import NOT_SENT, AssemblyResult

TAGLIKE = re.compile(r"</?[A-Za-z][^<>\n]{0,80}>")


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    section: str
    item_id: str | None


@dataclass(frozen=True)
class EscapedLiteral:
    start: int
    end: int
    passage_id: str
    escaped: str
    original: str


@dataclass
class RenderedView:
    text: str
    regions: list[Region] = field(default_factory=list)
    control_tokens: list[tuple[int, int, str]] = field(default_factory=list)
    escaped: list[EscapedLiteral] = field(default_factory=list)
    finding_spans: list[tuple[Finding, int, int]] = field(default_factory=list)
    message_spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    note: str | None = None

    def regions_at(self, position: int) -> list[Region]:
        return [r for r in self.regions if r.start <= position < r.end]


def _fallback_text(result: AssemblyResult) -> str:
    parts = []
    for m in result.messages:
        parts.append(f"<{m.role}>\n{m.content or ''}")
        for call in m.tool_calls:
            parts.append(f"[call {call.id}] {call.name}({json.dumps(call.arguments, ensure_ascii=False)})")
    return "\n".join(parts)


def _owners(result: AssemblyResult) -> dict[int, tuple[str, str]]:
    owners: dict[int, tuple[str, str]] = {}
    for entry in result.trace:
        if entry.decision in NOT_SENT or entry.section == "evidence":
            continue
        for index in entry.message_indices:
            owners.setdefault(index, (entry.section, entry.id))
    return owners


def render_view(result: AssemblyResult, counter: TokenCounter, findings: Sequence[Finding] = ()) -> RenderedView:
    note = None
    try:
        text = counter.render_text(result.messages, result.tools)
    except CounterError as exc:
        text = _fallback_text(result)
        note = f"shown as plain messages: {exc}"
    if result.counter is not None and result.counter.name != counter.name:
        note = (f"recorded with {result.counter.name}; rendered here with {counter.name}") if note is None else note
    view = RenderedView(text=text, note=note)
    owners = _owners(result)
    cursor = 0
    raw_found: dict[int, int] = {}
    for index, message in enumerate(result.messages):
        content = message.content or ""
        section, item = owners.get(index, (_guess_section(message.role), None))
        if content:
            at, raw = _locate(text, content, cursor)
            if at is not None:
                length = len(content) if raw else len(json.dumps(content, ensure_ascii=False)) - 2
                view.message_spans[index] = (at, at + length)
                if raw:
                    raw_found[index] = at
                cursor = max(cursor, at + length) if at >= cursor else cursor
                if message.role == "user" and OPENER.search(content) and raw:
                    _user_regions(view, content, at, section, item)
                else:
                    view.regions.append(Region(at, at + length, section, item))
        for call in message.tool_calls:
            # A call renders as name, arguments and id close together: span from the name to the id.
            at = text.find(call.id, cursor)
            at = text.find(call.id) if at == -1 else at
            if at == -1:
                continue
            named = text.rfind(call.name, max(0, at - 2000), at)
            start = named if named != -1 else at
            view.regions.append(Region(start, at + len(call.id), section, item))
            cursor = max(cursor, at + len(call.id))
    _tool_regions(view, result)
    _control_tokens(view, counter)
    _escaped(view, result, raw_found)
    for finding in findings:
        if finding.message_index is None or finding.message_index not in view.message_spans:
            continue
        start, end = view.message_spans[finding.message_index]
        if finding.start is not None and finding.message_index in raw_found:
            base = raw_found[finding.message_index]
            view.finding_spans.append((finding, base + finding.start, base + (finding.end or finding.start)))
        else:
            view.finding_spans.append((finding, start, end))
    view.regions.sort(key=lambda r: (r.start, r.end))
    return view


def _guess_section(role: str) -> str:
    return {"system": "instructions", "user": "current", "assistant": "history", "tool": "tool_exchanges"}[role]


def _locate(text: str, content: str, cursor: int) -> tuple[int | None, bool]:
    for raw, needle in ((True, content), (False, json.dumps(content, ensure_ascii=False)[1:-1])):
        pos = text.find(needle, cursor)
        if pos == -1:
            pos = text.find(needle)
        if pos != -1:
            return pos, raw
    return None, False


def _user_regions(view: RenderedView, content: str, base: int, section: str, item: str | None) -> None:
    """Split the current user message into its evidence blocks and the question."""
    position = 0
    open_at = None
    open_id = None
    for tag in TAG.finditer(content):
        if tag.group(0).startswith("</"):
            if open_at is not None:
                view.regions.append(Region(base + open_at, base + tag.end(), "evidence", open_id))
                position = tag.end()
                open_at = None
        else:
            if open_at is None and tag.start() > position:
                view.regions.append(Region(base + position, base + tag.start(), "evidence", None))
            open_at = tag.start()
            match = re.search(r'\bid="([^"]*)"', tag.group(0))
            open_id = unescape(match.group(1)) if match else None
    if position < len(content):
        view.regions.append(Region(base + position, base + len(content), section, item))


def _tool_regions(view: RenderedView, result: AssemblyResult) -> None:
    for tool in result.tools:
        pos = view.text.find(f'"{tool.name}"')
        pos = view.text.find(tool.name) if pos == -1 else pos
        if pos == -1:
            continue
        end = pos + len(tool.name) + (2 if view.text.startswith('"', pos) else 0)
        if tool.description:
            described = view.text.find(tool.description, pos)
            if described != -1 and described - pos < 2000:
                end = described + len(tool.description)
        view.regions.append(Region(pos, end, "tools", tool.name))


def _control_tokens(view: RenderedView, counter: TokenCounter) -> None:
    """Control-token spellings the template wrote (not ones inside message text)."""
    content_spans = sorted(view.message_spans.values())
    taken = bytearray(len(view.text))
    for literal in counter.control_token_strings():
        start = view.text.find(literal)
        while start != -1:
            end = start + len(literal)
            inside = any(a <= start < b for a, b in content_spans)
            if not inside and not any(taken[start:end]):
                view.control_tokens.append((start, end, literal))
                taken[start:end] = b"\x01" * (end - start)
            start = view.text.find(literal, start + 1)
    view.control_tokens.sort()


def _escaped(view: RenderedView, result: AssemblyResult, raw_found: dict[int, int]) -> None:
    request = result.request
    if request is None:
        return
    passages = {p.id: p for p in request.evidence}
    for region in view.regions:
        if region.section != "evidence" or region.item_id not in passages:
            continue
        passage = passages[region.item_id]
        escaped_text = escape(passage.text)
        at = view.text.find(escaped_text, region.start, region.end)
        if at == -1:
            continue
        for match in TAGLIKE.finditer(passage.text):
            start = at + len(escape(passage.text[:match.start()]))
            literal = escape(match.group(0))
            view.escaped.append(EscapedLiteral(start, start + len(literal), passage.id, literal, match.group(0)))
