"""A flat table model with named columns: the row count, column count and header every list shares."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from .roles import ModelIndex


class ColumnsModel(QAbstractTableModel):
    """``COLUMNS`` names the columns; a subclass says how many rows it has (``row_total``; none by default)."""

    COLUMNS: tuple[str, ...] = ()

    def row_total(self) -> int:
        return 0  # an empty table until a subclass says otherwise

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.row_total()

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def column_title(self, section: int) -> str:
        return self.COLUMNS[section]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.COLUMNS):
            return self.column_title(section)
        return None
