"""Fixtures for the desktop app's tests: offscreen Qt, throw-away settings, one shared counter."""
from __future__ import annotations

import os

# Before anything imports Qt: no display is needed, and none is used.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def none_guard():
    """The app's guard against PySide6 6.12's leak of references to None on CPython 3.11 (see
    inspector/qtfix.py): a whole test session makes enough Qt calls to abort the interpreter without it."""
    from inspector.qtfix import guard_none_refcount

    return guard_none_refcount()


@pytest.fixture(scope="session", autouse=True)
def isolated_settings(tmp_path_factory: pytest.TempPathFactory):
    """Point QSettings (and any child process) at a temporary directory: tests never touch real settings."""
    from PySide6.QtCore import QSettings

    path = tmp_path_factory.mktemp("settings")
    os.environ["XDG_CONFIG_HOME"] = str(path)
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(path))
    return path


@pytest.fixture(autouse=True)
def fresh_settings(isolated_settings, qapp):
    """Each test starts with empty settings (and a QApplication: icons and pixmaps need one)."""
    from inspector.files.settings import open_settings

    store = open_settings()
    store.clear()
    store.sync()
    yield
    store.clear()
    store.sync()


@pytest.fixture(scope="session")
def counter():
    """The embedded counter, built once (the app's shared cache then reuses it)."""
    from inspector.workers import shared_counter_cache

    return shared_counter_cache().get(None)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def window(qtbot, counter):
    """A shown main window counting with the embedded counter (the ``counter`` the tests compute their
    expectations with; the app's own default is ``auto``, which tests of it ask for); closed (and its threads
    waited for) at teardown."""
    from inspector.mainwindow import MainWindow

    win = MainWindow(counter_spec=counter.name)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(win.is_idle, timeout=180000)
    yield win
    win.shutdown()


@pytest.fixture
def open_and_wait(qtbot, window):
    """Open files in the window and wait until every row is in."""

    def _open(*paths, demo: bool = False):
        if demo:
            window.open_demo()
        if paths:
            window.open_files([str(p) for p in paths])
        qtbot.waitUntil(window.is_idle, timeout=180000)
        return window

    return _open
