"""The requests list: one line per loaded row, and the filter in front of it (text, drops, audit errors).

Every figure comes from the row (built from core results); the model only presents and sorts it.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt

from .. import theme
from ..document import Row
from ..document.imported import counter_text
from .roles import ModelIndex, RIGHT, ROW_ROLE, SORT_ROLE


class RequestListModel(QAbstractTableModel):
    COLUMNS = ("Request", "Strategy", "Format", "Counter", "Tokens", "Drift", "Kept", "Dropped", "Audit", "File")
    TIPS = ("Request id or label", "How the request was built (assemble, naive_truncate, imported...)",
            "The provider format a model call was read as (detected by content); empty for our own files",
            "The counter that counted the row; \"(estimate)\" where the model's tokenizer is not public",
            "Input tokens / input allowance",
            "Our count minus the input tokens the provider reported (blank where the file records none)",
            "Items sent (required, pinned, kept, summarised)", "Items dropped",
            "Audit errors and warnings", "File and line")
    C_LABEL, C_STRATEGY, C_FORMAT, C_COUNTER, C_TOKENS, C_DRIFT, C_KEPT, C_DROPPED, C_AUDIT, C_FILE = range(10)
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
        """``rows`` were read in place (pending rows took their full content): their cells changed."""
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
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        col = index.column()
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, col)
        if role == SORT_ROLE:
            return self._sort_value(row, col)
        if role == Qt.ItemDataRole.DecorationRole:
            if col == self.C_AUDIT and not row.pending:
                return theme.severity_icon(row.status)
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == self.C_FILE:
                return row.where
            if col == self.C_DRIFT and row.count_drift is not None:
                theirs = (row.result.model_extra or {}).get("provider_input_tokens")
                return f"ours {row.input_tokens} − provider {theirs} = {row.count_drift:+d} input tokens"
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

    def _display(self, row: Row, col: int) -> str:
        if col == self.C_LABEL:
            return row.label
        if col == self.C_STRATEGY:
            return row.strategy
        if col == self.C_FORMAT:
            return row.format_name
        if col == self.C_COUNTER:
            return counter_text(row)
        if col == self.C_DRIFT:
            return f"{row.count_drift:+d}" if row.count_drift is not None else ""
        if col == self.C_TOKENS:
            if row.kind == "rejected":
                short = row.short_by
                return f"short by {short}" if short is not None else "rejected"
            if row.input_tokens is None:
                return "…" if row.pending else "-"
            return f"{row.input_tokens} / {row.allowance}"
        if col == self.C_KEPT:
            return str(row.kept_count) if row.result is not None else "…" if row.pending else "-"
        if col == self.C_DROPPED:
            if row.result is not None or (row.pending and row.summary_line.dropped is not None):
                return str(row.dropped_count)
            return "…" if row.pending else "-"
        if col == self.C_AUDIT:
            return row.status_text()
        if col == self.C_FILE:
            return row.file_name if row.line is None else f"{row.file_name}:{row.line}"
        return ""

    def _sort_value(self, row: Row, col: int) -> Any:
        if col == self.C_DRIFT:  # unknown drift sorts below every known one
            return float(row.count_drift) if row.count_drift is not None else float("-inf")
        if col == self.C_TOKENS:
            return row.input_tokens if row.input_tokens is not None else -1
        if col == self.C_KEPT:
            return row.kept_count if row.result is not None else -1
        if col == self.C_DROPPED:
            return row.dropped_count
        if col == self.C_AUDIT:
            order = {"invalid": 0, "rejected": 1, "error": 2, "warning": 3, "ok": 4, "pending": 5}[row.status]
            return order * 10000 - row.error_count * 100 - row.warning_count
        if col == self.C_FILE:
            return (row.source, row.index)
        return self._display(row, col).lower()


class RequestFilterProxy(QSortFilterProxyModel):
    """Text filter (label, strategy, file, status) plus the "has drops" and "audit errors" toggles."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self._has_drops = False
        self._audit_errors = False
        self.setSortRole(SORT_ROLE)
        self.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def set_text(self, text: str) -> None:
        self._begin_filter()
        self._text = text.strip().lower()
        self._end_filter()

    def set_has_drops(self, on: bool) -> None:
        self._begin_filter()
        self._has_drops = on
        self._end_filter()

    def set_audit_errors(self, on: bool) -> None:
        self._begin_filter()
        self._audit_errors = on
        self._end_filter()

    # beginFilterChange/endFilterChange arrived in Qt 6.9/6.10; older Qt only has invalidateRowsFilter.
    def _begin_filter(self) -> None:
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()

    def _end_filter(self) -> None:
        if hasattr(self, "endFilterChange"):
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: ModelIndex) -> bool:
        model = self.sourceModel()
        if not isinstance(model, RequestListModel):
            return True
        row = model.row_at(source_row)
        if row is None:
            return False
        if self._has_drops and row.dropped_count == 0:
            return False
        if self._audit_errors and row.status not in ("error", "rejected", "invalid"):
            return False
        if self._text:
            haystack = " ".join((row.label, row.strategy, row.format_name, row.file_name, row.status_text(),
                                 row.kind)).lower()
            return self._text in haystack
        return True


