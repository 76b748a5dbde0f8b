"""The sections-and-items pane: the section tree of the shown result and its "only changes" toggle.

It reports the item the person picked (``itemPicked``) and shows what the window selected
(``show_item``) without reporting it back. While a replay is shown, only the sections it changed
(and the selected one) are open, so the changes are what the eye lands on.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

import core
from core.replay import Diff

from ..models import ITEM_ID_ROLE, SECTION_ROLE, ChangeFilterProxy, DecisionDelegate, SectionTreeModel

MIN_TOKENS_WIDTH = 90  # px: a token column never narrower than this when fitted into the view


class SectionTreePane(QWidget):
    itemPicked = Signal(str, object)  # section, item id (None: the section itself)
    onlyChangesToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._syncing = False
        self._fitted: tuple | None = None  # what the columns were last sized to (_fit_columns)
        self._tokens_content: int | None = None  # the token column's content width, as last fitted
        self._tokens_set: int | None = None  # the width _keep_tokens_in_view gave it (another: the person's)
        self.selected_section: str | None = None  # the window's, kept open while a replay is shown
        self.model = SectionTreeModel(self)
        self.proxy = ChangeFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.tree = QTreeView(self)
        self.tree.setModel(self.proxy)
        self.tree.setAccessibleName("Sections and items")
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setItemDelegateForColumn(SectionTreeModel.C_DECISION, DecisionDelegate(self.tree))
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        for col, width in ((0, 220), (1, 150), (2, 150), (3, 170), (4, 90), (5, 150)):
            self.tree.setColumnWidth(col, width)
        self.tree.setColumnHidden(SectionTreeModel.C_CHANGE, True)  # shown while a replay is
        self.only_changes = QCheckBox("Only changes", self)
        self.only_changes.setAccessibleName("Only items the replay changed")
        self.only_changes.setToolTip("Show only the items whose decision the replay changed (Ctrl+Shift+C)")
        self.only_changes.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        header = QHBoxLayout()
        header.addWidget(QLabel("<b>Sections and items</b>", self))
        header.addStretch(1)
        header.addWidget(self.only_changes)
        layout.addLayout(header)
        layout.addWidget(self.tree)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.viewport().installEventFilter(self)
        self.only_changes.toggled.connect(self._only_changes_toggled)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing or not current.isValid():
            return
        self.itemPicked.emit(current.data(SECTION_ROLE), current.data(ITEM_ID_ROLE))

    def _only_changes_toggled(self, on: bool) -> None:
        self.proxy.set_only_changes(on)
        self.expand()
        self.onlyChangesToggled.emit(on)

    def index_for(self, section: str, item_id: str | None) -> QModelIndex:
        return self.proxy.index_for(section, item_id)

    def show_result(self, result: core.AssemblyResult | None, *, diff: Diff | None,
                    recorded: core.AssemblyResult | None) -> None:
        self._syncing = True
        try:
            self.model.set_result(result, diff=diff, recorded=recorded)
            self.tree.setColumnHidden(SectionTreeModel.C_CHANGE, diff is None)
            self.only_changes.setVisible(diff is not None)
            self.expand()
            self._fit_columns(diff is not None)
        finally:
            self._syncing = False

    def _fit_columns(self, changes: bool) -> None:
        """The name and token columns (and the change column while a replay is shown) as wide as their
        contents. Measuring them asks the model for every row's text: when the rows show the same texts,
        open and filtered as last time (a replay shown after another often does), the widths stay."""
        columns = (SectionTreeModel.C_NAME, SectionTreeModel.C_TOKENS) + ((SectionTreeModel.C_CHANGE,) if changes
                                                                            else ())
        shown = (columns, self.model.column_texts(columns), self.proxy.only_changes, self.tree.font().key(),
                 tuple(self.tree.isExpanded(self.proxy.index(r, 0)) for r in range(self.proxy.rowCount())),
                 tuple(self.tree.columnWidth(c) for c in columns))
        if shown == self._fitted:
            return
        for col in columns:
            self.tree.resizeColumnToContents(col)
        self._tokens_content, self._tokens_set = self.tree.columnWidth(SectionTreeModel.C_TOKENS), None
        self._keep_tokens_in_view()
        self._fitted = shown[:-1] + (tuple(self.tree.columnWidth(c) for c in columns),)

    def _keep_tokens_in_view(self) -> None:
        """The token column as wide as its content (``_fit_columns``) but no wider than the room left for it in the
        view (down to ``MIN_TOKENS_WIDTH``), again whenever the view changes width: sized to a long section total
        ("167567 sent · 368635 dropped") in a narrow pane, it pushed the items' right-aligned figures out of sight
        (the column looked empty); the long totals elide instead. A width the person set by hand is kept (until
        the next result is shown, which sizes every fitted column to its content again)."""
        tree, col = self.tree, SectionTreeModel.C_TOKENS
        if self._tokens_content is None or (self._tokens_set is not None and tree.columnWidth(col) != self._tokens_set):
            return
        before = tree.header().sectionPosition(col)  # where it starts, as the columns are ordered on screen
        width = max(MIN_TOKENS_WIDTH, min(self._tokens_content, tree.viewport().width() - before))
        if width != tree.columnWidth(col):
            tree.setColumnWidth(col, width)
        self._tokens_set = width

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if watched is self.tree.viewport() and event.type() == QEvent.Type.Resize:
            self._keep_tokens_in_view()
        return super().eventFilter(watched, event)

    def show_item(self, section: str, item_id: str | None) -> None:
        """Make the item's row (or its section's) current without reporting it."""
        index = self.index_for(section, item_id)
        if index.isValid():
            self._syncing = True
            try:
                self.tree.selectionModel().setCurrentIndex(
                    index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                self.tree.scrollTo(index)
            finally:
                self._syncing = False

    def expand(self) -> None:
        """Every section open; while a replay is shown, only the sections it changed and the selected one."""
        diff = self.model.diff
        if diff is None or self.proxy.only_changes:
            self.tree.expandAll()
            return
        changed = {c.section for c in diff.changes} | {self.selected_section}
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            self.tree.setExpanded(index, index.data(SECTION_ROLE) in changed)
