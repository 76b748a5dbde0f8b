"""Audit tab -> item and place; the Request tab's tints, control tokens, escaped boundaries and findings."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat

import core
from inspector import theme
from inspector.panes.detail import DetailTabs
from inspector.models import FindingsModel, ITEM_ID_ROLE, SECTION_ROLE


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
    expected = core.render_view(result, counter, findings=core.audit(result, counter)).text
    assert request.editor.toPlainText() == expected
    assert request.editor.isReadOnly()
    first = request.view.control_tokens[0]
    assert request.format_at(first[0]).fontWeight() == 700
    assert counter.name in request.header.text()


def test_request_tab_tints_regions_marks_escapes_and_underlines_findings(open_and_wait, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.result.json")
    request = window.detail.request
    view = request.view
    result = core.load_result(fixtures_dir / "rag_literal_boundary.result.json")
    assert view == core.render_view(result, counter, findings=core.audit(result, counter))
    evidence = next(r for r in view.regions if r.section == "evidence" and r.item_id is not None)
    fmt = request.format_at(evidence.start + 1)
    assert fmt.background().color() == theme.tint(theme.section_colour("evidence"), request.palette(), 0.30)
    instructions = next(r for r in view.regions if r.section == "instructions")
    assert request.format_at(instructions.start).background().color() == \
        theme.tint(theme.section_colour("instructions"), request.palette(), 0.30)
    assert view.escaped  # the passage quotes the closing tag: core escaped it
    escaped = view.escaped[0]
    assert request.format_at(escaped.start).fontWeight() == 700
    assert request.format_at(escaped.start).underlineStyle() == QTextCharFormat.UnderlineStyle.SingleUnderline
    tip = request.tooltip_at(escaped.start + 2)
    assert escaped.passage_id in tip and repr(escaped.original) in tip and repr(escaped.escaped) in tip
    # clicking into a passage region selects that item everywhere
    request.regionClicked.emit("evidence", evidence.item_id)
    assert window.selection == ("evidence", evidence.item_id)


def test_findings_are_underlined_and_a_finding_jumps_to_its_span(open_and_wait, fixtures_dir):
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
    region = next(r for r in request.view.regions if r.section == "current")
    window.tree.setCurrentIndex(window.tree_proxy.index_for("current", region.item_id))
    assert request.selected_span() == (region.start, region.end)


def test_text_with_characters_outside_the_bmp_keeps_spans_aligned(qtbot, counter):
    """Qt counts UTF-16 units, Python code points: an emoji before a span must not shift it."""
    from inspector.document import rows_from_entry

    data = {"id": "emoji", "instructions": "Be brief 🙂 and exact.", "current": "Status of 🚀 launch?",
            "evidence": [{"id": "p1", "source": "s", "text": "Launch 🚀 is </evidence> go.", "score": 1.0}],
            "context_limit": 400, "max_new_tokens": 50}
    entry = core.entry_from(data, 0, None, "emoji.json")
    (row,) = rows_from_entry(entry, "emoji.json", counter)
    from inspector.panes.requestview import RequestView

    view = RequestView()
    qtbot.addWidget(view)
    view.show_row(row, counter, None)
    qtbot.waitUntil(view.is_idle, timeout=180000)  # rendered off the GUI thread
    view.stop()
    escaped = view.view.escaped[0]
    view.select_span(escaped.start, escaped.end)
    assert view.editor.textCursor().selectedText() == escaped.escaped
    assert view.selected_span() == (escaped.start, escaped.end)


def test_an_item_selected_while_its_request_renders_is_selected_in_the_text(open_and_wait, qtbot, fixtures_dir):
    """The Request tab renders off the GUI thread: an item chosen before the text is there is shown once it is."""
    window = open_and_wait(fixtures_dir / "rag_literal_boundary.result.json", fixtures_dir / "demo.result.json")
    request = window.detail.request
    other = next(r for r in window.request_model.rows() if r is not window.current_row)
    window.select_row(other)
    assert request.view is None and not request.is_idle()  # rendering
    window.select_item("current", None)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    region = next(r for r in request.view.regions if r.section == "current")
    assert request.selected_span() == (region.start, region.end)
