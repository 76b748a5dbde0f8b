"""Which columns the requests list shows (inspector/panes/listcolumns.py): the header's right-click menu and
View > Request List Columns hide and show them, the request's name cannot be hidden, the shown columns take the
width given back, and the choice is remembered by name for the next window."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMenu

from inspector.files.settings import Settings
from inspector.mainwindow import MainWindow


def entries(menu: QMenu) -> dict[str, object]:
    return {a.text(): a for a in menu.actions() if a.text()}


def test_columns_are_hidden_from_the_menu_and_the_others_take_their_width(open_and_wait, fixtures_dir, qtbot):
    window = open_and_wait(fixtures_dir / "demo.result.json", fixtures_dir / "demo.baseline.json")
    window.resize(1280, 800)
    window.act_replay.trigger()  # the narrow list people see beside the replay panel
    qtbot.wait(50)
    view, model, header = window.request_view, window.request_model, window.request_view.horizontalHeader()
    name_before = header.sectionSize(model.C_LABEL)
    menu = window.requests.fill_columns_menu(QMenu())
    actions = entries(menu)
    assert list(actions)[:len(model.COLUMNS)] == list(model.COLUMNS)
    assert not actions["Request"].isEnabled() and actions["Request"].isChecked()  # what tells the rows apart
    assert not actions["Show Every Column"].isEnabled()  # nothing hidden yet
    for name in ("Format", "Drift", "File", "Kept"):
        actions[name].setChecked(False)
    QApplication.processEvents()
    hidden = [c for c in range(model.columnCount()) if view.isColumnHidden(c)]
    assert [model.COLUMNS[c] for c in hidden] == ["Format", "Drift", "Kept", "File"]
    assert Settings().hidden_columns() == ["Format", "Drift", "Kept", "File"]  # remembered at once
    assert header.sectionSize(model.C_LABEL) >= name_before  # the name has at least the width it had
    # the same menu again (View > Request List Columns is filled as it opens) shows the choice, and undoes it
    again = entries(window.requests.fill_columns_menu(window.columns_menu))
    assert not again["Format"].isChecked() and again["Counter"].isChecked()
    again["Show Every Column"].trigger()
    assert not any(view.isColumnHidden(c) for c in range(model.columnCount()))
    assert Settings().hidden_columns() == []


def test_a_new_window_shows_the_columns_the_last_one_did(qtbot, counter):
    Settings().set_hidden_columns(["Strategy", "Format", "Request", "No such column"])
    window = MainWindow(counter_spec=counter.name)
    qtbot.addWidget(window)
    try:
        view, model = window.request_view, window.request_model
        hidden = [model.COLUMNS[c] for c in range(model.columnCount()) if view.isColumnHidden(c)]
        assert hidden == ["Strategy", "Format"]  # the name is never hidden; an unknown name is ignored
    finally:
        window.shutdown()


def test_the_header_menu_is_offered_on_a_right_click(open_and_wait, fixtures_dir, qtbot, monkeypatch):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    shown: list[QMenu] = []
    monkeypatch.setattr(QMenu, "popup", lambda menu, *_: shown.append(menu))
    header = window.request_view.horizontalHeader()
    header.customContextMenuRequested.emit(header.rect().center())
    assert shown and "Show Every Column" in entries(shown[0])
