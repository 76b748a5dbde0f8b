"""The main window: it lays out the panes and docks, holds the one selection state, and connects the
panes to each other and to the controllers.

Panes never talk to each other: each reports what the person picked to the window, which updates
the selection and then every pane. Controllers (opening files, the counter, imported requests, the
replay, saving) do the work with the core and the workers and report back through the window.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMessageBox, QSplitter, QWidget

import core

from . import APP_NAME
from .controllers.calls import ControllerCalls
from .controllers.counter import CounterController
from .controllers.experiments import ExperimentsController
from .controllers.imports import ImportController
from .controllers.opening import Opener
from .controllers.replay import ReplayWiring
from .controllers.session import SessionController
from .controllers.sweep import SweepController
from .document import Row
from .document.imported import model_key
from .files.recent import RecentMenu
from .files.saving import Saver
from .files.settings import Settings, restore_window, save_window
from .help import HelpSheet, about_box, about_text
from .layout import add_dock, build_panes
from .menus import build_actions, build_menus
from .panes.detail import DetailTabs
from .workers import CounterCache, ReplayController, shared_counter_cache

log = logging.getLogger("inspector")


class MainWindow(ControllerCalls, QMainWindow):
    def __init__(self, *, counter_cache: CounterCache | None = None, settings: Settings | None = None,
                 persist: bool = True, counter_spec: str | None = None, warm_workers: bool = False) -> None:
        """``warm_workers``: start the worker processes (``workers.readpool``) as soon as the counter is built, as
        the app does, rather than at the first replay or large file (tests leave them to start when needed)."""
        super().__init__()
        self.warm_workers = warm_workers
        self.setWindowTitle(APP_NAME)
        self.setAccessibleName(APP_NAME)
        self.setAcceptDrops(True)
        self.counter_cache = counter_cache or shared_counter_cache()
        self.settings = settings or Settings()
        self.persist = persist
        self._current: Row | None = None
        self._selection: tuple[str | None, str | None] = (None, None)
        self.messages: list[tuple[str, str]] = []
        self._about: QMessageBox | None = None
        self._help: HelpSheet | None = None
        self.replay = ReplayController(self.counter_cache.lock, self)

        self._build_panes()
        self.counters = CounterController(self, counter_spec or self.settings.last_counter())
        self.opener = Opener(self)
        self.sweeps = SweepController(self)
        self.imports = ImportController(self)
        self.sessions = SessionController(self)
        self.experiments = ExperimentsController(self)
        self.saver = Saver(self)
        build_actions(self)
        self.replaying = ReplayWiring(self)
        build_menus(self)
        self.recent = RecentMenu(self.recent_menu, self.settings, self.open_files)
        self.recent.rebuild()
        self._connect()
        self._restore_state()
        self.update_status()
        self.counters.start(self.counters.spec, reload_after=False, startup=True)

    # ------------------------------------------------------------------ construction

    def _build_panes(self) -> None:
        build_panes(self)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        return add_dock(self, title, name, widget, area)

    def _connect(self) -> None:
        self.message_bar.log_button.clicked.connect(self._show_log)
        self.requests.rowPicked.connect(lambda row: self.select_row(row, origin="list"))
        self.sections.itemPicked.connect(lambda section, item: self.select_item(section, item, origin="tree"))
        self.sections.onlyChangesToggled.connect(self._only_changes_toggled)
        self.bar.segmentClicked.connect(lambda section, item: self.select_item(section, item, origin="bar"))
        for chart in (self.bar, self.replay_panel.whatif):  # PNG/SVG for slides
            chart.exported.connect(lambda path: self.report("info", f"Chart saved to {path}"))
            chart.exportFailed.connect(lambda why: self.report("error", f"Chart not saved: {why}"))
        self.detail.request.regionClicked.connect(lambda s, i: self.select_item(s, i, origin="request"))
        self.detail.audit.findingActivated.connect(self.select_finding)
        self.cancel_button.clicked.connect(self.cancel_loading)
        self.replay_panel.set_counter_actions(self.act_default_counter, self.act_counter)
        self.replay_panel.saveRequested.connect(self.saver.save_replayed_dialog)
        self.import_bar.limitChanged.connect(self.imports.set_context_limit)
        self.import_bar.reassembleRequested.connect(self.reassemble_current)

    # ------------------------------------------------------------------ settings

    def _splitters(self) -> dict[str, QSplitter]:
        return {"splitter": self.splitter, "right_splitter": self.right_splitter}

    def _restore_state(self) -> None:
        if self.persist:
            restore_window(self, self.settings, self._splitters())
            self.requests.set_hidden_columns(self.settings.hidden_columns())
            self.requests.columnsChanged.connect(self.settings.set_hidden_columns)

    def save_state(self) -> None:
        if self.persist:
            save_window(self, self.settings, self._splitters())

    # ------------------------------------------------------------------ messages and status

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
            self.status.show_message(text, 5000)

    def _show_log(self) -> None:
        self.log_dock.show()
        self.log_dock.raise_()

    def update_title(self) -> None:
        names = [Path(p).name for p in self.opener.open_paths]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        self.setWindowTitle(f"{shown} — {APP_NAME}" if names else APP_NAME)

    def update_status(self) -> None:
        row, counter = self._current, self.counter
        if counter is not None:
            current = counter.identity
            self.replay_panel.set_counter_text(current.model or current.name,
                                               f"{current.name} ({current.kind})\nmodel {current.model}\n"
                                               f"revision {current.revision}\n"
                                               f"template sha256 {current.template_sha256}")
        identity = row.result.counter if row is not None and row.result is not None and \
            row.result.counter is not None else (counter.identity if counter is not None else None)
        self.status.show_counter(identity, self.counters.spec, self.counters.pending)
        self.status.show_tokens(row, self.replaying.view)
        self.status.show_file(row, self.request_model.rowCount())

    def hide_busy_if_idle(self) -> None:
        if not self.opener.is_busy() and not self.counters.pending and self.imports.is_idle():
            self.status.hide_busy()
            self.act_cancel.setEnabled(False)

    def about_text(self) -> str:
        return about_text(self.counter, self.counters.spec)

    def show_help(self) -> HelpSheet:
        if self._help is None:
            self._help = HelpSheet(self)
        self._help.show_for(self.actions())
        return self._help

    def find(self) -> None:
        """Ctrl+F: find in the rendered request or the JSON when one has the focus; else filter the requests."""
        focus = QApplication.focusWidget()
        if focus is not None and self.detail.isAncestorOf(focus) and self.detail.find_bar() is not None:
            self.detail.open_find()
        else:
            self.requests.focus_filter()

    def show_about(self) -> None:
        if self._about is None:
            self._about = about_box(self)
        self._about.setText(self.about_text())
        self._about.show()

    def is_idle(self, *, ignore_sweep: bool = False) -> bool:
        return (not self.opener.is_busy() and not self.counters.pending and self.replay.is_idle()
                and self.replaying.is_idle() and self.imports.is_idle() and self.sessions.is_idle()
                and self.experiments.is_idle() and self.detail.request.is_idle()
                and (ignore_sweep or self.sweeps.is_idle()))

    # ------------------------------------------------------------------ selection (the one state)

    @property
    def current_row(self) -> Row | None:
        return self._current

    @property
    def selection(self) -> tuple[str | None, str | None]:
        return self._selection

    @property
    def shown_row(self) -> Row | None:
        """What the bar, the tree and the detail tabs show: the replayed result while there is one."""
        view = self.replaying.view
        return view if view is not None else self._current

    def _set_selection(self, section: str | None, item_id: str | None) -> None:
        self._selection = (section, item_id)
        self.sections.selected_section = section

    def select_first_request(self) -> None:
        self.requests.select_first()

    def select_proxy_row(self, number: int) -> None:
        self.requests.select_proxy_row(number)

    def step_request(self, delta: int) -> None:
        self.requests.step(delta)

    def select_row(self, row: Row | None, *, origin: str = "") -> None:
        if origin not in ("read", "opened", "closed"):  # (the rows' arrival, or their file's rows gone)
            self.opener.person_selected()
        keep_item = self._selection if origin == "read" else (None, None)
        self._current = row
        self._set_selection(None, None)
        if origin != "list":
            self.requests.show_row(row)
        if row is not None and row.pending:
            self.opener.read_now(row)
        self.replaying.setup(row)
        self._set_selection(*keep_item)
        if origin in ("read", "opened"):  # the row's content arrived, or a file's first row (no click waits): the
            self.replaying.redraw_in_steps(bar_now=False)  # list's change painted first, then each pane in its turn
        else:
            self.refresh_view()
        has_result = row is not None and row.result is not None
        self.act_save.setEnabled(has_result)
        self.act_export.setEnabled(has_result)
        self.act_close.setEnabled(row is not None)
        imported = row is not None and (row.imported is not None or row.derived_from is not None)
        self.act_reassemble.setEnabled(imported)
        self.act_context_limit.setEnabled(row is not None and row.imported is not None)
        if row is not None and row.imported is not None:
            self.import_bar.show_row(row, self.imports.limits.get(model_key(row.imported)))
            self.act_context_limit.setText(f"Context &Limit for {model_key(row.imported)}…")
        else:
            self.import_bar.show_row(None, None)
            self.act_context_limit.setText("Context &Limit for Model…")
        self.sessions.row_selected(row)

    def refresh_view(self) -> None:
        """Every pane again from the selection state (a new row, or a new replay of it)."""
        self.refresh_tree()
        self.refresh_bar()
        self.refresh_details()

    def refresh_tree(self) -> None:
        diff = self.replay_outcome.diff if self.replay_outcome is not None else None
        self.sections.show_result(self.shown_row.result if self.shown_row is not None else None, diff=diff,
                                  recorded=self._current.result if self._current is not None else None)
        self.act_only_changes.setEnabled(diff is not None)

    def refresh_bar(self) -> None:
        row, shown, diff = self._current, self.replaying.view, getattr(self.replay_outcome, "diff", None)
        if shown is None or row is None:
            self.bar.show_row(row)
        else:
            self.bar.show_comparison(row, shown, frozenset() if diff is None else frozenset(
                (c.section, c.id) for c in diff.changes if c.kind == "newly dropped"))

    def refresh_details(self) -> None:
        """The detail tabs, the selected item in every pane and the status line (after the tree and bar)."""
        self.detail.show_row(self.shown_row, self.counter, self.counter_cache.lock)
        section, item_id = self._selection
        if section is not None:
            self.select_item(section, item_id, origin="refresh")
        self.update_status()

    def select_item(self, section: str | None, item_id: str | None, *, origin: str = "") -> None:
        if self._current is None or section is None:
            return
        if item_id is not None and not self.tree_model.index_for(section, item_id).isValid():
            item_id = None  # a finding may name an item the trace does not list; fall back to its section
        self._set_selection(section, item_id)
        if origin != "tree":
            self.sections.show_item(section, item_id)
        self.bar.highlight_section(section)
        self.detail.show_item(section, item_id)
        if origin not in ("request", "audit"):
            self.detail.request.select_item(section, item_id)

    def _only_changes_toggled(self, _on: bool) -> None:
        section, item_id = self._selection
        if section is not None:
            self.select_item(section, item_id, origin="refresh")

    def select_finding(self, finding: core.Finding) -> None:
        if finding.section is not None:
            self.select_item(finding.section, finding.item_id, origin="audit")
        placed = self.detail.request.select_finding(finding)
        if not placed and finding.section is not None:
            self.detail.request.select_item(finding.section, finding.item_id)
        self.detail.setCurrentIndex(DetailTabs.REQUEST)

    # ------------------------------------------------------------------ drag and drop, lifetime

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

    def wait_until_idle(self, timeout_s: float = 120.0) -> bool:
        """Process events until loading is done (for --screenshot, where there is no person waiting)."""
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
        self.imports.stop()
        self.sessions.stop()
        self.detail.request.stop()
        self.experiments.wait()
        self.opener.wait()
        self.counters.wait()
        self.sweeps.wait()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        self.shutdown()
        super().closeEvent(event)
