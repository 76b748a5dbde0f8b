"""The session pane: a trace's model calls as a timeline, the list of calls beside the trace's span
tree, and the diff of two calls (a call against its predecessor by default).

It shows what the window gives it (``show_session``, ``show_call``, ``show_diff``) and reports what
the person picked: a call (``callPicked``: a bar, a row or a model-call span) or a pair of calls to
compare (``diffRequested``)."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QSpinBox, QSplitter,
                               QTableView, QTreeView, QVBoxLayout, QWidget)

import core

from ..models.session import CALL_ROLE, SessionCallsModel, SessionDiffModel, SpanTreeModel
from .sessionchart import SessionChart


class SessionPane(QWidget):
    callPicked = Signal(int)
    diffRequested = Signal(int, int)  # (earlier, later) call indices

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Session")
        self.session: core.Session | None = None
        self._syncing = False
        self.title = QLabel("<b>Session</b>", self)
        self.x_axis = QComboBox(self)
        self.x_axis.addItems(["x: call number", "x: time"])
        self.x_axis.setAccessibleName("Timeline x axis")
        self.chart = SessionChart(self)

        self.calls_model = SessionCallsModel(self)
        self.calls = QTableView(self)
        self.calls.setModel(self.calls_model)
        self.calls.setAccessibleName("Session calls")
        self.calls.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.calls.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.calls.verticalHeader().hide()
        self.calls.setWordWrap(False)
        self.calls.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.spans_model = SpanTreeModel(self)
        self.spans = QTreeView(self)
        self.spans.setModel(self.spans_model)
        self.spans.setAccessibleName("Span tree")
        self.spans.setUniformRowHeights(True)
        self.spans.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)

        self.earlier, self.later = QSpinBox(self), QSpinBox(self)
        for box, name in ((self.earlier, "Diff: earlier call"), (self.later, "Diff: later call")):
            box.setMinimum(1)
            box.setAccessibleName(name)
        self.diff_caption = QLabel("", self)
        self.diff_model = SessionDiffModel(self)
        self.diff = QTableView(self)
        self.diff.setModel(self.diff_model)
        self.diff.setAccessibleName("Call diff")
        self.diff.verticalHeader().hide()
        self.diff.setWordWrap(False)
        self.diff.horizontalHeader().setStretchLastSection(True)
        self.diff.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)

        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.x_axis)
        lists = QSplitter(Qt.Orientation.Horizontal, self)
        lists.addWidget(self.calls)
        lists.addWidget(self.spans)
        lists.setStretchFactor(0, 3)
        lists.setStretchFactor(1, 2)
        diff_box = QWidget(self)
        diff_layout = QVBoxLayout(diff_box)
        diff_layout.setContentsMargins(0, 0, 0, 0)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Diff: call", diff_box))
        pick.addWidget(self.earlier)
        pick.addWidget(QLabel("→ call", diff_box))
        pick.addWidget(self.later)
        pick.addWidget(self.diff_caption, 1)
        diff_layout.addLayout(pick)
        diff_layout.addWidget(self.diff, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        for widget, stretch in ((self.chart, 3), (lists, 2), (diff_box, 2)):
            self.splitter.addWidget(widget)
            self.splitter.setStretchFactor(self.splitter.count() - 1, stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(head)
        layout.addWidget(self.splitter, 1)

        self.x_axis.currentIndexChanged.connect(lambda n: self.chart.set_by_time(n == 1))
        self.chart.callPicked.connect(self.callPicked)
        self.calls.selectionModel().currentRowChanged.connect(self._row_changed)
        self.spans.selectionModel().currentChanged.connect(self._span_changed)
        self.earlier.valueChanged.connect(self._pair_changed)
        self.later.valueChanged.connect(self._pair_changed)

    # ---- what the window shows

    def show_session(self, session: core.Session | None, note: str = "") -> None:
        self.session = session
        self.calls_model.set_session(session)
        self.spans_model.set_session(session)
        self.spans.expandAll()
        self.chart.show_session(session)
        self.diff_model.set_diff(None)
        self.diff_caption.setText("")
        if session is None:
            self.title.setText(f"<b>Session</b> {note}")
            return
        self.title.setText(f"<b>Session</b> of {session.path.rsplit('/', 1)[-1]}: {len(session.calls)} calls, "
                           f"counted with {session.counter_name}")
        with QSignalBlocker(self.earlier), QSignalBlocker(self.later):
            for box in (self.earlier, self.later):
                box.setMaximum(max(1, len(session.calls)))

    def show_call(self, index: int | None) -> None:
        """Select call ``index`` in the timeline, the list and the span tree, and ask for its diff with
        its predecessor (none for the first call of a conversation)."""
        if self.session is None or index is None or not 0 <= index < len(self.session.calls):
            self.chart.select_call(None)
            return
        self._syncing = True
        try:
            self.chart.select_call(index)
            self.calls.selectionModel().setCurrentIndex(
                self.calls_model.index(index, 0), self.calls.selectionModel().SelectionFlag.ClearAndSelect
                | self.calls.selectionModel().SelectionFlag.Rows)
            self.calls.scrollTo(self.calls_model.index(index, 0))
            span = self.spans_model.index_of_call(index)
            if span.isValid():
                self.spans.setCurrentIndex(span)
                self.spans.scrollTo(span)
            previous = self.session.calls[index].previous
            with QSignalBlocker(self.earlier), QSignalBlocker(self.later):
                self.earlier.setValue((previous if previous is not None else index) + 1)
                self.later.setValue(index + 1)
        finally:
            self._syncing = False
        if previous is None:
            self.diff_model.set_diff(None)
            self.diff_caption.setText(f"call {index + 1} starts a conversation: nothing earlier to compare")
        else:
            self.diffRequested.emit(previous, index)

    def show_diff(self, diff: core.CallDiff | None, note: str = "") -> None:
        self.diff_model.set_diff(diff)
        for col in (0, 1, 2, 4, 5):
            self.diff.resizeColumnToContents(col)
        if diff is None:
            self.diff_caption.setText(note)
            return
        prefix = "not counted" if diff.prefix_tokens is None else f"{diff.prefix_tokens:,} tokens"
        self.diff_caption.setText(f"common prefix {prefix}; +{diff.appended_tokens:,} added, "
                                  f"−{diff.removed_tokens:,} removed, ~{diff.rewritten_tokens:,} rewritten")

    # ---- what the person picked

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._syncing and current.isValid():
            self.callPicked.emit(current.row())

    def _span_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        call = current.data(CALL_ROLE) if current.isValid() else None
        if not self._syncing and call is not None:
            self.callPicked.emit(int(call))

    def _pair_changed(self, _value: int) -> None:
        if self.session is not None and not self._syncing:
            self.diffRequested.emit(self.earlier.value() - 1, self.later.value() - 1)
