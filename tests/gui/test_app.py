"""Command line, screenshots, settings, saving, drag and drop, shortcuts, accessibility, About."""
from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSize, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QKeySequence
from PySide6.QtWidgets import QMenu

import core
from inspector import app as inspector_app
from inspector.mainwindow import MainWindow
from inspector.paths import demo_request_path, fixtures_dir
from inspector.files.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


# ---- command line


def test_version_in_process(capsys):
    assert inspector_app.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"context-inspector {importlib.metadata.version('context-inspector')}"


def test_python_dash_m_version(tmp_path):
    done = subprocess.run([sys.executable, "-m", "inspector", "--version"], capture_output=True, text=True,
                          env=_env(tmp_path), cwd=ROOT, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"context-inspector {importlib.metadata.version('context-inspector')}"


def test_fixtures_are_found_from_the_package():
    assert fixtures_dir() == ROOT / "fixtures"
    assert demo_request_path().is_file()


def test_screenshot_of_a_result_file(qapp, counter, tmp_path):
    out = tmp_path / "tight.png"
    code = inspector_app.main([str(ROOT / "fixtures" / "rag_tight.result.json"), "--screenshot", str(out)])
    assert code == 0
    image = QImage(str(out))
    assert image.size() == QSize(*inspector_app.SCREENSHOT_SIZE)


def test_screenshot_of_the_demo_via_the_command(tmp_path):
    out = tmp_path / "demo.png"
    done = subprocess.run([sys.executable, "-m", "inspector", "--demo", "--screenshot", str(out)],
                          capture_output=True, text=True, env=_env(tmp_path), cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert QImage(str(out)).size() == QSize(1600, 1000)


def test_screenshot_of_a_bad_file_fails_with_a_message(qapp, counter, tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text('{"instructions": ', encoding="utf-8")
    out = tmp_path / "never.png"
    code = inspector_app.main([str(bad), "--screenshot", str(out)])
    err = capsys.readouterr().err
    assert code != 0
    assert f"{bad}:1:" in err and "malformed JSON" in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("again_after", [None, 0.3])
def test_sigterm_closes_the_window_and_its_workers_cleanly(tmp_path, again_after):
    """``timeout``/``kill`` (or Ctrl+C) closes the demo the way its close button does: exit 0, no traceback, no
    leaked worker semaphores, and the window's state written (so the close ran, not a kill). A second SIGTERM a
    moment later (``timeout make demo``: timeout signals make's process group, make its recipe) is the same request:
    it killed the app halfway through its close before session 21 (exit -15, the semaphores leaked). Shut down
    while they start, the worker processes say nothing ("did not start" was a warning of a pool closed on purpose)."""
    import signal
    import time

    env = _env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "--demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    settings = tmp_path / "config"
    status = Path(f"/proc/{proc.pid}/status")

    def catches_sigterm() -> bool:  # the app's handler is in place (Linux lists caught signals in SigCgt)
        for line in status.read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
        return False

    try:
        if not status.exists():
            pytest.skip("no /proc here to see when the app has installed its signal handlers")
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None and not catches_sigterm():
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(signal.SIGTERM)
        if again_after is not None:
            time.sleep(again_after)
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "leaked semaphore" not in err and "did not start" not in err, err
    assert any(settings.rglob("*")), "the window's state was not saved: it was killed, not closed"


def test_screenshot_needs_something_to_show(qapp, tmp_path, capsys):
    assert inspector_app.main(["--screenshot", str(tmp_path / "x.png")]) == 2
    assert "needs a FILE or --demo" in capsys.readouterr().err


def test_the_app_survives_many_qt_calls(tmp_path):
    """PySide6 6.12 on CPython 3.11 loses a reference to None on each void Qt call; the app's guard keeps
    the interpreter from aborting after a while of use (inspector/qtfix.py)."""
    script = ("import sys\n"
              "from inspector.app import _make_app\n"
              "from PySide6.QtWidgets import QLabel\n"
              "app = _make_app()\n"
              "label = QLabel()\n"
              "for _ in range(300000):\n"
              "    label.setText('x'); label.parent()\n"
              "print('done')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(tmp_path),
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "done"
    assert "Fatal Python error" not in done.stderr


def test_gui_script_entry_point_is_declared():
    entry = [e for e in importlib.metadata.entry_points(group="gui_scripts") if e.name == "context-inspector"]
    assert entry and entry[0].value == "inspector.app:main"


# ---- settings


def test_recent_files_and_counter_are_remembered(qtbot, counter, fixtures_dir):
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_files([str(fixtures_dir / "rag_tight.result.json"), str(fixtures_dir / "demo.result.json")])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    window.close()
    recent = Settings().recent_files()
    assert recent[:2] == [str((fixtures_dir / "demo.result.json").resolve()),
                          str((fixtures_dir / "rag_tight.result.json").resolve())]
    again = MainWindow()
    qtbot.addWidget(again)
    titles = [a.text() for a in again.recent_menu.actions() if not a.isSeparator()]
    assert titles[:2] == ["&1 demo.result.json", "&2 rag_tight.result.json"]
    again.recent_menu.actions()[1].trigger()
    qtbot.waitUntil(again.is_idle, timeout=180000)
    assert again.current_row.label == "rag-tight"
    again.shutdown()


def test_geometry_and_splitters_are_restored(qtbot, counter):
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.resize(760, 590)  # within the offscreen screen (800x800): restoreGeometry keeps windows on screen
    window.splitter.setSizes([300, 450])
    qtbot.wait(10)
    sizes = window.splitter.sizes()
    window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.size() == QSize(760, 590)
    assert again.splitter.sizes() == sizes
    again.shutdown()


def test_settings_live_in_the_temporary_location(isolated_settings):
    from inspector.files.settings import open_settings

    store = open_settings()
    store.setValue("probe", 1)
    store.sync()
    assert Path(store.fileName()).is_relative_to(isolated_settings)
    assert store.organizationName() == "ContextInspector" and store.applicationName() == "context-inspector"


# ---- saving


def test_save_result_writes_only_where_asked(open_and_wait, fixtures_dir, tmp_path):
    window = open_and_wait(fixtures_dir / "rag_tight.request.json")
    target = tmp_path / "saved.result.json"
    assert window.save_result_to(str(target))
    saved = core.load_result(target)
    assert saved.model_dump() == window.current_row.result.model_dump()
    assert target.read_text(encoding="utf-8") == window.current_row.result.to_json()


def test_save_never_overwrites_an_opened_file(open_and_wait, fixtures_dir, tmp_path):
    copy = tmp_path / "copy.result.json"
    copy.write_bytes((fixtures_dir / "rag_tight.result.json").read_bytes())
    before = copy.read_bytes()
    window = open_and_wait(copy)
    assert not window.save_result_to(str(copy))
    assert copy.read_bytes() == before
    assert "never overwritten" in window.message_bar.message()


def test_nothing_is_written_when_opening(open_and_wait, fixtures_dir):
    stamps = {p: p.stat().st_mtime_ns for p in fixtures_dir.iterdir()}
    open_and_wait(fixtures_dir / "recorded.results.jsonl", demo=True)
    assert {p: p.stat().st_mtime_ns for p in fixtures_dir.iterdir()} == stamps


# ---- drag and drop


def test_dropping_files_opens_them(window, qtbot, fixtures_dir):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(fixtures_dir / "rag_tight.result.json"))])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.current_row.label == "rag-tight"
    remote = QMimeData()
    remote.setUrls([QUrl("https://example.invalid/x.json")])
    refused = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, remote, Qt.MouseButton.LeftButton,
                              Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(refused)
    assert not refused.isAccepted()


# ---- shortcuts, accessibility, about


def _menu_actions(window):
    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            for action in menu.actions():
                if not action.isSeparator() and action.menu() is None:
                    yield menu.title(), action


def test_every_main_action_has_a_shortcut_listed_in_the_menus(window):
    shortcuts = {action.text().replace("&", ""): action.shortcut() for _, action in _menu_actions(window)}
    expected = {"Open…": QKeySequence(QKeySequence.StandardKey.Open), "Reload": QKeySequence("F5"),
                "Save Result As…": QKeySequence("Ctrl+Shift+S"), "Close File": QKeySequence("Ctrl+W"),
                "Quit": QKeySequence("Ctrl+Q"), "Find Request": QKeySequence("Ctrl+F"),
                "Next Request": QKeySequence("Ctrl+Down"), "Previous Request": QKeySequence("Ctrl+Up"),
                "Open Demo": QKeySequence("Ctrl+D"), "Shortcuts and Legend": QKeySequence("F1"),
                "About Context Inspector": QKeySequence("Ctrl+F1"), "Find in Request or JSON": QKeySequence("Ctrl+Shift+F"),
                "Show Tokens Tab": QKeySequence("Alt+5")}
    for text, key in expected.items():
        assert shortcuts[text] == key, text
    assert all(not key.isEmpty() for key in shortcuts.values())


def test_keyboard_drives_the_request_list(open_and_wait, qtbot, fixtures_dir):
    window = open_and_wait(fixtures_dir / "recorded.results.jsonl")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=180000)
    qtbot.keyClick(window.request_view, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    assert window.current_row is window.request_model.row_at(1)
    qtbot.keyClick(window.request_view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.filter_edit.hasFocus()


def test_main_widgets_have_accessible_names(window):
    for widget in (window.request_view, window.filter_edit, window.has_drops, window.audit_errors, window.tree,
                   window.bar, window.bar.plot, window.detail, window.detail.item, window.detail.request.editor,
                   window.detail.audit.table, window.detail.json, window.message_bar, window.progress,
                   window.cancel_button, window.counter_label):
        assert widget.accessibleName(), widget


def test_about_names_every_version(window):
    import pyqtgraph
    from PySide6 import __version__ as pyside
    from PySide6.QtCore import qVersion

    text = window.about_text()
    for part in (importlib.metadata.version("context-inspector"), "context-inspector/result@1", pyside, qVersion(),
                 pyqtgraph.__version__, core.DEFAULT_COUNTER):
        assert part in text
    window.show_about()
    assert window._about.isVisible() and not window._about.isModal()
    window._about.close()


def test_demo_baseline_stands_beside_an_audit_finding(open_and_wait):
    window = open_and_wait(demo=True)
    window.select_proxy_row(1)
    assert window.current_row.strategy == "naive_truncate"
    assert window.detail.audit.model.rowCount() == len(window.current_row.findings) > 0
    json.loads(window.detail.json.toPlainText())


def test_screenshot_can_pick_the_row_and_tab(qapp, counter, tmp_path, monkeypatch, capsys):
    from inspector.mainwindow import MainWindow as Window

    shown = {}
    original = Window.grab

    def grab(self, *args):
        shown["row"] = self.current_row
        shown["tab"] = self.detail.currentIndex()
        return original(self, *args)

    monkeypatch.setattr(Window, "grab", grab)
    out = tmp_path / "baseline-audit.png"
    fixture = ROOT / "fixtures" / "rag_literal_boundary.baseline.json"
    result = ROOT / "fixtures" / "rag_literal_boundary.result.json"
    assert inspector_app.main([str(result), str(fixture), "--row", "2", "--tab", "audit",
                               "--screenshot", str(out)]) == 0
    assert shown["row"].strategy == "naive_truncate" and shown["tab"] == 2
    assert inspector_app.main([str(result), "--row", "5", "--screenshot", str(out)]) == 2
    assert "--row 5: the list has 1 row" in capsys.readouterr().err


def test_screenshot_can_show_a_replay(qapp, counter, tmp_path, monkeypatch):
    from inspector.mainwindow import MainWindow as Window

    shown = {}
    original = Window.grab

    def grab(self, *args):
        shown["dock"] = self.replay_dock.isVisible()
        shown["outcome"] = self.replay_outcome
        shown["points"] = len(self.replay_panel.whatif.points)
        return original(self, *args)

    monkeypatch.setattr(Window, "grab", grab)
    out = tmp_path / "replay.png"
    assert inspector_app.main(["--demo", "--replay-limit", "900", "--screenshot", str(out)]) == 0
    assert shown["dock"] and shown["points"] > 0
    assert shown["outcome"].result.context_limit == 900
    assert any(c.kind == "newly dropped" for c in shown["outcome"].diff.changes)
    assert QImage(str(out)).size() == QSize(*inspector_app.SCREENSHOT_SIZE)


def test_replay_limit_on_the_command_line_replays_once_loaded(window, qtbot):
    window.open_demo()
    inspector_app._replay_once_loaded(window, 900)
    assert window.replay_dock.isVisible()
    qtbot.waitUntil(lambda: window.replay_outcome is not None and window.is_idle(), timeout=180000)
    assert window.replay_outcome.result.context_limit == 900
    assert window.replay_panel.limit.value() == 900
