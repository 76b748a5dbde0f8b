"""The requests list: one line per loaded row (the filter and sort in front of it: models.requestproxy).

Every figure comes from the row (built from core results, its list values by ``document.listing``);
the model only presents it.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from .. import theme
from ..document import Row
from ..document import listing as lists
from ..document.figures import figure, signed
from .roles import ModelIndex, RIGHT, ROW_ROLE, SORT_ROLE


class RequestListModel(QAbstractTableModel):
    COLUMNS = lists.COLUMNS
    TIPS = ("Request id or label", "How the request was built (assemble, naive_truncate, imported...)",
            "The provider format a model call was read as (detected by content); empty for our own files",
            "The counter that counted the row; \"(estimate)\" where the model's tokenizer is not public",
            "Input tokens / input allowance",
            "Our count minus the input tokens the provider reported (blank where the file records none)",
            "Items sent (required, pinned, kept, summarised)", "Items dropped",
            "Audit errors and warnings", "File and line")
    C_LABEL, C_STRATEGY, C_FORMAT, C_COUNTER, C_TOKENS, C_DRIFT, C_KEPT, C_DROPPED, C_AUDIT, C_FILE = range(10)
    assert (C_TOKENS, C_AUDIT, C_FILE) == (lists.C_TOKENS, lists.C_AUDIT, lists.C_FILE)
    TEXT_COLUMNS = frozenset({C_LABEL, C_STRATEGY, C_FORMAT, C_COUNTER, C_FILE})  # elided before a figure is

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[Row] = []
        self._positions: dict[int, int] | None = None  # id(row) -> row number, rebuilt after a change

    # ---- content

    def rows(self) -> list[Row]:
        return list(self._rows)

    def row_at(self, row: int) -> Row | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_number(self, target: Row) -> int:
        if self._positions is None:
            self._positions = {id(r): i for i, r in enumerate(self._rows)}
        return self._positions.get(id(target), -1)

    def append_rows(self, rows: list[Row]) -> None:
        if not rows:
            return
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
        self._rows.extend(rows)
        self._positions = None
        self.endInsertRows()

    def remove_source(self, source: str) -> None:
        """Drop the rows of one file, as contiguous blocks so views keep their selection elsewhere."""
        i = len(self._rows) - 1
        while i >= 0:
            if self._rows[i].source != source:
                i -= 1
                continue
            end = i
            while i >= 0 and self._rows[i].source == source:
                i -= 1
            self.beginRemoveRows(QModelIndex(), i + 1, end)
            del self._rows[i + 1:end + 1]
            self._positions = None
            self.endRemoveRows()

    def insert_after(self, anchor: Row, row: Row) -> None:
        """Put ``row`` right below ``anchor`` (a file's rows stay one block)."""
        number = self.row_number(anchor)
        at = len(self._rows) if number < 0 else number + 1
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.insert(at, row)
        self._positions = None
        self.endInsertRows()

    def remove_row(self, row: Row) -> None:
        number = self.row_number(row)
        if number < 0:
            return
        self.beginRemoveRows(QModelIndex(), number, number)
        del self._rows[number]
        self._positions = None
        self.endRemoveRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._rows = []
        self._positions = None
        self.endResetModel()

    def rows_changed(self, rows: list[Row]) -> None:
        """``rows`` were read in place (pending rows took their full content, ``Row.absorb``): their cells
        changed."""
        if self._positions is None:
            self._positions = {id(r): i for i, r in enumerate(self._rows)}
        numbers = [n for n in (self._positions.get(id(r)) for r in rows) if n is not None]
        if numbers:
            self.dataChanged.emit(self.index(min(numbers), 0), self.index(max(numbers), len(self.COLUMNS) - 1))

    # ---- Qt model

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.TIPS[section]
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        return self.cell(index.row(), index.column(), role)

    def cell(self, number: int, col: int, role: int) -> Any:
        """``data`` by row number and column (the filter proxy asks this way, without a model index)."""
        if not 0 <= number < len(self._rows):
            return None
        row = self._rows[number]
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return lists.listing(row).texts[col] if 0 <= col < len(self.COLUMNS) else None
        if role == SORT_ROLE:
            return lists.listing(row).keys[col] if 0 <= col < len(self.COLUMNS) else None
        if role == Qt.ItemDataRole.DecorationRole:
            if col == self.C_AUDIT and not row.pending:
                return theme.severity_icon(row.status)
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == self.C_FILE:
                return row.where
            if col == self.C_DRIFT and row.count_drift is not None:
                theirs = (row.result.model_extra or {}).get("provider_input_tokens")
                return (f"ours {figure(row.input_tokens)} − provider {figure(theirs)} = "
                        f"{signed(row.count_drift)} input tokens")
            if col == self.C_FORMAT and row.format_name:
                return f"Read as {row.format_name}"
            if col == self.C_COUNTER and row.result is not None and row.result.counter is not None:
                identity = row.result.counter
                return f"{identity.name} ({identity.kind})" + (f"\n{identity.notes}" if identity.notes else "")
            return row.summary()
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (self.C_TOKENS, self.C_DRIFT, self.C_KEPT,
                                                                  self.C_DROPPED):
            return RIGHT
        return None
