"""The session of the selected row's file: opened (``core.open_session``) off the GUI thread when the
Session dock is shown, kept in step with the selection, and the diff of any two of its calls.

A call and a row of the requests list are the same model call when they come from the same file and
record the same span (or, without span ids, the same place in the file)."""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

import core

from ..document import Row
from ..workers import LatestJob

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


def same_call(request: core.ImportedRequest, other: core.ImportedRequest) -> bool:
    a, b = request.recorded, other.recorded
    return (a.span_id, a.source_place, request.label) == (b.span_id, b.source_place, other.label)


class SessionController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.session: core.Session | None = None
        self.loading: str | None = None  # the path being opened as a session
        self._opener = LatestJob(self)
        self._differ = LatestJob(self)
        self._opener.finished.connect(self._opened)
        self._differ.finished.connect(self._compared)
        window.session_dock.visibilityChanged.connect(lambda shown: shown and self.row_selected(window.current_row))
        window.session_pane.callPicked.connect(self.pick_call)
        window.session_pane.diffRequested.connect(self.compare)
        window.import_bar.limitChanged.connect(self._limit_changed)
        self.model: str | None = None  # the model whose context limit is the session's window

    def is_idle(self) -> bool:
        return self._opener.is_idle() and self._differ.is_idle()

    def stop(self) -> None:
        self._opener.stop()
        self._differ.stop()

    # ---- following the selection

    def row_selected(self, row: Row | None) -> None:
        if not self.window.session_dock.isVisible() or row is None or row.imported is None:
            return
        if self.session is not None and self.session.path == row.source:
            self.window.session_pane.show_call(self.call_of(row))
        elif self.loading != row.source:
            self.open(row.source)

    def call_of(self, row: Row) -> int | None:
        if self.session is None or row.imported is None or row.source != self.session.path:
            return None
        return next((c.index for c in self.session.calls if same_call(c.request, row.imported)), None)

    def open(self, path: str) -> None:
        counter, lock = self.window.counter, self.window.counter_cache.lock
        if counter is None:
            self.window.session_pane.show_session(None, "(no counter yet)")
            return
        limits = dict(self.window.imports.limits)
        self.loading = path
        self.window.session_pane.show_session(None, f"(opening {path.rsplit('/', 1)[-1]}…)")

        def job() -> tuple[core.Session, str | None] | Exception:
            try:
                imported = core.import_file(path)
                models = Counter(r.recorded.model for r in imported.requests if r.recorded.model)
                model = models.most_common(1)[0][0] if models else None
                with lock:
                    return core.session_from_import(imported, counter, context_window=limits.get(model or "")), model
            except core.ContextInspectorError as exc:
                return exc

        self._opener.submit(job)

    def _opened(self, value: object) -> None:
        path, self.loading = self.loading, None
        if isinstance(value, Exception):
            self.session = None
            self.window.session_pane.show_session(None, "(could not be opened)")
            self.window.report("error", f"Session of {path}: {value}")
            return
        assert isinstance(value, tuple)
        self.session, self.model = value
        self._show()

    def _show(self) -> None:
        self.window.session_pane.show_session(self.session)
        current = self.window.current_row
        if current is not None:
            self.window.session_pane.show_call(self.call_of(current))

    def _limit_changed(self, model: str, limit: int) -> None:
        """The context limit set for the session's model is its window."""
        if self.session is not None and model == self.model:
            self.session.context_window = limit if limit > 0 else None
            self._show()

    # ---- what the person picked in the pane

    def pick_call(self, index: int) -> None:
        if self.session is None or not 0 <= index < len(self.session.calls):
            return
        request = self.session.calls[index].request
        row = next((r for r in self.window.request_model.rows()
                    if r.source == self.session.path and r.imported is not None and same_call(r.imported, request)),
                   None)
        if row is not None:
            self.window.select_row(row, origin="session")
        else:
            self.window.session_pane.show_call(index)

    def compare(self, earlier: int, later: int) -> None:
        session, lock = self.session, self.window.counter_cache.lock
        if session is None:
            return

        def job() -> core.CallDiff | Exception:
            with lock:
                try:
                    return session.compare(earlier, later)
                except (ValueError, IndexError) as exc:
                    return exc

        self._differ.submit(job)

    def _compared(self, value: object) -> None:
        if isinstance(value, Exception):
            self.window.session_pane.show_diff(None, str(value))
        else:
            self.window.session_pane.show_diff(value)  # type: ignore[arg-type]
