"""The section tree of one result: sections, then their items, marked against the recording while a
replay is shown; and the filter that keeps only what a replay changed.

Figures come from core (``sent_tokens_by_section``, ``section_tokens``, the trace), never recomputed here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

import core
from core.replay import Diff, ItemChange

from .. import theme
from .roles import CHANGE_ROLE, DECISION_ROLE, ITEM_ID_ROLE, ModelIndex, RIGHT, ROW_ROLE, SECTION_ROLE, \
    TOKENS_ROLE


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
        return f"{delta:+,d}" if delta else ""
    if change.kind == "changed":
        return f"{style.glyph} {change.decision_before} → {change.decision_after} {delta:+,d}"
    return f"{style.glyph} {change.kind} {delta:+,d}"


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

    def column_texts(self, columns: tuple[int, ...]) -> tuple:
        """What the rows show in ``columns`` (their display texts, in order): equal texts size a column the
        same, so the view need not measure them again."""
        return tuple((tuple(self._section_data(node, c, Qt.ItemDataRole.DisplayRole) for c in columns),
                      tuple(tuple(self._item_data(item, c, Qt.ItemDataRole.DisplayRole) for c in columns)
                            for item in node.items), node.section) for node in self._sections)

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
                return f"{node.sent:,} sent · {node.dropped:,} dropped" if node.dropped else f"{node.sent:,} sent"
            if col == self.C_CHANGE:
                return self._section_change(node)
            return ""
        if role == Qt.ItemDataRole.DecorationRole and col == self.C_NAME:
            return theme.section_icon(node.section)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"{theme.section_title(node.section)}: {node.sent:,} tokens sent, {node.dropped:,} dropped, "
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
            parts.append(f"{delta:+,d} sent")
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
                return f"{entry.tokens:,}"
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
            tip = f"{entry.id}: {entry.decision}, {entry.tokens:,} tokens. {entry.reason}"
            return f"{tip}\n{theme.PRICED_ALONE}" if entry.decision == "dropped" and not item.gone else tip
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
