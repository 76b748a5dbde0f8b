"""Audit tab -> item and place; the Request tab's tints, control tokens, escaped boundaries and findings."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat

import core
from inspector import theme
from inspector.detail import DetailTabs
from inspector.models import FindingsModel, ITEM_ID_ROLE, SECTION_ROLE


# ---- a stand-in for core.render_view, built to its spec from the counter's real rendering


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
    regions: list = field(default_factory=list)
    control_tokens: list = field(default_factory=list)
    escaped: list = field(default_factory=list)
    finding_spans: list = field(default_factory=list)


def spec_render_view(result, counter, findings=()):
    """Finds the instructions, each kept passage, the escaped boundary literals and the control tokens
    in the rendered text; places every finding on the first passage region (enough to test the view)."""
    text = counter.render_text(result.messages, result.tools)
    request = result.request
    regions = []
    at = text.find(request.instructions)
    regions.append(Region(at, at + len(request.instructions), "instructions", "instructions"))
    escaped = []
    for passage in request.evidence:
        body = core.escape(passage.text)
        start = text.find(body)
        if start < 0:  # a naive baseline pastes passages raw
            body = passage.text
            start = text.find(body)
        if start < 0:
            continue
        regions.append(Region(start, start + len(body), "evidence", passage.id))
        literal = core.escape("</evidence>")
        where = body.find(literal)
        if where >= 0:
            escaped.append(EscapedLiteral(start + where, start + where + len(literal), passage.id, literal,
                                          "</evidence>"))
    controls = []
    for literal in counter.control_token_strings():
        start = text.find(literal)
        while literal and start >= 0:
            controls.append((start, start + len(literal), literal))
            start = text.find(literal, start + len(literal))
    passage_region = next(r for r in regions if r.section == "evidence")
    spans = [(f, passage_region.start, passage_region.start + 10) for f in findings]
    return RenderedView(text, regions, sorted(controls), escaped, spans)


@pytest.fixture
def spec_view(monkeypatch):
    monkeypatch.setattr(core, "render_view", spec_render_view, raising=False)
    return spec_render_view


# ---- audit


def test_double_clicking_a_finding_selects_its_item(open_and_wait, qtbot, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.baseline.json")
    window.detail.setCurrentIndex(DetailTabs.AUDIT)
    table = window.detail.audit.table
    model = window.detail.audit.model
    row = next(r for r in range(model.rowCount())
               if model.finding_at(r).item_id == "rb-untrusted" and model.finding_at(r).rule == "unescaped-boundary")
    finding = model.finding_at(row)
    rect = table.visualRect(model.index(row, FindingsModel.C_MESSAGE))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.selection == ("evidence", "rb-untrusted")
    current = window.tree.currentIndex()
    assert (current.data(SECTION_ROLE), current.data(ITEM_ID_ROLE)) == ("evidence", "rb-untrusted")
    assert window.detail.currentIndex() == DetailTabs.REQUEST
    assert window.detail.shown_item() == ("evidence", "rb-untrusted")
    request = window.detail.request
    if request.complete:  # core.render_view placed it: the text selection is the finding's span
        span = next((s, e) for f, s, e in request.view.finding_spans if f == finding)
        assert request.selected_span() == span


def test_finding_without_an_item_selects_its_section(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.baseline.json")
    stray = next(f for f in window.current_row.findings if f.item_id is None and f.section == "evidence")
    window.select_finding(stray)
    assert window.selection == ("evidence", None)


def test_request_tab_shows_the_rendered_request(open_and_wait, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.result.json")
    result = core.load_result(fixtures_dir / "rag_literal_boundary.result.json")
    request = window.detail.request
    expected = (core.render_view(result, counter, findings=core.audit(result, counter)).text
                if hasattr(core, "render_view") else counter.render_text(result.messages, result.tools))
    assert request.editor.toPlainText() == expected
    assert request.editor.isReadOnly()
    first = request.view.control_tokens[0]
    assert request.format_at(first[0]).fontWeight() == 700
    assert counter.name in request.header.text()


def test_request_tab_tints_regions_marks_escapes_and_underlines_findings(open_and_wait, spec_view, counter,
                                                                        fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.result.json")
    request = window.detail.request
    assert request.complete
    view = request.view
    evidence = next(r for r in view.regions if r.section == "evidence")
    fmt = request.format_at(evidence.start + 1)
    assert fmt.background().color() == theme.tint(theme.section_colour("evidence"), request.palette(), 0.30)
    instructions = next(r for r in view.regions if r.section == "instructions")
    assert request.format_at(instructions.start).background().color() == \
        theme.tint(theme.section_colour("instructions"), request.palette(), 0.30)
    assert len(view.escaped) == 1
    escaped = view.escaped[0]
    assert request.format_at(escaped.start).fontWeight() == 700
    assert request.format_at(escaped.start).underlineStyle() == QTextCharFormat.UnderlineStyle.SingleUnderline
    tip = request.tooltip_at(escaped.start + 2)
    assert escaped.passage_id in tip and "'</evidence>'" in tip and "&lt;/evidence&gt;" in tip
    # clicking into a passage region selects that item everywhere
    request.regionClicked.emit("evidence", evidence.item_id)
    assert window.selection == ("evidence", evidence.item_id)


def test_findings_are_underlined_and_a_finding_jumps_to_its_span(open_and_wait, spec_view, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.baseline.json")
    request = window.detail.request
    findings = window.current_row.findings
    assert findings and len(request.view.finding_spans) == len(findings)
    finding, start, end = request.view.finding_spans[0]
    assert request.format_at(start).underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert finding.message in request.tooltip_at(start)
    window.select_finding(finding)
    assert request.selected_span() == (start, end)
    # selecting an item in the tree scrolls the request text to its region
    passage = next(r for r in request.view.regions if r.section == "evidence")
    window.tree.setCurrentIndex(window.tree_proxy.index_for("evidence", passage.item_id))
    assert request.selected_span() == (passage.start, passage.end)


def test_text_with_characters_outside_the_bmp_keeps_spans_aligned(qtbot, counter):
    """Qt counts UTF-16 units, Python code points: an emoji before a span must not shift it."""
    from inspector.document import rows_from_entry

    data = {"id": "emoji", "instructions": "Be brief 🙂 and exact.", "current": "Status of 🚀 launch?",
            "evidence": [{"id": "p1", "source": "s", "text": "Launch 🚀 is </evidence> go.", "score": 1.0}],
            "context_limit": 400, "max_new_tokens": 50}
    entry = core.entry_from(data, 0, None, "emoji.json")
    (row,) = rows_from_entry(entry, "emoji.json", counter)
    from inspector.requestview import RequestView

    view = RequestView()
    qtbot.addWidget(view)
    original = getattr(core, "render_view", None)
    core.render_view = spec_render_view
    try:
        view.show_row(row, counter, None)
    finally:
        if original is None:
            del core.render_view
        else:
            core.render_view = original
    escaped = view.view.escaped[0]
    view.select_span(escaped.start, escaped.end)
    assert view.editor.textCursor().selectedText() == escaped.escaped
    assert view.selected_span() == (escaped.start, escaped.end)
