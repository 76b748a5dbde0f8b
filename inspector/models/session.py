"""Qt models of a session (core.Session): its calls, the span tree of its trace, and the diff of two calls.

Thin adapters: every figure is core's (``core.sessions``); these only lay it out in rows and columns.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QFont

import core

from .roles import RIGHT, ROW_ROLE, SORT_ROLE, ModelIndex
from .tables import ColumnsModel

CALL_ROLE = Qt.ItemDataRole.UserRole + 20  # the call index (into session.calls) a row or span stands for
MODEL_CALL_COLOUR = "#1565C0"
CHANGE_COLOURS = {"appended": "#2E7D32", "inserted": "#2E7D32", "removed": "#C62828", "compacted": "#B26A00",
                  "rewritten": "#6A1B9A", "tools": "#1565C0", "prefix": "#546E7A"}


def _num(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


class SessionCallsModel(ColumnsModel):
    """One row per call: time, model, input tokens against the allowance, what changed, the cache prefix."""

    COLUMNS = ("#", "Time", "Model", "Input", "Allowance", "+Added", "−Removed", "~Rewritten", "Cached (pred.)",
               "Cached (rec.)", "Marks")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.session: core.Session | None = None

    def set_session(self, session: core.Session | None) -> None:
        self.beginResetModel()
        self.session = session
        self.endResetModel()

    def row_total(self) -> int:
        return 0 if self.session is None else len(self.session.calls)

    def _values(self, i: int) -> list[Any]:
        s = self.session
        assert s is not None
        call, diff = s.calls[i], s.diffs[i]
        starts = [c.start_time for c in s.calls if c.start_time is not None]
        offset = call.start_time - min(starts) if call.start_time is not None and starts else None
        share = s.cached_share(i)
        prefix = (diff.prefix_tokens if diff is not None else 0) if call.input_tokens is not None else None
        return [i + 1, offset, call.model or "", call.input_tokens, s.allowance(i),
                diff.appended_tokens if diff else None, diff.removed_tokens if diff else None,
                diff.rewritten_tokens if diff else None, (prefix, share), call.recorded_cached_tokens,
                core.session_marks(s, i)]

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.session is None or not index.isValid() or not 0 <= index.row() < len(self.session.calls):
            return None
        i, col = index.row(), index.column()
        if role == CALL_ROLE:
            return i
        if role == ROW_ROLE:
            return self.session.calls[i]
        value = self._values(i)[col]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 1:
                return "" if value is None else f"+{value:.2f}s"
            if col == 8:
                prefix, share = value
                return "" if prefix is None or share is None else f"{prefix:,} ({share:.0%})"
            return value if isinstance(value, str) else _num(value)
        if role == SORT_ROLE:
            return value[0] if col == 8 else value
        if role == Qt.ItemDataRole.TextAlignmentRole and col not in (2, 10):
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole:
            call = self.session.calls[i]
            parts = [call.label] + ([call.error] if call.error else []) + \
                [f"under: {' / '.join(s.name for s in call.span_path)}"] * bool(call.span_path)
            if col == 10:
                parts.append(core.SESSION_MARK_LEGEND)
            return "\n".join(parts)
        if role == Qt.ItemDataRole.ForegroundRole and col == 10 and value and value != "N":
            return QColor(CHANGE_COLOURS["compacted"])
        return None


class _Node:
    __slots__ = ("span", "parent", "children", "row", "call")

    def __init__(self, span: core.SpanNode | None, parent: "_Node | None", call: int | None = None) -> None:
        self.span, self.parent, self.children, self.call = span, parent, [], call
        self.row = 0


class SpanTreeModel(QAbstractItemModel):
    """The trace's spans as a tree (parents from the file), in start order; model calls in bold blue,
    with the call index they are in the session (``CALL_ROLE``)."""

    COLUMNS = ("Span", "Kind", "Duration")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._root = _Node(None, None)
        self._by_call: dict[int, _Node] = {}

    def set_session(self, session: core.Session | None) -> None:
        self.beginResetModel()
        self._root, self._by_call = _Node(None, None), {}
        if session is not None:
            calls = {c.request.recorded.span_id: c.index for c in session.calls if c.request.recorded.span_id}
            spans = sorted(session.spans, key=lambda s: (s.start_time is None, s.start_time or 0.0))
            nodes = {s.span_id: _Node(s, None, calls.get(s.span_id)) for s in spans}
            for span in spans:
                node = nodes[span.span_id]
                node.parent = nodes.get(span.parent_id or "", self._root) if span.parent_id != span.span_id \
                    else self._root
                node.row = len(node.parent.children)
                node.parent.children.append(node)
                if node.call is not None:
                    self._by_call[node.call] = node
        self.endResetModel()

    def index_of_call(self, call: int) -> QModelIndex:
        node = self._by_call.get(call)
        return self.createIndex(node.row, 0, node) if node is not None else QModelIndex()

    def _node(self, index: ModelIndex) -> _Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row: int, column: int, parent: ModelIndex = QModelIndex()) -> QModelIndex:
        node = self._node(parent)
        if not 0 <= row < len(node.children) or not 0 <= column < len(self.COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column, node.children[row])

    def parent(self, index: ModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer().parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:
        return len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.COLUMNS):
            return self.COLUMNS[section]
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node: _Node = index.internalPointer()
        span = node.span
        assert span is not None
        col = index.column()
        if role == CALL_ROLE:
            return node.call
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return (f"call {node.call + 1}: " if node.call is not None else "") + (span.name or span.span_id)
            if col == 1:
                return span.kind
            if span.start_time is not None and span.end_time is not None:
                return f"{span.end_time - span.start_time:.2f}s"
            return ""
        if role == Qt.ItemDataRole.FontRole and node.call is not None:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and span.model_call:
            return QColor(MODEL_CALL_COLOUR)
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{span.name} ({span.kind or 'no kind'})\nspan {span.span_id}" + \
                ("\na model call" + (f": call {node.call + 1} of the session" if node.call is not None else
                                     " the importer could not read") if span.model_call else "")
        if role == Qt.ItemDataRole.TextAlignmentRole and col == 2:
            return RIGHT
        return None


class SessionDiffModel(ColumnsModel):
    """The diff of two calls side by side: the common prefix first, then each change with the earlier
    call's messages, tokens and text beside the later call's."""

    COLUMNS = ("Change", "Earlier", "Tokens", "Earlier text", "Later", "Tokens", "Later text")
    TOKEN_COLUMNS = (2, 5)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.diff: core.CallDiff | None = None
        self._rows: list[tuple[str, str, int | None, str, str, int | None, str]] = []

    def set_diff(self, diff: core.CallDiff | None) -> None:
        self.beginResetModel()
        self.diff = diff
        self._rows = []
        if diff is not None:
            shared = f"messages 0-{diff.prefix_messages - 1}" if diff.prefix_messages else "none"
            what = "not counted" if diff.prefix_tokens is None else "the common prefix of the rendered requests"
            self._rows.append(("prefix", shared, diff.prefix_tokens, what, shared, diff.prefix_tokens,
                               f"{diff.prefix_messages} leading message(s) unchanged"))
            for c in diff.changes:
                tools = c.kind == "tools"
                self._rows.append((c.kind, "tools" if tools else _indices(c.before),
                                   c.tokens_before if c.before or tools else None,
                                   c.preview_before if c.before or tools else "", "tools" if tools else _indices(c.after),
                                   c.tokens_after if c.after or tools else None,
                                   (c.detail if tools else f"[{c.roles}] " + (f"{c.detail}: " if c.detail else "")
                                    + (c.preview if c.after else ""))))
        self.endResetModel()

    def row_total(self) -> int:
        return len(self._rows)

    def column_title(self, section: int) -> str:
        if self.diff is not None and section in (1, 4):
            return f"{self.COLUMNS[section]} (call {(self.diff.earlier if section == 1 else self.diff.later) + 1})"
        return self.COLUMNS[section]

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            value = row[col]
            return _num(value) if col in self.TOKEN_COLUMNS else value  # type: ignore[arg-type]
        if role == Qt.ItemDataRole.ForegroundRole and col == 0:
            return QColor(CHANGE_COLOURS.get(row[0], "#757575"))
        if role == Qt.ItemDataRole.FontRole and index.row() == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col in self.TOKEN_COLUMNS:
            return RIGHT
        if role == Qt.ItemDataRole.ToolTipRole and col in (3, 6):
            return row[col]
        return None


def _indices(indices: list[int]) -> str:
    if not indices:
        return ""
    return str(indices[0]) if len(indices) == 1 else f"{indices[0]}-{indices[-1]}" \
        if indices == list(range(indices[0], indices[-1] + 1)) else ",".join(map(str, indices))
