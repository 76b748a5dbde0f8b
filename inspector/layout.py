"""The window's layout: its panes, splitters and docks, built once (like menus.py builds its actions)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from .panes.budgetbar import BudgetBar
from .panes.detail import DetailTabs
from .panes.experiments import ExperimentsPane
from .panes.importbar import ImportedRequestBar
from .panes.messagebar import MessageBar
from .panes.replaypanel import ReplayPanel
from .panes.requestlist import RequestListPane
from .panes.sectiontree import SectionTreePane
from .panes.session import SessionPane
from .panes.statusline import StatusLine
from .panes.sweep import SweepPane

if TYPE_CHECKING:
    from .mainwindow import MainWindow


def build_panes(w: MainWindow) -> None:
    """Every pane of the window, its splitters and docks (the window keeps them as attributes; panes talk
    only through it)."""
    w.message_bar = MessageBar(w)
    w.bar = BudgetBar(w)
    w.requests = RequestListPane(w)
    w.request_model, w.request_proxy = w.requests.model, w.requests.proxy
    w.request_view, w.filter_edit = w.requests.view, w.requests.filter_edit
    w.has_drops, w.audit_errors = w.requests.has_drops, w.requests.audit_errors
    w.sections = SectionTreePane(w)
    w.tree_model, w.tree_proxy = w.sections.model, w.sections.proxy
    w.tree, w.only_changes = w.sections.tree, w.sections.only_changes
    w.detail = DetailTabs(w)
    w.import_bar = ImportedRequestBar(w)

    # the tree and the rendered request both want width: they share the right side, one above the other
    w.right_splitter = QSplitter(Qt.Orientation.Vertical, w)
    w.right_splitter.setObjectName("rightSplitter")
    w.right_splitter.addWidget(w.sections)
    w.right_splitter.addWidget(w.detail)
    w.right_splitter.setStretchFactor(0, 5)
    w.right_splitter.setStretchFactor(1, 4)
    w.right_splitter.setSizes([560, 270])
    w.splitter = QSplitter(Qt.Orientation.Horizontal, w)
    w.splitter.setObjectName("mainSplitter")
    w.splitter.addWidget(w.requests)
    w.splitter.addWidget(w.right_splitter)
    w.splitter.setStretchFactor(0, 1)
    w.splitter.setStretchFactor(1, 2)
    w.splitter.setSizes([632, 968])

    central = QWidget(w)
    layout = QVBoxLayout(central)
    layout.setContentsMargins(4, 4, 4, 0)
    layout.setSpacing(4)
    for widget in (w.message_bar, w.bar, w.import_bar):
        layout.addWidget(widget)
    layout.addWidget(w.splitter, 1)
    w.setCentralWidget(central)

    w.log_view = QPlainTextEdit(w)
    w.log_view.setReadOnly(True)
    w.log_view.setAccessibleName("Log")
    w.log_dock = add_dock(w, "Log", "logDock", w.log_view, Qt.DockWidgetArea.BottomDockWidgetArea)
    w.replay_panel = ReplayPanel(w)
    w.replay_dock = add_dock(w, "Replay", "replayDock", w.replay_panel, Qt.DockWidgetArea.RightDockWidgetArea)
    w.replay_dock.setMinimumWidth(430)
    w.session_pane = SessionPane(w)
    w.session_dock = add_dock(w, "Session", "sessionDock", w.session_pane,
                                   Qt.DockWidgetArea.BottomDockWidgetArea)
    w.sweep_pane = SweepPane(w)
    w.sweep_dock = add_dock(w, "Sweep", "sweepDock", w.sweep_pane, Qt.DockWidgetArea.BottomDockWidgetArea)
    w.experiments_pane = ExperimentsPane(w)
    w.experiments_dock = add_dock(w, "Experiments", "experimentsDock", w.experiments_pane,
                                       Qt.DockWidgetArea.BottomDockWidgetArea)

    w.status = StatusLine(w.statusBar())
    w.counter_label, w.tokens_label = w.status.counter_label, w.status.tokens_label
    w.file_label, w.progress = w.status.file_label, w.status.progress
    w.cancel_button = w.status.cancel_button

def add_dock(w: MainWindow, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, w)
    dock.setObjectName(name)
    dock.setWidget(widget)
    w.addDockWidget(area, dock)
    dock.hide()
    return dock
