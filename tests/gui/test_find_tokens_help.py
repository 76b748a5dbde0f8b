"""Find (Ctrl+F) inside the rendered request and the JSON, the Tokens tab (the selected item's text as
the counter's tokens, from core.token_view) and the F1 sheet of shortcuts and tints."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

import core
from inspector import theme
from inspector.panes.detail import DetailTabs
from inspector.panes.tokenview import item_text


def active(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=180000)
    return window


def test_ctrl_f_finds_inside_the_rendered_request(open_and_wait, qtbot):
    window = active(open_and_wait(demo=True), qtbot)
    window.detail.setCurrentIndex(DetailTabs.REQUEST)
    editor = window.detail.request.editor
    editor.setFocus()
    qtbot.keySequence(editor, QKeySequence("Ctrl+F"))
    bar = window.detail.request.find_bar
    assert bar.isVisible() and bar.edit.hasFocus()
    qtbot.keyClicks(bar.edit, "rb-backups")
    text = editor.toPlainText()
    total = text.count("rb-backups")
    assert total >= 1
    assert editor.textCursor().selectedText() == "rb-backups"
    assert bar.count_label.text() == f"1 of {total}"
    first = editor.textCursor().selectionStart()
    assert first == text.index("rb-backups")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    if total > 1:
        assert editor.textCursor().selectionStart() > first and bar.count_label.text() == f"2 of {total}"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    bar.open_bar()
    bar.edit.setText("no such text anywhere")
    assert bar.count_label.text() == "no matches"


def test_ctrl_f_finds_inside_the_json_and_filters_the_list_elsewhere(open_and_wait, fixtures_dir, qtbot):
    window = active(open_and_wait(fixtures_dir / "demo.result.json"), qtbot)
    window.detail.setCurrentIndex(DetailTabs.JSON)
    window.detail.json.setFocus()
    window.act_filter.trigger()
    bar = window.detail.json_find
    assert bar.isVisible()
    bar.edit.setText('"strategy"')
    assert window.detail.json.textCursor().selectedText() == '"strategy"'
    assert bar.count_label.text().endswith(f"of {window.detail.json.toPlainText().count(chr(34) + 'strategy' + chr(34))}")
    window.request_view.setFocus()
    window.act_filter.trigger()
    assert window.filter_edit.hasFocus()  # the list's Ctrl+F is still its filter
    window.act_find_detail.trigger()  # Ctrl+Shift+F: find in the detail from anywhere
    assert bar.isVisible() and bar.edit.hasFocus()


def test_the_tokens_tab_shows_the_selected_items_tokens_from_core(open_and_wait, qtbot):
    window = open_and_wait(demo=True)
    window.select_item("history", "turn-weather")
    window.detail.setCurrentIndex(DetailTabs.TOKENS)
    view = window.detail.tokens
    text = item_text(window.detail._content)
    assert text
    expected = core.token_view(window.counter, text)
    assert view.pieces == expected and len(expected) == window.counter.text_token_count(text)
    assert view.ids.toPlainText() == ", ".join(str(p.id) for p in expected)
    entry = next(e for e in window.current_row.result.trace if e.id == "turn-weather")
    assert f"{len(expected)} tokens" in view.header.text() and f"costs {entry.tokens}" in view.header.text()
    chips = view.chips.toPlainText()
    assert chips.replace("\u00b7", " ").replace("\u21b5", "") == text  # every character, token by token
    window.select_item("history", None)
    assert view.pieces == [] and "Select an item" in view.header.text()


def test_f1_lists_every_shortcut_and_the_tints_of_the_rendered_request(open_and_wait, qtbot):
    window = open_and_wait(demo=True)
    window.act_help.trigger()
    sheet = window._help
    assert sheet is not None and sheet.isVisible() and window.act_help.shortcut() == QKeySequence("F1")
    text = sheet.browser.toPlainText()
    for action in window.actions():
        key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if key:
            assert key in text and action.text().replace("&", "") in text
    for section in core.SECTION_ORDER:
        assert theme.section_title(section) in text
    for name in ("Control token", "Escaped boundary", "Wavy red underline", "Selection"):
        assert name in text
    sheet.close()
