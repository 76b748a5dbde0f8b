"""The item-data roles the inspector's models share, so a view or the window asks any of them the same way."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

ROW_ROLE = Qt.ItemDataRole.UserRole + 1  # the Row (requests list) / TraceEntry (tree) / Finding
SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # a sortable value (numbers as numbers)
SECTION_ROLE = Qt.ItemDataRole.UserRole + 3
ITEM_ID_ROLE = Qt.ItemDataRole.UserRole + 4
DECISION_ROLE = Qt.ItemDataRole.UserRole + 5
TOKENS_ROLE = Qt.ItemDataRole.UserRole + 6
CHANGE_ROLE = Qt.ItemDataRole.UserRole + 7  # core.replay ItemChange.kind of an item while a replay is shown

ModelIndex = QModelIndex | QPersistentModelIndex
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

