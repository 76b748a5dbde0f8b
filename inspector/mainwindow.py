"""The main window: requests list, budget bar, section tree and detail tabs, and the one selection state.

Panes never talk to each other: each reports what the person picked to the window, which updates
the selection and then every pane. Files are read and requests assembled off the GUI thread.

The replay panel edits the selected recording; the window replays it (``ReplayController``, off the
GUI thread) and shows the replayed result in the bar, the tree and the detail tabs, marked against
the recording, until the edits are reset.

A provider's request body or trace export opens through ``core.formats``: each model call is a row,
counted off the GUI thread under the context limit set for its model (remembered per model name),
and can be re-assembled by the core assembler into a new row that the replay panel then edits.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, qVersion
from PySide6.QtGui import QAction, QCloseEvent, QColor, QDragEnterEvent, QDropEvent, QIcon, QKeySequence, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QDockWidget, QFileDialog, QFrame, QHBoxLayout,
                               QHeaderView, QLabel, QLineEdit, QMainWindow, QMessageBox, QPlainTextEdit,
                               QProgressBar, QPushButton, QSplitter, QStyle, QStyledItemDelegate,
                               QStyleOptionViewItem, QToolButton, QTreeView, QVBoxLayout, QWidget, QTableView)

import core
from core.replay import Edits

from . import APP_NAME, app_version, theme
from .budgetbar import BudgetBar
from .detail import DetailTabs
from .document import Row
from .exporting import ExportDialog
from .files import write_atomically
from .importbar import ImportedRequestBar
from .models import (DECISION_ROLE, ChangeFilterProxy, RequestFilterProxy, RequestListModel, SECTION_ROLE,
                     ITEM_ID_ROLE, SectionTreeModel)
from .paths import demo_request_path
from .providers import ReassemblyRefused, format_title, model_key, needs_recount, reassemble, recount
from .replaycontroller import ReplayController
from .replaypanel import ReplayPanel, outcome_summary
from .replaysession import ReplayOutcome, ReplayTarget
from .settings import Settings
from .workers import CounterCache, CounterThread, LatestJob, LoadJob, LoadThread, ReadRowThread, shared_counter_cache

log = logging.getLogger("inspector")


class MessageBar(QFrame):
    """A non-modal banner for problems: the latest message, how many others, and a way to the log."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Message bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.icon = QLabel(self)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName("Message")
        self.log_button = QPushButton("Show log", self)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.log_button)
        layout.addWidget(self.close_button)
        self.level = "info"
        self._shown = 0  # messages since the bar was last dismissed
        self.hide()

    def dismiss(self) -> None:
        self._shown = 0
        self.hide()

    def show_message(self, level: str, text: str) -> None:
        """Show the latest problem; the ones before it (since the last dismissal) are counted, not hidden."""
        self._shown = self._shown + 1 if not self.isHidden() else 1
        others = self._shown - 1
        self.level = level
        severity = {"error": "error", "warning": "warning"}.get(level, "ok")
        self.icon.setPixmap(theme.severity_icon(severity).pixmap(18, 18))
        suffix = f"  (+{others} more in the log)" if others else ""
        self.text.setText(text + suffix)
        pal = self.palette()
        colour = theme.SEVERITY_COLOURS.get(severity, theme.SEVERITY_COLOURS["ok"])
        pal.setColor(QPalette.ColorRole.Window, theme.tint(QColor(colour), None, 0.22))
        self.setPalette(pal)
        self.show()

    def message(self) -> str:
        return "" if self.isHidden() else self.text.text()


class DecisionDelegate(QStyledItemDelegate):
    """Draws a decision as a badge: rounded pill in the decision colour, icon and word in white."""

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        decision = index.data(DECISION_ROLE)
        if not decision:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:  # selection background and focus as the style draws them
            opt.text = ""
            opt.icon = QIcon()
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        look = theme.decision_style(decision)
        metrics = option.fontMetrics
        label = f"{look.glyph} {decision}"
        width = min(option.rect.width() - 4, metrics.horizontalAdvance(label) + 16)
        height = min(option.rect.height() - 4, metrics.height() + 4)
        rect = option.rect.adjusted(2, (option.rect.height() - height) // 2, 0, 0)
        rect.setWidth(width)
        rect.setHeight(height)
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(look.colour))
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(QColor("#ffffff"))
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex):
        size = super().sizeHint(option, index)
        size.setHeight(max(size.height(), option.fontMetrics.height() + 5))
        return size


class MainWindow(QMainWindow):
    def __init__(self, *, counter_cache: CounterCache | None = None, settings: Settings | None = None,
                 persist: bool = True, counter_spec: str | None = None) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.setAccessibleName(APP_NAME)
        self.setAcceptDrops(True)
        self._cache = counter_cache or shared_counter_cache()
        self._settings = settings or Settings()
        self._persist = persist
        self._counter_spec = CounterCache.normalise(counter_spec or self._settings.last_counter())
        self._counter: core.TokenCounter | None = None
        self._counter_thread: CounterThread | None = None
        self._counter_pending = False
        self._counter_reload = False
        self._open: dict[str, bool] = {}  # path -> opened as the demo
        self._jobs: deque[LoadJob] = deque()
        self._thread: LoadThread | None = None
        self._generation = 0
        self._loading: dict[str, int] = {}  # path -> generation of the job whose rows it takes
        self._job_started = 0.0
        self._current: Row | None = None
        self._selection: tuple[str | None, str | None] = (None, None)
        self._syncing = False
        self.messages: list[tuple[str, str]] = []
        self._about: QMessageBox | None = None
        self._read_threads: list[ReadRowThread] = []
        self.replay = ReplayController(self._cache.lock, self)
        self._replay_key: tuple | None = None
        self._kept_edits: tuple[tuple | None, Edits] = (None, Edits())  # the last row's edits, by its key
        self._replay_view: Row | None = None  # the replayed result shown in place of the recording
        self._replay_outcome: ReplayOutcome | None = None
        # context limits set for the models of imported requests (remembered only when persisting)
        self._limits: dict[str, int] = self._settings.context_limits() if persist else {}
        self._recounter = LatestJob(self)  # imported rows counted again under a new limit
        self._reassembler = LatestJob(self)  # an imported row assembled by the core assembler
        self._restore: set[tuple[str, int]] = set()  # imported rows whose re-assembly a reload brings back
        self._restore_queue: list[Row] = []
        self._export_dialog: ExportDialog | None = None

        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._connect()
        self._restore_state()
        self._update_status()
        self._start_counter(self._counter_spec, reload_after=False, startup=True)

    # ------------------------------------------------------------------ construction

    def _build_widgets(self) -> None:
        self.message_bar = MessageBar(self)
        self.message_bar.log_button.clicked.connect(self._show_log)

        self.bar = BudgetBar(self)

        self.request_model = RequestListModel(self)
        self.request_proxy = RequestFilterProxy(self)
        self.request_proxy.setSourceModel(self.request_model)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter requests (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter requests")
        self.has_drops = QCheckBox("Has drops", self)
        self.has_drops.setAccessibleName("Only requests with dropped items")
        self.audit_errors = QCheckBox("Audit errors", self)
        self.audit_errors.setAccessibleName("Only requests with audit errors")
        self.request_view = QTableView(self)
        self.request_view.setModel(self.request_proxy)
        self.request_view.setAccessibleName("Requests")
        self.request_view.setSortingEnabled(True)
        self.request_view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # file order until a header is clicked
        self.request_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.request_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.request_view.verticalHeader().hide()
        self.request_view.setWordWrap(False)
        self.request_view.horizontalHeader().setStretchLastSection(True)
        for col, width in ((0, 118), (1, 84), (2, 84), (3, 80), (4, 50), (5, 40), (6, 62), (7, 96)):
            self.request_view.setColumnWidth(col, width)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(QLabel("<b>Requests</b>", left))
        left_layout.addWidget(self.filter_edit)
        toggles = QHBoxLayout()
        toggles.addWidget(self.has_drops)
        toggles.addWidget(self.audit_errors)
        toggles.addStretch(1)
        left_layout.addLayout(toggles)
        left_layout.addWidget(self.request_view)

        self.tree_model = SectionTreeModel(self)
        self.tree_proxy = ChangeFilterProxy(self)
        self.tree_proxy.setSourceModel(self.tree_model)
        self.tree = QTreeView(self)
        self.tree.setModel(self.tree_proxy)
        self.tree.setAccessibleName("Sections and items")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setItemDelegateForColumn(SectionTreeModel.C_DECISION, DecisionDelegate(self.tree))
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        for col, width in ((0, 220), (1, 150), (2, 150), (3, 170), (4, 90), (5, 150)):
            self.tree.setColumnWidth(col, width)
        self.tree.setColumnHidden(SectionTreeModel.C_CHANGE, True)  # shown while a replay is
        self.only_changes = QCheckBox("Only changes", self)
        self.only_changes.setAccessibleName("Only items the replay changed")
        self.only_changes.setToolTip("Show only the items whose decision the replay changed (Ctrl+Shift+C)")
        self.only_changes.hide()
        centre = QWidget(self)
        centre_layout = QVBoxLayout(centre)
        centre_layout.setContentsMargins(0, 0, 0, 0)
        tree_header = QHBoxLayout()
        tree_header.addWidget(QLabel("<b>Sections and items</b>", centre))
        tree_header.addStretch(1)
        tree_header.addWidget(self.only_changes)
        centre_layout.addLayout(tree_header)
        centre_layout.addWidget(self.tree)

        self.detail = DetailTabs(self)

        # the tree and the rendered request both want width: they share the right side, one above the other
        self.right_splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.right_splitter.setObjectName("rightSplitter")
        self.right_splitter.addWidget(centre)
        self.right_splitter.addWidget(self.detail)
        self.right_splitter.setStretchFactor(0, 5)
        self.right_splitter.setStretchFactor(1, 4)
        self.right_splitter.setSizes([560, 270])
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.right_splitter)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([632, 968])

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        self.import_bar = ImportedRequestBar(self)
        layout.addWidget(self.message_bar)
        layout.addWidget(self.bar)
        layout.addWidget(self.import_bar)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self.log_view = QPlainTextEdit(self)
        self.log_view.setReadOnly(True)
        self.log_view.setAccessibleName("Log")
        self.log_dock = QDockWidget("Log", self)
        self.log_dock.setObjectName("logDock")
        self.log_dock.setWidget(self.log_view)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log_dock)
        self.log_dock.hide()

        self.replay_panel = ReplayPanel(self)
        self.replay_dock = QDockWidget("Replay", self)
        self.replay_dock.setObjectName("replayDock")
        self.replay_dock.setWidget(self.replay_panel)
        self.replay_dock.setMinimumWidth(430)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.replay_dock)
        self.replay_dock.hide()

        status = self.statusBar()
        self.counter_label = QLabel(self)
        self.counter_label.setAccessibleName("Token counter")
        self.tokens_label = QLabel(self)
        self.tokens_label.setAccessibleName("Input tokens of the allowance")
        self.file_label = QLabel(self)
        self.file_label.setAccessibleName("File")
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Loading progress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setAccessibleName("Cancel loading")
        self.cancel_button.hide()
        status.addWidget(self.file_label, 1)
        status.addPermanentWidget(self.progress)
        status.addPermanentWidget(self.cancel_button)
        status.addPermanentWidget(self.tokens_label)
        status.addPermanentWidget(self.counter_label)

    def _action(self, text: str, shortcut: QKeySequence | str | None, slot, tip: str) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work even when the menu bar is hidden
        return action

    def _build_actions(self) -> None:
        K = QKeySequence.StandardKey
        self.act_open = self._action("&Open…", K.Open, self.open_dialog, "Open request or result files")
        self.act_demo = self._action("Open &Demo", "Ctrl+D", self.open_demo,
                                     "Open the bundled demo request with its naive baseline")
        self.act_reload = self._action("&Reload", "F5", self.reload, "Read the open files again")
        self.act_save = self._action("&Save Result As…", "Ctrl+Shift+S", self.save_result_dialog,
                                     "Write the selected result as JSON to a new file")
        self.act_close = self._action("&Close File", "Ctrl+W", self.close_current_file,
                                      "Close the file of the selected request")
        self.act_counter = self._action("&Counter…", "Ctrl+K", self.choose_counter_dialog,
                                        "Pick a Hugging Face tokenizer directory to count with")
        self.act_default_counter = self._action("Use &Embedded Counter", "Ctrl+Shift+K",
                                                lambda: self.set_counter_spec(core.DEFAULT_COUNTER),
                                                f"Count with {core.DEFAULT_COUNTER}")
        self.act_cancel = self._action("Cancel &Loading", "Esc", self.cancel_loading, "Stop reading files")
        self.act_quit = self._action("&Quit", "Ctrl+Q", self.close, "Quit")
        self.act_filter = self._action("&Find Request", "Ctrl+F", self.focus_filter, "Focus the filter box")
        self.act_next = self._action("&Next Request", "Ctrl+Down", lambda: self.step_request(1),
                                     "Select the next request")
        self.act_prev = self._action("&Previous Request", "Ctrl+Up", lambda: self.step_request(-1),
                                     "Select the previous request")
        self.act_tabs = [self._action(f"Show {name} Tab", f"Alt+{n + 1}",
                                      lambda _=False, n=n: self.detail.setCurrentIndex(n), f"Show the {name} tab")
                         for n, name in enumerate(("Item", "Request", "Audit", "JSON"))]
        self.act_log = self.log_dock.toggleViewAction()
        self.act_log.setText("&Log")
        self.act_log.setShortcut(QKeySequence("Ctrl+L"))
        self.addAction(self.act_log)
        self.act_replay = self.replay_dock.toggleViewAction()
        self.act_replay.setText("&Replay Panel")
        self.act_replay.setShortcut(QKeySequence("Ctrl+R"))
        self.act_replay.setStatusTip("Edit the limits, reserve, margin, fill order, plan and counter and watch "
                                     "the request re-assemble")
        self.addAction(self.act_replay)
        self.act_reset_replay = self._action("Reset Replay to &Recorded", "Ctrl+Shift+R", self.reset_replay,
                                             "Put every replay control back to the recorded value")
        self.act_only_changes = self._action("Only &Changes", "Ctrl+Shift+C", self.only_changes.toggle,
                                             "Show only the items whose decision the replay changed")
        self.act_save_replayed = self._action("Save Re&played Result As…", "Ctrl+Alt+S", self.save_replayed_dialog,
                                              "Write the replayed result as JSON to a new file")
        self.act_save_replayed.setEnabled(False)
        self.act_export = self._action("&Export…", "Ctrl+Shift+E", self.export_dialog,
                                       "Export the shown result: result JSON, OpenAI request body, OTLP JSON span or "
                                       "an HTML report, optionally redacted")
        self.act_reassemble = self._action("Re-&assemble", "Ctrl+E", self.reassemble_current,
                                           "Turn the imported provider request into a core request, assemble it "
                                           "under its context limit and open it in the replay panel")
        self.act_context_limit = self._action("Context &Limit for Model…", "Ctrl+Shift+L", self.focus_context_limit,
                                              "Set the context limit of the selected imported request's model "
                                              "(remembered for that model)")
        self.import_bar.set_reassemble_tip(f"{self.act_reassemble.statusTip()} "
                                           f"({self.act_reassemble.shortcut().toString()})")
        self.act_about = self._action("&About Context Inspector", "F1", self.show_about, "Versions and credits")
        self.act_export.setEnabled(False)
        self.act_reassemble.setEnabled(False)
        self.act_context_limit.setEnabled(False)
        self.act_cancel.setEnabled(False)
        self.act_save.setEnabled(False)
        self.act_close.setEnabled(False)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.act_open)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.act_demo)
        file_menu.addAction(self.act_reload)
        file_menu.addSeparator()
        file_menu.addAction(self.act_save)
        file_menu.addAction(self.act_save_replayed)
        file_menu.addAction(self.act_export)
        file_menu.addAction(self.act_close)
        file_menu.addSeparator()
        file_menu.addAction(self.act_counter)
        file_menu.addAction(self.act_default_counter)
        file_menu.addAction(self.act_cancel)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        go_menu = bar.addMenu("&Go")
        go_menu.addAction(self.act_filter)
        go_menu.addAction(self.act_next)
        go_menu.addAction(self.act_prev)
        request_menu = bar.addMenu("&Request")
        request_menu.addAction(self.act_reassemble)
        request_menu.addAction(self.act_context_limit)
        view_menu = bar.addMenu("&View")
        for action in self.act_tabs:
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(self.act_replay)
        view_menu.addAction(self.act_reset_replay)
        view_menu.addAction(self.act_only_changes)
        view_menu.addSeparator()
        view_menu.addAction(self.act_log)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.act_demo)
        help_menu.addAction(self.act_about)
        self._rebuild_recent_menu()

    def _connect(self) -> None:
        self.filter_edit.textChanged.connect(self.request_proxy.set_text)
        self.has_drops.toggled.connect(self.request_proxy.set_has_drops)
        self.audit_errors.toggled.connect(self.request_proxy.set_audit_errors)
        self.request_view.selectionModel().currentRowChanged.connect(self._list_current_changed)
        self.tree.selectionModel().currentChanged.connect(self._tree_current_changed)
        self.bar.segmentClicked.connect(lambda section, item: self.select_item(section, item, origin="bar"))
        self.detail.request.regionClicked.connect(lambda s, i: self.select_item(s, i, origin="request"))
        self.detail.audit.findingActivated.connect(self.select_finding)
        self.cancel_button.clicked.connect(self.cancel_loading)
        self.only_changes.toggled.connect(self._only_changes_toggled)
        self.replay_panel.set_counter_actions(self.act_default_counter, self.act_counter)
        self.replay_panel.editsChanged.connect(self._replay_edits_changed)
        self.replay_panel.resetRequested.connect(self.reset_replay)
        self.replay_panel.saveRequested.connect(self.save_replayed_dialog)
        self.replay_panel.whatif.limitPicked.connect(self.replay_panel.set_limit)
        self.replay_dock.visibilityChanged.connect(self._replay_dock_shown)
        self.replay.outcomeReady.connect(self._on_replayed)
        self.replay.sweepReady.connect(self._on_sweep)
        self.replay.sweepStarted.connect(self.replay_panel.whatif.set_computing)
        self.import_bar.limitChanged.connect(self.set_context_limit)
        self.import_bar.reassembleRequested.connect(self.reassemble_current)
        self._recounter.finished.connect(self._on_recounted)
        self._reassembler.finished.connect(self._on_reassembled)

    # ------------------------------------------------------------------ settings

    def _restore_state(self) -> None:
        if not self._persist:
            return
        geometry = self._settings.geometry("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 950)
        state = self._settings.geometry("state")
        if state is not None:
            self.restoreState(state)
        for key, splitter in (("splitter", self.splitter), ("right_splitter", self.right_splitter)):
            saved = self._settings.geometry(key)
            if saved is not None:
                splitter.restoreState(saved)

    def save_state(self) -> None:
        if not self._persist:
            return
        self._settings.set_geometry("geometry", self.saveGeometry())
        self._settings.set_geometry("state", self.saveState())
        self._settings.set_geometry("splitter", self.splitter.saveState())
        self._settings.set_geometry("right_splitter", self.right_splitter.saveState())
        self._settings.sync()

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self._settings.recent_files()
        for n, path in enumerate(recent):
            action = self.recent_menu.addAction(f"&{n + 1} {Path(path).name}" if n < 9 else Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self.open_files([p]))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear Recent Files", self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))

    def _clear_recent(self) -> None:
        self._settings.clear_recent()
        self._rebuild_recent_menu()

    # ------------------------------------------------------------------ messages

    def report(self, level: str, text: str) -> None:
        """Every problem the person should see: banner (errors and warnings), log pane and logger.
        A "note" (one of a file's import warnings, summarised in the banner) goes to the log only."""
        self.messages.append((level, text))
        stamp = time.strftime("%H:%M:%S")
        self.log_view.appendPlainText(f"{stamp} {level.upper():7} {text}")
        getattr(log, "error" if level == "error" else "warning" if level == "warning" else "info")(text)
        if level in ("error", "warning"):
            self.message_bar.show_message(level, text)
        elif level != "note":
            self.statusBar().showMessage(text, 5000)

    def _show_log(self) -> None:
        self.log_dock.show()
        self.log_dock.raise_()

    # ------------------------------------------------------------------ counter

    @property
    def counter(self) -> core.TokenCounter | None:
        return self._counter

    @property
    def counter_spec(self) -> str:
        return self._counter_spec

    def set_counter_spec(self, spec: str) -> None:
        """Count with ``spec`` from now on (built off the GUI thread); open requests are re-assembled."""
        self._start_counter(CounterCache.normalise(spec), reload_after=True, startup=False)

    def choose_counter_dialog(self) -> None:
        directory = QFileDialog.getExistingDirectory(self, "Tokenizer directory (Hugging Face, with its chat template)")
        if directory:
            self.set_counter_spec(f"hf:{directory}")

    def _start_counter(self, spec: str, *, reload_after: bool, startup: bool) -> None:
        if self._counter_thread is not None and self._counter_thread.isRunning():
            self.report("warning", f"A counter is still being built; {spec} was not started")
            return
        self._counter_pending = True
        self._counter_reload = reload_after
        self.counter_label.setText(f"Counter: building {spec}…")
        thread = CounterThread(self._cache, spec, self)
        thread.built.connect(self._counter_built)
        thread.failed.connect(lambda s, msg: self._counter_failed(s, msg, startup))
        thread.finished.connect(thread.deleteLater)
        self._counter_thread = thread
        self._show_busy(f"Building counter {spec}")
        thread.start()

    def _counter_built(self, spec: str, counter: core.TokenCounter) -> None:
        self._counter_thread = None
        self._counter_pending = False
        changed = spec != self._counter_spec or self._counter is None
        self._counter_spec = spec
        self._counter = counter
        self.replay.set_counter(counter)
        if self._persist:
            self._settings.set_last_counter(None if spec == core.DEFAULT_COUNTER else spec)
        self._update_status()
        self._hide_busy_if_idle()
        if self._counter_reload and changed and self._open:
            self.report("info", f"Counting with {spec}; re-assembling the open requests")
            self.reload()
        elif self._current is not None:
            self._setup_replay(self._current)
            self._refresh_view()
        self._start_next_job()

    def _counter_failed(self, spec: str, message: str, startup: bool) -> None:
        self._counter_thread = None
        self._counter_pending = False
        self.report("error", message if spec in message else f"counter {spec}: {message}")
        if startup and spec != core.DEFAULT_COUNTER:
            self.report("warning", f"Falling back to the embedded counter {core.DEFAULT_COUNTER}")
            self._counter_spec = core.DEFAULT_COUNTER
            self._start_counter(core.DEFAULT_COUNTER, reload_after=False, startup=True)
            return
        self._update_status()
        self._hide_busy_if_idle()
        self._start_next_job()

    # ------------------------------------------------------------------ opening

    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Open requests, results, provider bodies or trace exports", "",
            "Requests, results and traces (*.json *.jsonl *.yaml *.yml);;All files (*)")
        if paths:
            self.open_files(paths)

    def open_demo(self) -> None:
        self._queue([str(demo_request_path())], demo=True)

    def open_files(self, paths: list[str]) -> None:
        resolved = [str(Path(p).expanduser().resolve()) for p in paths]
        for path in resolved:
            if self._persist and Path(path).is_file():
                self._settings.add_recent(path)
        self._rebuild_recent_menu()
        self._queue(resolved, demo=False)

    def _queue(self, paths: list[str], *, demo: bool) -> None:
        for path in paths:
            self._open[path] = demo  # an open file opened again is read again when its job starts
        self._jobs.append(LoadJob(paths=list(paths), counter_spec=self._counter_spec, demo=demo))
        self._update_title()
        self._start_next_job()

    def _start_next_job(self) -> None:
        if self._thread is not None or self._counter_pending or not self._jobs:
            return
        job = self._jobs.popleft()
        job.paths = [p for p in job.paths if p in self._open]  # closed while queued
        if not job.paths:
            self._start_next_job()
            return
        job.counter_spec = self._counter_spec
        job.context_limits = dict(self._limits)
        self._generation += 1
        job.generation = self._generation
        for path in job.paths:
            # rows of an earlier read of the same file go; only this job's rows are taken from now on
            self._remove_rows_of(path)
            self._loading[path] = job.generation
        thread = LoadThread(job, self._cache, self)
        thread.batchReady.connect(self._on_batch)
        thread.rowsRead.connect(self._on_rows_read)
        thread.progress.connect(self._on_progress)
        thread.problem.connect(self._on_problem)
        thread.counterReady.connect(self._on_job_counter)
        thread.finished.connect(lambda t=thread: self._on_job_finished(t))
        self._thread = thread
        self._job_started = time.monotonic()
        self.act_cancel.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"Reading {Path(job.paths[0]).name}")  # until the thread reports
        self.progress.show()
        self.cancel_button.show()
        thread.start()

    def _on_job_counter(self, generation: int, counter: core.TokenCounter | None) -> None:
        if counter is not None and self._counter is None:
            self._counter = counter
            self._update_status()

    def _on_batch(self, generation: int, rows: list[Row]) -> None:
        rows = [r for r in rows if r.source in self._open and self._loading.get(r.source) == generation]
        if not rows:
            return
        self.request_model.append_rows(rows)
        if any(needs_recount(r, self._limits) for r in rows):
            self._recount_stale()  # a limit was set while these were being counted
        if self._restore:
            again = [r for r in rows if (r.source, r.index) in self._restore and r.imported is not None]
            self._restore.difference_update((r.source, r.index) for r in again)
            self._restore_queue.extend(again)
            self._restore_next()
        if self._current is None:
            self.select_first_request()

    def _on_rows_read(self, _generation: int, pairs: list[tuple[Row, Row]]) -> None:
        """Pending rows were read in the background: each takes its full content in place."""
        current_read = False
        read = []
        for row, full in pairs:
            if row.pending:
                row.absorb(full)
                read.append(row)
                current_read = current_read or row is self._current
        self.request_model.rows_changed(read)
        if current_read:
            self.select_row(self._current, origin="read")

    def _read_now(self, row: Row) -> None:
        """The person selected a row not read yet: read it next (or now, if its loading has stopped)."""
        thread = self._thread
        if thread is not None and row.source in thread.job.paths and not thread.isFinished():
            thread.prioritise(row)
            return
        if any(t.row is row for t in self._read_threads):
            return
        reader = ReadRowThread(row, self._cache, self._counter_spec, self)
        reader.rowsRead.connect(self._on_rows_read)
        reader.finished.connect(lambda r=reader: self._read_finished(r))
        self._read_threads.append(reader)
        self._show_busy(f"Reading {row.label}")
        reader.start()

    def _read_finished(self, reader: ReadRowThread) -> None:
        if reader in self._read_threads:
            self._read_threads.remove(reader)
        reader.deleteLater()
        self._hide_busy_if_idle()

    def _on_progress(self, generation: int, done: int, total: int, text: str) -> None:
        if generation != self._generation:
            return
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(min(done, total))
            self.progress.setFormat(text if "%" in text else f"{text}: %v of %m")
        else:
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"Reading {text}")

    def _on_problem(self, generation: int, level: str, text: str) -> None:
        self.report(level, text)

    def _on_job_finished(self, thread: LoadThread) -> None:
        if thread is not self._thread:
            return  # already handled (a reload waited for it)
        self._thread = None
        seconds = time.monotonic() - self._job_started
        if thread.cancelled:
            unread = f", {thread.unread} not read yet (select one to read it)" if thread.unread else ""
            self.report("warning", f"Loading cancelled; {self.request_model.rowCount()} rows kept{unread}")
        else:
            self.report("info", f"Loaded {', '.join(Path(p).name for p in thread.job.paths)} in {seconds:.1f} s")
        thread.deleteLater()
        self._hide_busy_if_idle()
        self._update_status()
        if self._current is not None and self._current.pending:
            self._read_now(self._current)  # selected after the thread stopped taking requests
        self._start_next_job()

    def cancel_loading(self) -> None:
        self._jobs.clear()
        if self._thread is not None:
            self._thread.cancel()

    def is_idle(self) -> bool:
        return (self._thread is None and not self._jobs and not self._counter_pending and not self._read_threads
                and self.replay.is_idle() and self._recounter.is_idle() and self._reassembler.is_idle())

    def _show_busy(self, text: str) -> None:
        self.progress.setRange(0, 0)
        self.progress.setFormat(text)
        self.progress.show()

    def _hide_busy_if_idle(self) -> None:
        if self._thread is None and not self._jobs and not self._counter_pending and not self._read_threads \
                and self._recounter.is_idle() and self._reassembler.is_idle():
            self.progress.hide()
            self.cancel_button.hide()
            self.act_cancel.setEnabled(False)

    def reload(self) -> None:
        """Read every open file again (requests are re-assembled with the current counter)."""
        self.cancel_loading()
        if self._thread is not None:
            self._thread.wait()
            self._on_job_finished(self._thread)
        opened = dict(self._open)
        # re-assembled rows are the person's work, not a file's: re-assemble them again once read
        self._restore = {(r.derived_from.source, r.derived_from.index) for r in self.request_model.rows()
                         if r.derived_from is not None}
        self._restore_queue.clear()
        self.request_model.clear()
        self.select_row(None)
        self._open.clear()
        demo = [p for p, d in opened.items() if d]
        plain = [p for p, d in opened.items() if not d]
        if demo:
            self._queue(demo, demo=True)
        if plain:
            self._queue(plain, demo=False)

    def close_current_file(self) -> None:
        row = self._current
        if row is None:
            return
        number = self._proxy_row_of(row)
        self._remove_rows_of(row.source)
        self._open.pop(row.source, None)
        self._loading.pop(row.source, None)
        self._update_title()
        count = self.request_proxy.rowCount()
        if count:
            self.select_proxy_row(min(max(number, 0), count - 1))
        else:
            self.select_row(None)

    def _remove_rows_of(self, path: str) -> None:
        if self._current is not None and self._current.source == path:
            self.select_row(None)
        self.request_model.remove_source(path)

    # drag and drop

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.open_files(paths)

    # ------------------------------------------------------------------ saving

    def save_result_dialog(self) -> None:
        row = self._current
        if row is None or row.result is None:
            self.report("warning", "Select a request with a result to save")
            return
        suggested = f"{row.label}.{row.result.strategy}.result.json".replace("/", "_")
        path, _ = QFileDialog.getSaveFileName(self, "Save result as", suggested, "Result JSON (*.json)")
        if path:
            self.save_result_to(path)

    def save_result_to(self, path: str) -> bool:
        """Write the selected result to ``path``; refuses any file that is open (opened files are never written)."""
        row = self._current
        if row is None or row.result is None:
            self.report("warning", "Select a request with a result to save")
            return False
        return self._write_result(row.result, path, f"{row.label} ({row.result.strategy})")

    def save_replayed_dialog(self) -> None:
        view = self._replay_view
        if view is None or view.result is None:
            self.report("warning", "Edit the replay first: there is no replayed result to save")
            return
        suggested = f"{self._current.label if self._current else 'request'}.replayed.result.json".replace("/", "_")
        path, _ = QFileDialog.getSaveFileName(self, "Save replayed result as", suggested, "Result JSON (*.json)")
        if path:
            self.save_replayed_to(path)

    def save_replayed_to(self, path: str) -> bool:
        """Write the replayed result to a new file: never over the opened one (or any open file)."""
        view = self._replay_view
        if view is None or view.result is None:
            self.report("warning", "Edit the replay first: there is no replayed result to save")
            return False
        return self._write_result(view.result, path, f"the replay of {self._current.label if self._current else ''}")

    def _write_result(self, result: core.AssemblyResult, path: str, what: str) -> bool:
        return self._write_text(result.to_json(), path, what)

    def _write_text(self, text: str, path: str, what: str) -> bool:
        """Write ``text`` to ``path`` atomically; refuses any file that is open (opened files are never written)."""
        target = Path(path).expanduser().resolve()
        protected = set(self._open) | {str(demo_request_path().resolve())}
        if str(target) in protected:
            self.report("error", f"{target}: not saved: this file is open in the inspector and is never overwritten; "
                                 "pick another name")
            return False
        try:
            write_atomically(target, text)
        except OSError as exc:
            self.report("error", f"{target}: not saved: {exc.strerror or exc}")
            return False
        self.report("info", f"Saved {what} to {target}")
        return True

    # ---- exporting

    def export_dialog(self) -> ExportDialog | None:
        """File ▸ Export…: kind, redaction and file; the export is written when the person presses Export."""
        row = self.shown_row
        if row is None or row.result is None:
            self.report("warning", "Select a request with a result to export")
            return None
        if self._export_dialog is not None:
            self._export_dialog.deleteLater()
        directory = str(Path(row.source).parent) if Path(row.source).parent.is_dir() else str(Path.home())
        dialog = ExportDialog(f"{row.label} ({row.result.strategy})", row.label, directory, self)
        dialog.accepted.connect(lambda d=dialog: self.export_to(d.path(), d.kind(), redact=d.redact()))
        self._export_dialog = dialog
        dialog.open()  # window-modal, but it never blocks the event loop
        return dialog

    def export_to(self, path: str, kind: str, *, redact: bool = False) -> bool:
        """Write the shown result (the replay while one is shown) as ``kind`` (a key of ``core.EXPORT_KINDS``)."""
        row = self.shown_row
        if row is None or row.result is None:
            self.report("warning", "Select a request with a result to export")
            return False
        try:
            text = core.export_text(row.result, kind, redact=redact, findings=row.findings)
        except (core.ContextInspectorError, ValueError) as exc:
            self.report("error", f"{row.label}: cannot export as {kind}: {exc}")
            return False
        what = f"{row.label} as {core.EXPORT_KINDS[kind][1]}" + (" (message content redacted)" if redact else "")
        return self._write_text(text, path, what)

    # ---- imported provider requests: context limit per model, recount, re-assemble

    def context_limit_for(self, model: str) -> int | None:
        """The context limit set for ``model`` (None: core's assumed size is used)."""
        return self._limits.get(model)

    def focus_context_limit(self) -> None:
        if self.import_bar.isVisible():
            self.import_bar.limit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            self.import_bar.limit.selectAll()
        else:
            self.report("warning", "Select an imported provider request to set its model's context limit")

    def set_context_limit(self, model: str, limit: int) -> None:
        """Use ``limit`` for every request of ``model`` (remembered for the next time one opens; 0 forgets
        it, so core's assumed size is used again); the open requests of that model are counted again off
        the GUI thread."""
        if limit > 0:
            self._limits[model] = limit
        else:
            self._limits.pop(model, None)
        if self._persist:
            if limit > 0:
                self._settings.set_context_limit(model, limit)
            else:
                self._settings.clear_context_limit(model)
        self._recount_stale()

    def _recount_stale(self) -> None:
        """Count again, off the GUI thread, every imported row counted under another limit than the one now
        set for its model (one job for all of them: a newer job supersedes an older one)."""
        limits = dict(self._limits)
        rows = [r for r in self.request_model.rows() if needs_recount(r, limits)]
        counter, lock = self._counter, self._cache.lock
        if not rows or counter is None:
            return
        self._show_busy(f"Counting {len(rows)} imported request{'s' if len(rows) != 1 else ''} again")

        def job() -> list[tuple[Row, Row]]:
            out = []
            for row in rows:
                with lock:
                    out.append((row, recount(row, counter, limits)))
            return out

        self._recounter.submit(job)

    def _on_recounted(self, value: object) -> None:
        self._hide_busy_if_idle()
        if isinstance(value, BaseException):
            self.report("error", f"Counting again failed: {type(value).__name__}: {value}")
            return
        changed = []
        for row, new in value:
            if self.request_model.row_number(row) >= 0:
                already = row.error if row.kind == "uncounted" else None
                row.absorb(new)
                changed.append(row)
                if row.kind == "uncounted" and row.error != already:
                    self.report("error", row.error or f"{row.label}: not counted")
        self.request_model.rows_changed(changed)
        if self._current is not None and any(r is self._current for r in changed):
            self.select_row(self._current, origin="read")

    def reassemble_current(self) -> None:
        """Re-assemble the selected imported request with the core assembler (off the GUI thread); the new
        row opens below it, in the replay panel."""
        row = self._current
        if row is not None and row.derived_from is not None:
            row = row.derived_from  # again, from the imported row (its limit may have changed)
        if row is None or row.imported is None:
            self.report("warning", "Select an imported provider request to re-assemble it")
            return
        self._restore_queue.clear()  # the person's own request goes first
        self._reassemble(row, restoring=False)

    def _restore_next(self) -> None:
        """Re-assemble the next row a reload is bringing back, one at a time (the job keeps only the newest)."""
        if self._restore_queue and self._reassembler.is_idle():
            self._reassemble(self._restore_queue.pop(0), restoring=True)

    def _reassemble(self, row: Row, *, restoring: bool) -> None:
        if row.result is None:
            self.report("error", f"Cannot re-assemble {row.label}: it was not counted ({row.error})")
            return
        counter, lock = self._counter, self._cache.lock
        if counter is None:
            self.report("error", "No token counter to assemble with (see the log)")
            return
        self._show_busy(f"Re-assembling {row.label}")

        def job() -> tuple[Row, Row, bool] | ReassemblyRefused:
            try:
                with lock:
                    return row, reassemble(row, counter), restoring
            except ReassemblyRefused as exc:  # expected: shown as a message, not logged as a failure
                return exc

        self._reassembler.submit(job)

    def _on_reassembled(self, value: object) -> None:
        self._hide_busy_if_idle()
        if isinstance(value, BaseException):
            self.report("error", str(value) if isinstance(value, core.ContextInspectorError)
                        else f"Re-assembly failed: {type(value).__name__}: {value}")
            self._restore_next()
            return
        anchor, row, restoring = value
        if self.request_model.row_number(anchor) < 0:
            self._restore_next()
            return  # its file was closed meanwhile
        for old in [r for r in self.request_model.rows() if r.derived_from is anchor]:
            self.request_model.remove_row(old)
        self.request_model.insert_after(anchor, row)
        if restoring:  # brought back by a reload: in its place, without taking the selection
            self.report("info", f"Re-assembled {anchor.label} again after the reload: {row.summary()}")
            self._restore_next()
            return
        self.select_row(row)
        self.replay_dock.show()
        self.replay_dock.raise_()
        outcome = row.summary()
        self.report("info", f"Re-assembled {anchor.label}: {outcome}")

    # ------------------------------------------------------------------ selection (the one state)

    @property
    def current_row(self) -> Row | None:
        return self._current

    @property
    def selection(self) -> tuple[str | None, str | None]:
        return self._selection

    def select_first_request(self) -> None:
        if self.request_proxy.rowCount():
            self.select_proxy_row(0)

    def select_proxy_row(self, number: int) -> None:
        index = self.request_proxy.index(number, 0)
        if index.isValid():
            self.request_view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            self.request_view.scrollTo(index)

    def step_request(self, delta: int) -> None:
        count = self.request_proxy.rowCount()
        if not count:
            return
        current = self.request_view.currentIndex()
        number = current.row() + delta if current.isValid() else 0
        self.select_proxy_row(max(0, min(count - 1, number)))

    def focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()

    def _proxy_row_of(self, row: Row) -> int:
        number = self.request_model.row_number(row)
        if number < 0:
            return -1
        return self.request_proxy.mapFromSource(self.request_model.index(number, 0)).row()

    def _list_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing:
            return
        source = self.request_proxy.mapToSource(current)
        self.select_row(self.request_model.row_at(source.row()) if source.isValid() else None, origin="list")

    def _tree_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        self.select_item(current.data(SECTION_ROLE), current.data(ITEM_ID_ROLE), origin="tree")

    def select_row(self, row: Row | None, *, origin: str = "") -> None:
        keep_item = self._selection if origin == "read" else (None, None)
        self._current = row
        self._selection = (None, None)
        if origin != "list":
            self._syncing = True
            try:
                if row is None:
                    self.request_view.selectionModel().clearSelection()
                else:
                    number = self._proxy_row_of(row)
                    if number >= 0:
                        index = self.request_proxy.index(number, 0)
                        self.request_view.selectionModel().setCurrentIndex(
                            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                            | QItemSelectionModel.SelectionFlag.Rows)
            finally:
                self._syncing = False
        if row is not None and row.pending:
            self._read_now(row)
        self._setup_replay(row)
        self._selection = keep_item
        self._refresh_view()
        has_result = row is not None and row.result is not None
        self.act_save.setEnabled(has_result)
        self.act_export.setEnabled(has_result)
        self.act_close.setEnabled(row is not None)
        imported = row is not None and (row.imported is not None or row.derived_from is not None)
        self.act_reassemble.setEnabled(imported)
        self.act_context_limit.setEnabled(row is not None and row.imported is not None)
        if row is not None and row.imported is not None:
            self.import_bar.show_row(row, self._limits.get(model_key(row.imported)))
            self.act_context_limit.setText(f"Context &Limit for {model_key(row.imported)}…")
        else:
            self.import_bar.show_row(None, None)
            self.act_context_limit.setText("Context &Limit for Model…")

    @property
    def shown_row(self) -> Row | None:
        """What the bar, the tree and the detail tabs show: the replayed result while there is one."""
        return self._replay_view if self._replay_view is not None else self._current

    def _refresh_view(self) -> None:
        """Every pane again from the selection state (a new row, or a new replay of it)."""
        shown = self.shown_row
        outcome = self._replay_outcome if self._replay_view is not None else None
        diff = outcome.diff if outcome is not None else None
        self._syncing = True
        try:
            self.tree_model.set_result(shown.result if shown is not None else None, diff=diff,
                                       recorded=self._current.result if self._current is not None else None)
            self.tree.setColumnHidden(SectionTreeModel.C_CHANGE, diff is None)
            self.only_changes.setVisible(diff is not None)
            self.act_only_changes.setEnabled(diff is not None)
            self._expand_tree()
            for col in (SectionTreeModel.C_NAME, SectionTreeModel.C_TOKENS):
                self.tree.resizeColumnToContents(col)
            if diff is not None:
                self.tree.resizeColumnToContents(SectionTreeModel.C_CHANGE)
        finally:
            self._syncing = False
        self._show_current()
        self._update_status()

    def _show_current(self) -> None:
        row, shown = self._current, self.shown_row
        if self._replay_view is not None and row is not None and shown is not None:
            outcome = self._replay_outcome
            newly = frozenset((c.section, c.id) for c in outcome.diff.changes if c.kind == "newly dropped") \
                if outcome is not None and outcome.diff is not None else frozenset()
            self.bar.show_comparison(row, shown, newly)
        else:
            self.bar.show_row(row)
        self.detail.show_row(shown, self._counter, self._cache.lock)
        section, item_id = self._selection
        if section is not None:
            self.select_item(section, item_id, origin="refresh")

    def _tree_index(self, section: str, item_id: str | None) -> QModelIndex:
        return self.tree_proxy.index_for(section, item_id)

    def select_item(self, section: str | None, item_id: str | None, *, origin: str = "") -> None:
        if self._current is None or section is None:
            return
        if item_id is not None and not self.tree_model.index_for(section, item_id).isValid():
            item_id = None  # a finding may name an item the trace does not list; fall back to its section
        self._selection = (section, item_id)
        if origin != "tree":
            index = self._tree_index(section, item_id)
            if index.isValid():
                self._syncing = True
                try:
                    self.tree.selectionModel().setCurrentIndex(
                        index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                    self.tree.scrollTo(index)
                finally:
                    self._syncing = False
        self.bar.highlight_section(section)
        self.detail.show_item(section, item_id)
        if origin not in ("request", "audit"):
            self.detail.request.select_item(section, item_id)

    def _expand_tree(self) -> None:
        """Every section open; while a replay is shown, only the sections it changed (and the selected
        one), so the changes are what the eye lands on."""
        diff = self.tree_model.diff
        if diff is None or self.tree_proxy.only_changes:
            self.tree.expandAll()
            return
        changed = {c.section for c in diff.changes} | {self._selection[0]}
        for row in range(self.tree_proxy.rowCount()):
            index = self.tree_proxy.index(row, 0)
            self.tree.setExpanded(index, index.data(SECTION_ROLE) in changed)

    def _only_changes_toggled(self, on: bool) -> None:
        self.tree_proxy.set_only_changes(on)
        self._expand_tree()
        section, item_id = self._selection
        if section is not None:
            self.select_item(section, item_id, origin="refresh")

    # ------------------------------------------------------------------ replay

    def _setup_replay(self, row: Row | None) -> None:
        """Point the replay at ``row``: the panel shows its recorded values (or why it is read-only).
        The same recording read again (a reload, a new counter) keeps the edits the panel holds."""
        if self.replay_panel.base is not None and self._replay_key is not None:
            self._kept_edits = (self._replay_key, self.replay_panel.edits())
        key = (row.source, row.index, row.strategy) if row is not None else None
        if key is not None:
            self._replay_key = key
        self._replay_view = None
        self._replay_outcome = None
        self.replay_panel.set_replayed(False)
        self.act_save_replayed.setEnabled(False)
        if row is None:
            self.replay.set_target(None, self._counter)
            self.replay_panel.set_read_only("Select a request or a recorded result to replay it under other limits.")
            return
        if row.imported is not None:
            self.replay.set_target(None, self._counter)
            self.replay_panel.set_read_only(
                f"{row.label} is a provider's request: there is no assembly to replay. Re-assemble it "
                f"({self.act_reassemble.shortcut().toString()}) to see what the core assembler keeps under its "
                "context limit, then edit the limits here.")
            return
        try:
            target = ReplayTarget(row)
        except core.ContextInspectorError as exc:  # ReplayUnavailable: opens read-only
            self.replay.set_target(None, self._counter)
            self.replay_panel.set_read_only(f"Read-only: {exc}.")
            return
        self.replay.set_target(target, self._counter)
        self.replay_panel.load(target.base(), self._replay_note(row, target))
        kept_key, kept = self._kept_edits
        if kept_key == key and not kept.is_empty():
            self.replay_panel.apply_edits(kept)
        self._replay_edits_changed()

    @staticmethod
    def _replay_note(row: Row, target: ReplayTarget) -> str:
        what = {"plan": "plan request", "rag": "RAG windows request", "request": "request"}.get(
            row.entry_kind or "", "recorded result")
        if row.result is None:
            return (f"{row.label}: the recording was rejected ({row.summary().removeprefix('rejected: ')}). "
                    "Edit the limits to see what would fit.")
        source = "its plan request" if target.is_plan else "its request"
        return (f"Replaying {row.label} ({row.strategy}, from a {what}) from {source} with the current counter; "
                "the tree and the bars mark what changes against the recording.")

    def _replay_edits_changed(self) -> None:
        """The panel's controls moved (or the row or the counter changed): replay, or show the recording."""
        target = self.replay.target
        if target is None or self._counter is None:
            return
        edits = self.replay_panel.edits()
        self.replay_panel.whatif.set_edit_limit(self.replay_panel.limit.value())
        if edits.is_empty() and not target.counter_differs(self._counter):
            self.replay.cancel()
            self.replay_panel.show_summary("Showing the recording: no edits yet.")
            if self._replay_view is not None:
                self._replay_view = None
                self._replay_outcome = None
                self.replay_panel.set_replayed(False)
                self.act_save_replayed.setEnabled(False)
                self._refresh_view()
        else:
            self.replay.request(edits)
        if self.replay_dock.isVisible():
            self.replay.request_sweep(edits)

    def _replay_dock_shown(self, visible: bool) -> None:
        if visible and self.replay.target is not None:
            self.replay.request_sweep(self.replay_panel.edits())

    def _on_replayed(self, outcome: ReplayOutcome) -> None:
        row, target = self._current, self.replay.target
        if row is None or target is None or target.row is not row:
            return
        if not outcome.ok:
            # shown in place; the last good view stays
            self.replay_panel.show_problem(outcome.error or "the replay failed")
            self.report("info", f"Replay of {row.label}: {outcome.error}")
            return
        assert outcome.result is not None
        self._replay_outcome = outcome
        self._replay_view = Row(source=row.source, index=row.index, line=row.line, kind="replayed",
                                label=f"{row.label} (replayed)", request=outcome.result.request,
                                result=outcome.result, findings=outcome.findings,
                                counter_name=self._counter.name if self._counter is not None else None,
                                entry_kind=row.entry_kind, plan_request=row.plan_request, rag=row.rag)
        self.replay_panel.set_replayed(True)
        self.act_save_replayed.setEnabled(True)
        self.replay_panel.show_summary(outcome_summary(row.result, outcome.result, outcome.diff))
        self._refresh_view()

    def _on_sweep(self, points: list) -> None:
        target = self.replay.target
        if target is None:
            return
        base = self.replay_panel.base
        recorded = target.recorded
        order = [e.section for e in recorded.trace] if recorded is not None else []
        self.replay_panel.whatif.set_points(points, base.context_limit if base is not None else None, order)
        self.replay_panel.whatif.set_edit_limit(self.replay_panel.limit.value())
        if points:
            top = max(p.value for p in points)
            if top > self.replay_panel.limit.slider.maximum():
                self.replay_panel.limit.slider.setMaximum(top)

    def reset_replay(self) -> None:
        """Every control back to the recorded value: the view shows the recording again."""
        target = self.replay.target
        if target is None or self._current is None:
            return
        self.replay_panel.load(target.base(), self._replay_note(self._current, target))
        self._replay_edits_changed()

    @property
    def replay_outcome(self) -> ReplayOutcome | None:
        """The replay shown now (None while the recording is)."""
        return self._replay_outcome if self._replay_view is not None else None

    def select_finding(self, finding: core.Finding) -> None:
        if finding.section is not None:
            self.select_item(finding.section, finding.item_id, origin="audit")
        placed = self.detail.request.select_finding(finding)
        if not placed and finding.section is not None:
            self.detail.request.select_item(finding.section, finding.item_id)
        self.detail.setCurrentIndex(DetailTabs.REQUEST)

    # ------------------------------------------------------------------ status, title, about

    def _update_title(self) -> None:
        names = [Path(p).name for p in self._open]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        self.setWindowTitle(f"{shown} — {APP_NAME}" if names else APP_NAME)

    def _update_status(self) -> None:
        row = self._current
        identity = None
        if row is not None and row.result is not None and row.result.counter is not None:
            identity = row.result.counter
        elif self._counter is not None:
            identity = self._counter.identity
        if self._counter is not None:
            current = self._counter.identity
            self.replay_panel.set_counter_text(current.model or current.name,
                                               f"{current.name} ({current.kind})\nmodel {current.model}\n"
                                               f"revision {current.revision}\n"
                                               f"template sha256 {current.template_sha256}")
        if identity is not None:
            sha = (identity.template_sha256 or "")[:12] or "none"
            self.counter_label.setText(f"Counter: {identity.model or identity.name} · "
                                       f"{identity.revision or 'no revision'} · template {sha}")
            self.counter_label.setToolTip(f"{identity.name} ({identity.kind})\nmodel {identity.model}\n"
                                          f"revision {identity.revision}\ntemplate sha256 {identity.template_sha256}"
                                          + (f"\n{identity.notes}" if identity.notes else ""))
        elif self._counter_pending:
            self.counter_label.setText(f"Counter: building {self._counter_spec}…")
        else:
            self.counter_label.setText(f"Counter: unavailable ({self._counter_spec})")
        shown = self._replay_view
        if shown is not None and shown.result is not None:
            recorded = f" (recorded {row.input_tokens} / {row.allowance})" if row is not None and \
                row.input_tokens is not None else ""
            self.tokens_label.setText(f"Replayed: input {shown.result.input_tokens} / {shown.result.input_budget} "
                                      f"tokens{recorded}")
        elif row is not None and row.input_tokens is not None:
            if row.kind == "rejected":
                self.tokens_label.setText(f"Rejected: needs {row.input_tokens}, allowance {row.allowance}")
            elif row.count_drift is not None:
                theirs = (row.result.model_extra or {}).get("provider_input_tokens")
                self.tokens_label.setText(f"Input {row.input_tokens} / {row.allowance} tokens · provider {theirs} · "
                                          f"drift {row.count_drift:+d}")
            else:
                self.tokens_label.setText(f"Input {row.input_tokens} / {row.allowance} tokens")
        else:
            self.tokens_label.setText("")
        # a result the fast count handed to the reference method says so (and why, on hover)
        result = shown.result if shown is not None and shown.result is not None else (row.result if row else None)
        note = getattr(result, "counting_note", None) if result is not None else None
        if note and self.tokens_label.text():
            self.tokens_label.setText(self.tokens_label.text() + " · counted by the reference method")
        self.tokens_label.setToolTip(note or "")
        if row is not None:
            where = f"File: {row.where}"
            if row.format_name:
                info = row.import_source.info if row.import_source is not None else None
                where += f" · {format_title(info.name if info else row.format_name)} (read as {row.format_name})"
            self.file_label.setText(where)
        else:
            total = self.request_model.rowCount()
            self.file_label.setText(f"{total} rows loaded" if total else "No file open")

    def about_text(self) -> str:
        import pyqtgraph

        counter = self._counter.identity if self._counter is not None else None
        counter_text = (f"{counter.name} ({counter.model}, {counter.revision})" if counter is not None
                        else f"{self._counter_spec} (not built yet)")
        result_format = getattr(core, "RESULT_FORMAT", None)
        if result_format is None:
            from core.result import RESULT_FORMAT as result_format
        return (f"{APP_NAME} {app_version()}\n"
                "See exactly what a model request carried, item by item, and why.\n\n"
                f"Core result format: {result_format}\n"
                f"PySide6: {pyside_version}\nQt: {qVersion()}\npyqtgraph: {pyqtgraph.__version__}\n"
                f"Counter: {counter_text}")

    def show_about(self) -> None:
        # non-modal: it never blocks the event loop (or a test)
        if self._about is None:
            self._about = QMessageBox(QMessageBox.Icon.Information, f"About {APP_NAME}", "", QMessageBox.StandardButton.Ok,
                                      self)
            self._about.setWindowModality(Qt.WindowModality.NonModal)
        self._about.setText(self.about_text())
        self._about.show()

    # ------------------------------------------------------------------ screenshots and lifetime

    def wait_until_idle(self, timeout_s: float = 120.0) -> bool:
        """Process events until loading is done (for --screenshot, where there is no person waiting)."""
        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while not self.is_idle():
            if time.monotonic() > deadline:
                return False
            QApplication.processEvents()
            time.sleep(0.005)
        QApplication.processEvents()
        return True

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.detail.refresh()

    def shutdown(self) -> None:
        """Stop background work and wait for it, so no thread outlives the window."""
        self.cancel_loading()
        self.replay.shutdown()
        self._recounter.stop()
        self._reassembler.stop()
        for thread in (self._thread, self._counter_thread, *self._read_threads):
            if thread is not None and thread.isRunning():
                thread.wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        self.shutdown()
        super().closeEvent(event)
