"""The requests pane: the filter box, the "has drops" and "audit errors" toggles, and the list itself.

It reports the row the person picked (``rowPicked``) and shows the row the window selected
(``show_row``) without reporting it back.
"""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QCheckBox, QHBoxLayout, QLabel, QLineEdit, QTableView, QVBoxLayout, \
    QWidget

from ..document import Row
from ..models import RequestFilterProxy, RequestListModel

SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows


class RequestListPane(QWidget):
    rowPicked = Signal(object)  # the Row the person made current, or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._syncing = False
        self.model = RequestListModel(self)
        self.proxy = RequestFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter requests (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter requests")
        self.has_drops = QCheckBox("Has drops", self)
        self.has_drops.setAccessibleName("Only requests with dropped items")
        self.audit_errors = QCheckBox("Audit errors", self)
        self.audit_errors.setAccessibleName("Only requests with audit errors")
        self.view = QTableView(self)
        self.view.setModel(self.proxy)
        self.view.setAccessibleName("Requests")
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # file order until a header is clicked
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)
        self.view.horizontalHeader().setStretchLastSection(True)
        for col, width in ((0, 118), (1, 84), (2, 84), (3, 80), (4, 50), (5, 40), (6, 62), (7, 96)):
            self.view.setColumnWidth(col, width)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Requests</b>", self))
        layout.addWidget(self.filter_edit)
        toggles = QHBoxLayout()
        toggles.addWidget(self.has_drops)
        toggles.addWidget(self.audit_errors)
        toggles.addStretch(1)
        layout.addLayout(toggles)
        layout.addWidget(self.view)

        self.filter_edit.textChanged.connect(self.proxy.set_text)
        self.has_drops.toggled.connect(self.proxy.set_has_drops)
        self.audit_errors.toggled.connect(self.proxy.set_audit_errors)
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing:
            return
        source = self.proxy.mapToSource(current)
        self.rowPicked.emit(self.model.row_at(source.row()) if source.isValid() else None)

    def proxy_row_of(self, row: Row) -> int:
        number = self.model.row_number(row)
        if number < 0:
            return -1
        return self.proxy.mapFromSource(self.model.index(number, 0)).row()

    def select_proxy_row(self, number: int) -> None:
        """Make the ``number``-th shown row current, as a person's click would (``rowPicked`` follows)."""
        index = self.proxy.index(number, 0)
        if index.isValid():
            self.view.selectionModel().setCurrentIndex(index, SELECT_ROW)
            self.view.scrollTo(index)

    def select_first(self) -> None:
        if self.proxy.rowCount():
            self.select_proxy_row(0)

    def step(self, delta: int) -> None:
        count = self.proxy.rowCount()
        if not count:
            return
        current = self.view.currentIndex()
        number = current.row() + delta if current.isValid() else 0
        self.select_proxy_row(max(0, min(count - 1, number)))

    def show_row(self, row: Row | None) -> None:
        """Mark ``row`` as the current one without reporting it (the window already knows)."""
        self._syncing = True
        try:
            if row is None:
                self.view.selectionModel().clearSelection()
            else:
                number = self.proxy_row_of(row)
                if number >= 0:
                    self.view.selectionModel().setCurrentIndex(self.proxy.index(number, 0), SELECT_ROW)
        finally:
            self._syncing = False

    def focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()
