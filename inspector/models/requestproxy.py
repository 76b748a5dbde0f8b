"""The filter (text, "has drops", "audit errors") and sort in front of the requests list, fast at 100,000 rows.

``QSortFilterProxyModel`` asks the source for two values through Python on every comparison of its sort
(n log n calls: seconds at 100,000 rows, all on the GUI thread). This proxy keeps an index array instead:
a sort is one ``list.sort`` over the rows' precomputed keys (``document.listing``, computed by the loading
worker), a filter one pass over their precomputed lowercase text. A change of order or filter is a layout
change with the views' persistent indexes (selection, current row) moved to where their rows went.
"""
from __future__ import annotations

from itertools import compress
from typing import Any

from PySide6.QtCore import QAbstractProxyModel, QModelIndex, Qt

from ..document.listing import Listing, listing
from .roles import ROW_ROLE, SORT_ROLE, ModelIndex

TABLE_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
ANSWERED_ROLES = frozenset(int(r) for r in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole,
                                             Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole,
                                             ROW_ROLE, SORT_ROLE))
FEW_PERSISTENT = 32  # persistent indexes (a selected row's cells) looked up one by one after a layout change
SHOWN_ON_ERRORS = ("error", "rejected", "invalid")  # the "audit errors" toggle shows these statuses
# a view repaints all it shows for a change of more cells than this, wherever they are (Qt's item views
# work out the changed cells' rectangle only up to 200 cells): rows read in place are told in pieces this small
VIEW_CELLS = 200


def changed_runs(rows: list[int], most: int) -> list[tuple[int, int]]:
    """``rows`` (proxy rows, any order) as runs of consecutive rows, first and last, each at most ``most``
    long: a change told as these repaints only the rows a view shows of them (none, for rows scrolled away)."""
    runs: list[tuple[int, int]] = []
    for row in sorted(set(rows)):
        if runs and row == runs[-1][1] + 1 and row - runs[-1][0] < most:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs


class RequestFilterProxy(QAbstractProxyModel):
    """Text filter (label, strategy, format, file, status) plus the "has drops" and "audit errors" toggles,
    and a stable sort by any column (``sort(-1)``: file order)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self._has_drops = False
        self._audit_errors = False
        self._column = -1
        self._descending = False
        self._lists: list[Listing] = []  # one per source row
        self._rows: list[int] = []  # proxy row -> source row
        self._where: list[int] | None = None  # source row -> proxy row (-1: filtered out), built when asked
        # every source row in a column's order, by (column, descending), until a row changes
        self._orders: dict[tuple[int, bool], list[int]] = {}
        self._haystacks: list[str] | None = None  # every source row's filter text, until one changes
        self._wired: list[tuple[Any, Any]] = []

    # ---- what the person set

    def set_text(self, text: str) -> None:
        text = text.strip().lower()
        if text != self._text:
            self._text = text
            self._relayout()

    def set_has_drops(self, on: bool) -> None:
        if on != self._has_drops:
            self._has_drops = on
            self._relayout()

    def set_audit_errors(self, on: bool) -> None:
        if on != self._audit_errors:
            self._audit_errors = on
            self._relayout()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        descending = order == Qt.SortOrder.DescendingOrder
        if (column, descending) == (self._column, self._descending):
            return  # already in that order (QTableView.sortByColumn asks twice), and kept in it as rows change
        self._column, self._descending = column, descending
        self._relayout()

    def sort_column(self) -> int:
        return self._column

    def source_row(self, proxy_row: int) -> int:
        """The source row shown at ``proxy_row`` (-1 outside), without building a model index."""
        return self._rows[proxy_row] if 0 <= proxy_row < len(self._rows) else -1

    # ---- the index array

    def _filtering(self) -> bool:
        return bool(self._text or self._has_drops or self._audit_errors)

    def _accepts(self, values: Listing) -> bool:
        if self._has_drops and not values.dropped:
            return False
        if self._audit_errors and values.status not in SHOWN_ON_ERRORS:
            return False
        return not self._text or self._text in values.haystack

    def _compute(self) -> list[int]:
        """The shown source rows in order: every row in the sort order (kept until a row changes, so a new
        filter is one pass), then the filter."""
        lists = self._lists
        if 0 <= self._column < self.columnCount():
            order = self._order(self._column, self._descending)
        else:
            order = range(len(lists))
        if not self._filtering():
            return list(order)
        text, drops, errors = self._text, self._has_drops, self._audit_errors
        if text and not (drops or errors):  # typing: one substring test per row
            if self._haystacks is None or len(self._haystacks) != len(lists):
                self._haystacks = [v.haystack for v in lists]
            accepted = [text in h for h in self._haystacks]
        else:
            accepted = [(not drops or bool(v.dropped)) and (not errors or v.status in SHOWN_ON_ERRORS)
                        and (not text or text in v.haystack) for v in lists]
        if isinstance(order, range):
            return list(compress(order, accepted))
        return [s for s in order if accepted[s]]

    def _order(self, column: int, descending: bool) -> list[int]:
        """Every source row in the stable order of ``column`` that way, sorted once while the rows stay as they
        are (a person flips a column's order back and forth)."""
        lists = self._lists
        order = self._orders.get((column, descending))
        if order is None:  # (every change of a row's list values drops the orders kept)
            keys = [values.keys[column] for values in lists]
            order = self._orders[(column, descending)] = sorted(range(len(lists)), key=keys.__getitem__,
                                                                reverse=descending)  # stable
        return order

    def _position(self, source_row: int) -> int:
        try:
            return self._rows.index(source_row) if source_row >= 0 else -1
        except ValueError:
            return -1

    def _where_map(self) -> list[int]:
        if self._where is None:
            where = [-1] * len(self._lists)
            for proxy_row, source_row in enumerate(self._rows):
                where[source_row] = proxy_row
            self._where = where
        return self._where

    def _relayout(self, moved=None) -> None:
        """Recompute the array as a layout change; ``moved`` maps the source rows the array held to the
        source's current numbering (rows were inserted before them)."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        sources = [(self._rows[i.row()] if 0 <= i.row() < len(self._rows) else -1, i.column()) for i in old]
        if moved is not None:
            sources = [(moved(s) if s >= 0 else -1, c) for s, c in sources]
        self._rows = self._compute()
        self._where = None
        if len(sources) <= FEW_PERSISTENT:  # the selected row's cells: found without mapping every row
            shown = {s: self._position(s) for s in {s for s, _ in sources}}
        else:
            where = self._where_map()
            shown = {s: where[s] if 0 <= s < len(where) else -1 for s, _ in sources}
        new = [self.index(shown[s], c) if shown[s] >= 0 else QModelIndex() for s, c in sources]
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    # ---- following the source

    def setSourceModel(self, model) -> None:  # type: ignore[override]
        for signal, slot in self._wired:
            signal.disconnect(slot)
        self._wired = []
        self.beginResetModel()
        super().setSourceModel(model)
        if model is not None:
            for signal, slot in ((model.rowsInserted, self._inserted),
                                 (model.rowsAboutToBeRemoved, self._about_to_remove),
                                 (model.rowsRemoved, self._removed),
                                 (model.modelAboutToBeReset, self.beginResetModel),
                                 (model.modelReset, self._reset), (model.dataChanged, self._data_changed)):
                signal.connect(slot)
                self._wired.append((signal, slot))
        self._reload()
        self.endResetModel()

    def _source_lists(self, first: int, last: int) -> list[Listing]:
        model = self.sourceModel()
        return [listing(model.row_at(i)) for i in range(first, last + 1)]

    def _reload(self) -> None:
        model = self.sourceModel()
        self._lists = self._source_lists(0, model.rowCount() - 1) if model is not None else []
        self._orders.clear()
        self._haystacks = None
        self._rows = self._compute()
        self._where = None

    def _reset(self) -> None:
        self._reload()
        self.endResetModel()

    def _inserted(self, parent: ModelIndex, first: int, last: int) -> None:
        added = self._source_lists(first, last)
        appended = first == len(self._lists)
        self._lists[first:first] = added
        self._orders.clear()
        self._haystacks = None
        if not self._filtering() and self._column < 0:  # file order, all shown: the rows come in as they are
            self.beginInsertRows(QModelIndex(), first, last)
            self._rows = list(range(len(self._lists)))
            self._where = None
            self.endInsertRows()
        elif appended and self._column < 0:  # filtered, in file order: the accepted ones go at the end
            accepted = [first + n for n, values in enumerate(added) if self._accepts(values)]
            if accepted:
                at = len(self._rows)
                self.beginInsertRows(QModelIndex(), at, at + len(accepted) - 1)
                self._rows.extend(accepted)
                self._where = None
                self.endInsertRows()
            else:
                self._where = None
        else:
            count = last - first + 1
            self._relayout(moved=lambda s: s + count if s >= first else s)

    def _about_to_remove(self, parent: ModelIndex, first: int, last: int) -> None:
        where = self._where_map()
        shown = sorted(p for p in (where[s] for s in range(first, last + 1)) if p >= 0)
        ranges: list[list[int]] = []
        for p in shown:
            if ranges and ranges[-1][1] == p - 1:
                ranges[-1][1] = p
            else:
                ranges.append([p, p])
        for start, end in reversed(ranges):
            self.beginRemoveRows(QModelIndex(), start, end)
            del self._rows[start:end + 1]
            self._where = None
            self.endRemoveRows()

    def _removed(self, parent: ModelIndex, first: int, last: int) -> None:
        count = last - first + 1
        del self._lists[first:last + 1]
        self._orders.clear()
        self._haystacks = None
        self._rows = [s - count if s > last else s for s in self._rows]
        self._where = None

    def _data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles=()) -> None:
        first, last = top_left.row(), bottom_right.row()
        if first < 0 or last >= len(self._lists):
            return
        moved = False
        for source_row, values in zip(range(first, last + 1), self._source_lists(first, last)):
            old = self._lists[source_row]
            if values is old:
                continue
            self._lists[source_row] = values
            self._haystacks = None
            if values.keys != old.keys:  # the orders kept for any column may no longer hold
                self._orders.clear()
            if 0 <= self._column < len(values.keys) and values.keys[self._column] != old.keys[self._column]:
                moved = True
            elif self._filtering() and self._accepts(values) != self._accepts(old):
                moved = True
        if moved:  # a row read in place sorts elsewhere, or now passes (or fails) the filter
            self._relayout()
            return
        where = self._where_map()
        shown = [p for p in (where[s] for s in range(first, last + 1)) if p >= 0]
        for top, bottom in changed_runs(shown, max(1, VIEW_CELLS // max(1, self.columnCount()))):
            self.dataChanged.emit(self.index(top, 0), self.index(bottom, self.columnCount() - 1))

    # ---- Qt proxy model

    def mapToSource(self, proxy_index: ModelIndex) -> QModelIndex:
        model = self.sourceModel()
        if model is None or not proxy_index.isValid() or not 0 <= proxy_index.row() < len(self._rows):
            return QModelIndex()
        return model.index(self._rows[proxy_index.row()], proxy_index.column())

    def mapFromSource(self, source_index: ModelIndex) -> QModelIndex:
        if not source_index.isValid():
            return QModelIndex()
        where = self._where_map()
        row = source_index.row()
        if not 0 <= row < len(where) or where[row] < 0:
            return QModelIndex()
        return self.index(where[row], source_index.column())

    # What the view asks for every painted cell, answered without a round trip through mapToSource and a
    # source index (each a call into Python): the source row by number, flags as a table's.

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in ANSWERED_ROLES:  # the delegate asks a dozen roles per cell; the list answers these
            return None
        model = self.sourceModel()
        if model is None or not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return model.cell(self._rows[index.row()], index.column(), role)

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return TABLE_FLAGS

    def sibling(self, row: int, column: int, index: ModelIndex) -> QModelIndex:
        return self.index(row, column)

    def index(self, row: int, column: int, parent: ModelIndex = QModelIndex()) -> QModelIndex:
        if parent.isValid() or not 0 <= row < len(self._rows) or not 0 <= column < self.columnCount():
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, index: ModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        return QModelIndex()

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        model = self.sourceModel()
        return 0 if parent.isValid() or model is None else model.columnCount()

    def hasChildren(self, parent: ModelIndex = QModelIndex()) -> bool:
        return not parent.isValid() and bool(self._rows)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        model = self.sourceModel()
        if model is None:
            return None
        if orientation == Qt.Orientation.Vertical:
            if not 0 <= section < len(self._rows):
                return None
            section = self._rows[section]
        return model.headerData(section, orientation, role)

