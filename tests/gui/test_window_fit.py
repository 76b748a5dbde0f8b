"""The window at the sizes people use: it fits a 1280-pixel screen whatever is selected, the requests
list sizes its columns to their content and says how many rows the filter shows, a file just opened
has its first row selected and in view, a file that could not be opened is neither logged as loaded
nor put in Recent, and a long passing message in the status bar is elided with its whole text on hover."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from inspector.files.settings import Settings
from inspector.panes.requestlist import MIN_COLUMN, column_widths, fitted_widths

SCREEN = 1280
REALWORLD = Path(__file__).resolve().parents[2] / ".." / "shared" / "realworld"
IMPORTED = REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml"


def every_fixture(fixtures_dir: Path) -> list[Path]:
    files = sorted(fixtures_dir.glob("*.json*")) + sorted((fixtures_dir / "formats").glob("*"))
    return files + ([IMPORTED] if IMPORTED.is_file() else [])


def test_the_window_fits_a_1280_pixel_screen_whatever_is_selected(open_and_wait, fixtures_dir, qtbot):
    window = open_and_wait(*every_fixture(fixtures_dir))
    window.resize(SCREEN, 800)
    rows = window.request_proxy.rowCount()
    assert rows > 50
    for dock_shown in (False, True):
        if dock_shown:
            window.act_replay.trigger()
        for number in range(rows):
            window.select_proxy_row(number)
            qtbot.waitUntil(window.is_idle, timeout=180000)
            QApplication.processEvents()
            label = window.current_row.label
            assert window.width() <= SCREEN, f"{label} (replay panel {dock_shown}) widened the window to {window.width()}"
            assert window.minimumSizeHint().width() <= SCREEN, label


def test_columns_take_their_content_width_and_only_the_widest_give_way():
    assert fitted_widths([100, 40, 300], 500) == [100, 40, 300]  # room for all: nothing elided
    narrowed = fitted_widths([100, 40, 300, 60], 300)
    assert sum(narrowed) <= 300 and narrowed[1] == 40 and narrowed[3] == 60  # the narrow ones keep their width
    assert narrowed[2] < 300 and narrowed[2] == narrowed[0]  # the widest share one cap
    assert min(fitted_widths([500, 500], 10)) == MIN_COLUMN
    # the requests list: text columns give way before figures; then the figures' headers elide, never a figure
    content, headers, flexible = [300, 60, 30, 250], [60, 70, 70, 40], [True, False, False, True]
    assert column_widths(content, headers, flexible, 1000) == [300, 70, 70, 250]
    # the name (first) keeps up to 40% of the room before the other text columns share the rest
    assert column_widths(content, headers, flexible, 400) == [160, 70, 70, 100]
    assert column_widths(content, headers, flexible, 220) == [82, 60, 30, 48]
    assert column_widths([70, 60, 30, 250], headers, flexible, 220) == [70, 60, 30, 60]  # (no more than it needs)
    assert column_widths([300, 60, 30, 50], headers, flexible, 400) == [210, 70, 70, 50]  # and what the others leave
    assert column_widths([500, 60], [60, 70], [True, False], 400) == [330, 70]
    # every column giving way: the name still keeps its share, the list scrolls sideways
    assert column_widths([200] * 10, [60] * 10, [True] + [False] * 9, 300) == [120] + [MIN_COLUMN] * 9


def test_the_request_list_sizes_its_columns_to_their_content(open_and_wait, fixtures_dir, qtbot):
    window = open_and_wait(fixtures_dir / "demo.result.json", fixtures_dir / "demo.baseline.json")
    window.splitter.setSizes([1200, 400])  # room for every column (Counter included)
    qtbot.wait(50)
    view, header = window.request_view, window.request_view.horizontalHeader()
    for column in range(window.request_model.columnCount() - 1):  # the last one stretches
        wanted = max(view.sizeHintForColumn(column), header.sectionSizeHint(column))
        assert header.sectionSize(column) >= wanted, window.request_model.COLUMNS[column]


def test_the_filter_says_how_many_rows_it_shows(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "recorded.results.jsonl", demo=True)
    total = window.request_model.rowCount()
    label = window.requests.shown_label
    assert label.text() == f"{total} of {total} shown"
    window.filter_edit.setText("naive")
    shown = window.request_proxy.rowCount()
    assert 0 < shown < total and label.text() == f"{shown} of {total} shown"
    window.filter_edit.clear()
    assert label.text() == f"{total} of {total} shown"


def test_a_file_just_opened_has_its_first_row_selected_and_in_view(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "recorded.results.jsonl")
    window.resize(SCREEN, 500)
    window.select_proxy_row(3)
    window = open_and_wait(fixtures_dir / "trip_plan_pin_and_fold.result.json")
    row = window.current_row
    assert row.source == str((fixtures_dir / "trip_plan_pin_and_fold.result.json").resolve())
    number = window.requests.proxy_row_of(row)
    assert number == min(n for n in range(window.request_proxy.rowCount())
                         if window.request_model.rows()[n].source == row.source)
    rect = window.request_view.visualRect(window.request_proxy.index(number, 0))
    assert window.request_view.viewport().rect().intersects(rect)  # scrolled to


def test_a_file_that_cannot_be_opened_is_not_logged_as_loaded_nor_put_in_recent(open_and_wait, fixtures_dir,
                                                                                 tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    window = open_and_wait(broken, fixtures_dir / "demo.result.json")
    texts = [text for _, text in window.messages]
    assert any("broken.json" in t for level, t in window.messages if level == "error")
    assert not any(t.startswith("Loaded") and "broken.json" in t for t in texts)
    assert any(t.startswith("Loaded") and "demo.result.json" in t for t in texts)
    recent = Settings().recent_files()
    assert str(broken.resolve()) not in recent and str((fixtures_dir / "demo.result.json").resolve()) in recent
    assert "broken.json" not in window.windowTitle()
    assert [a.text() for a in window.recent_menu.actions() if "broken" in a.text()] == []


def test_a_long_passing_message_is_elided_before_the_permanent_parts_with_the_whole_text_on_hover(
        open_and_wait, fixtures_dir, qtbot):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.resize(SCREEN, 800)
    qtbot.waitUntil(lambda: window.width() == SCREEN)
    status = window.statusBar()
    long = ("Replay of demo: the replayed request at this limit keeps the instructions, the tools and the current "
            "question but drops 41 history turns and 12 evidence passages; the tree marks what changed")
    window.report("info", long)
    shown = status.currentMessage()
    assert shown != long and shown.endswith("…") and long.startswith(shown[:-1])
    assert status.fontMetrics().horizontalAdvance(shown) <= window.status.message_room()
    assert status.toolTip() == long
    window.report("info", "Chart saved")  # a short one as it is, and no tooltip left from the long one
    assert status.currentMessage() == "Chart saved" and status.toolTip() == ""
    status.clearMessage()
    assert status.toolTip() == ""


def test_a_passing_message_is_elided_again_when_the_token_count_beside_it_grows(open_and_wait, fixtures_dir, qtbot):
    """"Loaded x in 0.2 s" was elided to the room it had when shown, then cut off ("Loaded x.js") once the
    permanent token count beside it grew (a replay's "Replayed: input … (recorded …)")."""
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.width() == 1280)
    status, line = window.statusBar(), window.status
    text = "Loaded a_request_file_with_a_rather_long_name_from_the_tracing_export.result.json in 0.2 s"
    line.tokens_label.setText("Input 1")
    qtbot.wait(20)
    window.report("info", text)
    assert status.currentMessage() == text  # room for all of it
    line.show_tokens(window.current_row, window.current_row)  # a wider text in the permanent part
    line.tokens_label.setText("Replayed: input 753 / 762 tokens (recorded 753 / 762) · counted by the reference method")
    line.refit_message()  # (show_tokens asks for it a turn later; the layout has moved by then)
    qtbot.waitUntil(lambda: status.currentMessage() != text, timeout=5000)
    shown = status.currentMessage()
    assert shown.endswith("…") and text.startswith(shown[:-1]) and status.toolTip() == text
    assert status.fontMetrics().horizontalAdvance(shown) <= line.message_room()
