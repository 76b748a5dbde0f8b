"""Item models over the loaded rows and the core result: requests list, section tree, findings.

The models hold core objects and present them; figures come from core (``sent_tokens_by_section``,
``section_tokens``, the trace), never recomputed by other rules here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, \
    QSortFilterProxyModel, Qt

from PySide6.QtGui import QColor

import core
from core.replay import Diff, ItemChange

from . import theme
from .document import Row

ROW_ROLE = Qt.ItemDataRole.UserRole + 1  # the Row (requests list) / TraceEntry (tree) / Finding
SORT_ROLE = Qt.ItemDataRole.UserRole + 2  # a sortable value (numbers as numbers)
SECTION_ROLE = Qt.ItemDataRole.UserRole + 3
ITEM_ID_ROLE = Qt.ItemDataRole.UserRole + 4
DECISION_ROLE = Qt.ItemDataRole.UserRole + 5
TOKENS_ROLE = Qt.ItemDataRole.UserRole + 6
CHANGE_ROLE = Qt.ItemDataRole.UserRole + 7  # core.replay ItemChange.kind of an item while a replay is shown

ModelIndex = QModelIndex | QPersistentModelIndex
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


# --------------------------------------------------------------------------------------------
# requests list


class RequestListModel(QAbstractTableModel):
    COLUMNS = ("Request", "Strategy", "Format", "Tokens", "Drift", "Kept", "Dropped", "Audit", "File")
    TIPS = ("Request id or label", "How the request was built (assemble, naive_truncate, imported...)",
            "The provider format a model call was read as (detected by content); empty for our own files",
            "Input tokens / input allowance",
            "Our count minus the input tokens the provider reported (blank where the file records none)",
            "Items sent (required, pinned, kept, summarised)", "Items dropped",
            "Audit errors and warnings", "File and line")
    C_LABEL, C_STRATEGY, C_FORMAT, C_TOKENS, C_DRIFT, C_KEPT, C_DROPPED, C_AUDIT, C_FILE = range(9)

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


# --------------------------------------------------------------------------------------------
# section tree


def source_text(source: str | None) -> str:
    """A passage source for a narrow column. Retrievers often record a JSON object as the source; its
    path and section are what a person scans for (the tooltip keeps the whole value)."""
    if not source:
        return ""
    if source.startswith("{"):
        try:
            value = json.loads(source)
        except ValueError:
            return source
        if isinstance(value, dict):
            parts = [str(value[k]) for k in ("path", "section") if value.get(k)]
            if parts:
                return " § ".join(parts)
    return source


@dataclass
class _ItemRow:
    entry: core.TraceEntry  # the replayed entry, or the recorded one when the replay no longer has the item
    change: ItemChange | None = None  # against the recording, while a replay is shown
    gone: bool = False  # in the recording only


@dataclass
class _SectionNode:
    section: str
    items: list[_ItemRow]
    sent: int
    dropped: int
    sent_before: int | None = None  # the recording's, while a replay is shown

    @property
    def entries(self) -> list[core.TraceEntry]:
        return [item.entry for item in self.items]


def sent_delta(change: ItemChange) -> int:
    """Tokens sent after minus before, for the Change column: an item newly sent adds its tokens, one no
    longer sent takes its recorded tokens away (core's ``token_delta`` compares marginal costs, which a
    dropped item also has)."""
    if change.kind == "newly kept":
        return change.tokens_after or 0
    if change.kind in ("newly dropped", "newly summarised"):
        return -(change.tokens_before or 0)
    return change.token_delta


def change_text(change: ItemChange | None) -> str:
    if change is None:
        return ""
    style = theme.change_style(change.kind)
    delta = sent_delta(change)
    if style is None:  # the same decision: only a shift of its marginal cost, if any
        return f"{delta:+d}" if delta else ""
    if change.kind == "changed":
        return f"{style.glyph} {change.decision_before} → {change.decision_after} {delta:+d}"
    return f"{style.glyph} {change.kind} {delta:+d}"


class SectionTreeModel(QAbstractItemModel):
    """Sections of one result, then their items. Section rows have internal id 0; an item row's internal
    id is its section's row + 1, which is all ``parent()`` needs.

    While a replay is shown (``set_result(replayed, diff=..., recorded=...)``) the Change column says how
    each item's decision moved against the recording (core's diff), changed rows are tinted, and items
    only the recording has are listed too, marked as gone."""

    COLUMNS = ("Section / item", "Decision", "Tokens", "Change", "Score / rank", "Source", "Reason")
    C_NAME, C_DECISION, C_TOKENS, C_CHANGE, C_SCORE, C_SOURCE, C_REASON = range(7)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._result: core.AssemblyResult | None = None
        self._diff: Diff | None = None
        self._sections: list[_SectionNode] = []

    @property
    def result(self) -> core.AssemblyResult | None:
        return self._result

    @property
    def diff(self) -> Diff | None:
        return self._diff

    def set_result(self, result: core.AssemblyResult | None, *, diff: Diff | None = None,
                   recorded: core.AssemblyResult | None = None) -> None:
        self.beginResetModel()
        self._result = result
        self._diff = diff if result is not None else None
        self._sections = []
        if result is not None:
            changes = {(c.section, c.id): c for c in diff.items} if diff is not None else {}
            by_section: dict[str, list[_ItemRow]] = {}
            for entry in result.trace:
                by_section.setdefault(entry.section, []).append(_ItemRow(entry, changes.get((entry.section, entry.id))))
            if diff is not None and recorded is not None:
                present = {(e.section, e.id) for e in result.trace}
                for entry in recorded.trace:
                    if (entry.section, entry.id) not in present:
                        by_section.setdefault(entry.section, []).append(
                            _ItemRow(entry, changes.get((entry.section, entry.id)), gone=True))
            sent = result.sent_tokens_by_section()
            dropped = result.section_tokens("dropped")
            before = recorded.sent_tokens_by_section() if diff is not None and recorded is not None else None
            order = [e.section for e in result.trace] + ([e.section for e in recorded.trace] if recorded else [])
            for section in theme.section_order(order):
                if section not in by_section:
                    continue
                self._sections.append(_SectionNode(section, by_section[section], sent.get(section, 0),
                                                   dropped.get(section, 0),
                                                   before.get(section, 0) if before is not None else None))
        self.endResetModel()

    def sections(self) -> list[str]:
        return [node.section for node in self._sections]

    def index_for(self, section: str, item_id: str | None = None, column: int = 0) -> QModelIndex:
        for s, node in enumerate(self._sections):
            if node.section != section:
                continue
            if item_id is None:
                return self.index(s, column)
            for r, item in enumerate(node.items):
                if item.entry.id == item_id:
                    return self.index(r, column, self.index(s, 0))
            return QModelIndex()
        return QModelIndex()

    # ---- Qt model

    def index(self, row: int, column: int, parent: ModelIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(self.COLUMNS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row < len(self._sections):
                return self.createIndex(row, column, 0)
            return QModelIndex()
        if parent.internalId() != 0 or parent.column() != 0:
            return QModelIndex()
        s = parent.row()
        if s < len(self._sections) and row < len(self._sections[s].items):
            return self.createIndex(row, column, s + 1)
        return QModelIndex()

    def parent(self, index: ModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid() or index.internalId() == 0:
            return QModelIndex()
        return self.createIndex(int(index.internalId()) - 1, 0, 0)

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._sections)
        if parent.internalId() == 0 and parent.column() == 0 and parent.row() < len(self._sections):
            return len(self._sections[parent.row()].items)
        return 0

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole and section == self.C_CHANGE:
                return "How the replay changed the item against the recording, and the tokens sent it adds or removes"
        return None

    def _node(self, index: ModelIndex) -> tuple[_SectionNode, _ItemRow | None] | None:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            if index.row() < len(self._sections):
                return self._sections[index.row()], None
            return None
        s = int(index.internalId()) - 1
        if s < len(self._sections) and index.row() < len(self._sections[s].items):
            node = self._sections[s]
            return node, node.items[index.row()]
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        found = self._node(index)
        if found is None:
            return None
        node, item = found
        col = index.column()
        if role == SECTION_ROLE:
            return node.section
        if role == ITEM_ID_ROLE:
            return item.entry.id if item is not None else None
        if role == DECISION_ROLE:
            return item.entry.decision if item is not None and not item.gone else None
        if role == TOKENS_ROLE:
            return item.entry.tokens if item is not None else node.sent
        if role == ROW_ROLE:
            return item.entry if item is not None else None
        if role == CHANGE_ROLE:
            return item.change.kind if item is not None and item.change is not None else None
        if item is None:
            return self._section_data(node, col, role)
        return self._item_data(item, col, role)

    def _section_data(self, node: _SectionNode, col: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if col == self.C_NAME:
                return f"{theme.section_title(node.section)} ({len(node.items)})"
            if col == self.C_DECISION:
                counts: dict[str, int] = {}
                for item in node.items:
                    if not item.gone:  # a gone item's decision is the recording's, not this result's
                        counts[item.entry.decision] = counts.get(item.entry.decision, 0) + 1
                return "  ".join(f"{theme.decision_style(d).glyph} {n} {d}" for d, n in
                                 sorted(counts.items(), key=lambda kv: core.DECISIONS.index(kv[0])
                                        if kv[0] in core.DECISIONS else 99))
            if col == self.C_TOKENS:
                return f"{node.sent} sent · {node.dropped} dropped" if node.dropped else f"{node.sent} sent"
            if col == self.C_CHANGE:
                return self._section_change(node)
            return ""
        if role == Qt.ItemDataRole.DecorationRole and col == self.C_NAME:
            return theme.section_icon(node.section)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{theme.section_title(node.section)}: {node.sent} tokens sent, {node.dropped} dropped, "
                    f"{len(node.items)} items")
        if role == Qt.ItemDataRole.TextAlignmentRole and col == self.C_TOKENS:
            return RIGHT
        return None

    @staticmethod
    def _section_change(node: _SectionNode) -> str:
        if node.sent_before is None:
            return ""
        counts: dict[str, int] = {}
        for item in node.items:
            if item.change is not None and item.change.kind != "same":
                counts[item.change.kind] = counts.get(item.change.kind, 0) + 1
        parts = [f"{theme.CHANGE_STYLES[k].glyph}{n}" for k, n in counts.items() if k in theme.CHANGE_STYLES]
        delta = node.sent - node.sent_before
        if delta:
            parts.append(f"{delta:+d} sent")
        return " ".join(parts)

    def _item_name(self, entry: core.TraceEntry) -> str:
        """The item id; for an imported request, with the roles of the messages it stands for (its ids
        are "message-3" or a tool-call id, which do not say who spoke)."""
        result = self._result
        if result is None or result.strategy != "imported" or not entry.message_indices:
            return entry.id
        roles = dict.fromkeys(result.messages[i].role for i in entry.message_indices if 0 <= i < len(result.messages))
        return f"{entry.id} · {' + '.join(roles)}" if roles else entry.id

    def _item_data(self, item: _ItemRow, col: int, role: int) -> Any:
        entry = item.entry
        change = item.change
        if role == Qt.ItemDataRole.DisplayRole:
            if col == self.C_NAME:
                return self._item_name(entry)
            if col == self.C_DECISION:
                if item.gone:
                    return f"— not in the replay (was {entry.decision})"
                return theme.decision_text(entry.decision)
            if col == self.C_TOKENS:
                return str(entry.tokens)
            if col == self.C_CHANGE:
                return change_text(change)
            if col == self.C_REASON:
                return entry.reason
            if col == self.C_SCORE:
                parts = []
                if entry.score is not None:
                    parts.append(f"{entry.score:g}")
                if entry.rank is not None:
                    parts.append(f"#{entry.rank}")
                return " · ".join(parts)
            if col == self.C_SOURCE:
                return source_text(entry.source)
            return ""
        if role == Qt.ItemDataRole.DecorationRole and col == self.C_DECISION and not item.gone:
            return theme.decision_icon(entry.decision)
        if role == Qt.ItemDataRole.BackgroundRole and change is not None:
            style = theme.change_style(change.kind)
            return theme.tint(QColor(style.colour), None, 0.22) if style is not None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == self.C_CHANGE and change is not None:
                return (f"Recorded: {change.decision_before or 'absent'} ({change.tokens_before} tokens) → "
                        f"replayed: {change.decision_after or 'absent'} ({change.tokens_after} tokens)")
            if col == self.C_SOURCE and entry.source:
                return entry.source
            return f"{entry.id}: {entry.decision}, {entry.tokens} tokens. {entry.reason}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col == self.C_TOKENS:
            return RIGHT
        return None


class ChangeFilterProxy(QSortFilterProxyModel):
    """The section tree, or (``set_only_changes(True)``) only the items a replay changed, under their
    sections. Maps ``index_for`` through, so the window asks it as it asks the tree model."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._only_changes = False
        self.setRecursiveFilteringEnabled(True)

    @property
    def only_changes(self) -> bool:
        return self._only_changes

    def set_only_changes(self, on: bool) -> None:
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
        self._only_changes = on
        if hasattr(self, "endFilterChange"):
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def index_for(self, section: str, item_id: str | None = None, column: int = 0) -> QModelIndex:
        model = self.sourceModel()
        if not isinstance(model, SectionTreeModel):
            return QModelIndex()
        return self.mapFromSource(model.index_for(section, item_id, column))

    def filterAcceptsRow(self, source_row: int, source_parent: ModelIndex) -> bool:
        model = self.sourceModel()
        if not self._only_changes or not isinstance(model, SectionTreeModel) or model.diff is None:
            return True  # without a replay there are no changes to keep to: everything shows
        kind = model.index(source_row, 0, source_parent).data(CHANGE_ROLE)
        return kind is not None and kind != "same"


# --------------------------------------------------------------------------------------------
# findings


class FindingsModel(QAbstractTableModel):
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

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._findings)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None

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
