"""The audit findings of the shown result, one line each (severity, rule, message, location, item)."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

import core

from .. import theme
from .roles import ModelIndex, ROW_ROLE
from .tables import ColumnsModel


class FindingsModel(ColumnsModel):
    COLUMNS = ("Severity", "Rule", "Message", "Location", "Item")
    C_SEVERITY, C_RULE, C_MESSAGE, C_LOCATION, C_ITEM = range(5)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._findings: list[core.Finding] = []

    def set_findings(self, findings: list[core.Finding]) -> None:
        self.beginResetModel()
        self._findings = list(findings)
        self.endResetModel()

    def finding_at(self, row: int) -> core.Finding | None:
        return self._findings[row] if 0 <= row < len(self._findings) else None

    def row_total(self) -> int:
        return len(self._findings)

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._findings):
            return None
        finding = self._findings[index.row()]
        col = index.column()
        if role == ROW_ROLE:
            return finding
        if role == Qt.ItemDataRole.DisplayRole:
            if col == self.C_SEVERITY:
                return finding.severity
            if col == self.C_RULE:
                return finding.rule
            if col == self.C_MESSAGE:
                return finding.message
            if col == self.C_LOCATION:
                return finding.location()
            if col == self.C_ITEM:
                if finding.section and finding.item_id:
                    return f"{finding.section} / {finding.item_id}"
                return finding.item_id or finding.section or ""
            return ""
        if role == Qt.ItemDataRole.DecorationRole and col == self.C_SEVERITY:
            return theme.severity_icon(finding.severity)
        if role == Qt.ItemDataRole.ToolTipRole:
            rule = core.RULES.get(finding.rule)
            return f"{finding.rule}: {rule}" if rule else finding.message
        return None
