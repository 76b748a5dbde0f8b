"""The composition view: what the input is made of, section by section, as Claude Code's ``/context``
and Letta's context-window view show it. A thin Qt table over ``core.composition``: each section's
sent tokens, its share of the window and of the allowance, what was not sent, and (for any result)
pinned, kept, evicted and summarised; a plan's share and allowance where there is a plan. Free
space, margin and output reserve follow, then the total: the context limit.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

import core

from ... import theme
from .plot import section_code

Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Section", "Tokens", "% of input", "% of window", "% of allowance", "Not sent", "Share", "Allowance",
           "Pinned or required", "Kept", "Evicted", "Summarised")
PLAN_COLUMNS = (6, 7)
NUMERIC = set(range(1, len(COLUMNS)))


class CompositionModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[core.CompositionRow] = []
        self.result: core.AssemblyResult | None = None

    def set_result(self, result: core.AssemblyResult | None) -> None:
        self.beginResetModel()
        self.result = result
        self.rows = core.composition(result) if result is not None else []
        self.endResetModel()

    @property
    def has_plan(self) -> bool:
        return any(r.figures is not None and (r.figures.share is not None or r.figures.allowance is not None)
                   for r in self.rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() or not self.rows else len(self.rows) + 1  # + the total

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.result is None:
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter) if index.column() in NUMERIC \
                else None
        if index.row() == len(self.rows):
            return self._total(index.column()) if role == Qt.ItemDataRole.DisplayRole else None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DecorationRole and index.column() == 0:
            if row.kind == "section":
                return theme.section_icon(row.key)
            return theme.swatch_icon(theme.RESERVE_COLOURS[row.kind])
        if role == Qt.ItemDataRole.ToolTipRole and row.figures is not None:
            return f"{row.title}: {row.figures.describe()}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return self._cell(row, index.column())

    def _input_share(self, row: core.CompositionRow) -> str:
        total = self.result.input_tokens if self.result is not None else 0
        return core.percent(row.tokens / total) if row.kind == "section" and total > 0 else ""

    def _cell(self, row: core.CompositionRow, column: int) -> str:
        fig = row.figures
        if column == 0:
            return f"{row.title} ({section_code(row.key)})" if row.kind == "section" else row.title
        if column == 1:
            return f"{row.tokens:,}"
        if column == 2:
            return self._input_share(row)
        if column == 3:
            return core.percent(row.of_window)
        if column == 4:
            return core.percent(row.of_allowance)
        if column == 5:
            return f"{row.not_sent_items} · {row.not_sent_tokens:,} tok" if row.not_sent_items else ""
        if fig is None:
            return ""
        if column == 6:
            return f"{fig.share:.0%}" if fig.share is not None else ""
        if column == 7:
            return f"{fig.allowance:,}" if fig.allowance is not None else ""
        value = (fig.pinned + fig.required, fig.kept, fig.evicted, fig.summarised)[column - 8]
        return str(value)

    def _total(self, column: int) -> str:
        r = self.result
        assert r is not None
        if column == 0:
            return "Context limit (total)"
        if column == 1:
            return f"{sum(x.tokens for x in self.rows):,}"
        if column == 2:
            sent = sum(x.tokens for x in self.rows if x.kind == "section")
            return core.percent(sent / r.input_tokens) if r.input_tokens > 0 else ""
        if column == 3:
            return core.percent(sum(x.of_window for x in self.rows))
        if column == 4:
            return core.percent(sum(x.of_allowance or 0.0 for x in self.rows))
        if column == 5:
            lost = [e for e in r.trace if e.decision in core.NOT_SENT]
            return f"{len(lost)} · {sum(e.tokens for e in lost):,} tok" if lost else ""
        return ""


class CompositionView(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Budget composition by section")
        self.model_ = CompositionModel(self)
        self.setModel(self.model_)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.setWordWrap(False)

    def set_result(self, result: core.AssemblyResult | None) -> None:
        self.model_.set_result(result)
        for column in PLAN_COLUMNS:
            self.setColumnHidden(column, not self.model_.has_plan)

    def wanted_height(self) -> int:
        rows = self.model_.rowCount()
        return self.horizontalHeader().sizeHint().height() + rows * self.verticalHeader().defaultSectionSize() + 4
