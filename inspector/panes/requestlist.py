"""The requests pane: the filter box, the "has drops" and "audit errors" toggles, and the list itself.

It reports the row the person picked (``rowPicked``) and shows the row the window selected
(``show_row``) without reporting it back.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QApplication, QCheckBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, \
    QMenu, QStyleOptionViewItem, QTableView, QVBoxLayout, QWidget

from ..document import Row
from ..document.listing import listing
from ..models import RequestFilterProxy, RequestListModel
from .listcolumns import fill_columns_menu, hidden_names, hide_named

SELECT_ROW = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
MIN_COLUMN = 48  # no column is squeezed below this when the widest ones give up width
NAME_SHARE = 0.4  # of the list's width: the request's name keeps at least this much (or its whole width) when short
SIZED_ROWS = 300  # rows a column's content width is measured over (a large JSONL stays fast)
TYPING_ROWS = 20000  # above this many rows the filter waits for a pause in typing (FILTER_PAUSE_MS)
FILTER_PAUSE_MS = 150
REFIT_MS = 500  # columns are fitted again at most this often while rows are read in place
MEASURED_TEXTS = 20000  # cell widths remembered between fits (then measured afresh)


def fitted_widths(wanted: list[int], available: int, minimum: int = MIN_COLUMN) -> list[int]:
    """Each column at its wanted width when they all fit; otherwise the widest give up width first
    (one common cap, never below ``minimum``), so the narrow ones are never elided."""
    if sum(wanted) <= available or not wanted:
        return list(wanted)
    low, high = minimum, max(wanted)
    while low < high:  # the largest cap that fits
        cap = (low + high + 1) // 2
        if sum(min(w, cap) for w in wanted) <= available:
            low = cap
        else:
            high = cap - 1
    return [min(w, max(low, minimum)) for w in wanted]


def column_widths(content: list[int], headers: list[int], flexible: list[bool], available: int) -> list[int]:
    """Widths for the requests list: every column at its content (and header) width when there is room;
    else the text columns (``flexible``) give way first, down to ``MIN_COLUMN``; then the figures' headers
    elide (the figures themselves stay whole); only then does every column give way. Among the text columns the
    first (the request's name, what tells the rows apart) keeps at least ``NAME_SHARE`` of the room (or its whole
    width, if less) and takes what the others leave, and when every column gives way it still keeps that share,
    even if the list then scrolls sideways (in a narrow pane every name read "rag-r…")."""
    whole = [max(c, h) for c, h in zip(content, headers)]
    if sum(whole) <= available:
        return whole
    for fixed in (whole, content):  # figures with their headers whole, then with the headers elided
        rigid = sum(f for f, flex in zip(fixed, flexible) if not flex)
        flex_wanted = [w for w, flex in zip(whole, flexible) if flex]
        if rigid + MIN_COLUMN * len(flex_wanted) <= available:
            room = available - rigid
            if flexible[0]:  # the name keeps its share at least, the other text columns fit the rest, and
                # the name takes what they leave (up to its whole width)
                floor = min(whole[0], max(MIN_COLUMN, int(available * NAME_SHARE)),
                            room - MIN_COLUMN * (len(flex_wanted) - 1))
                others = fitted_widths(flex_wanted[1:], room - floor)
                flex_widths = iter([min(whole[0], room - sum(others))] + others)
            else:
                flex_widths = iter(fitted_widths(flex_wanted, room))
            return [next(flex_widths) if flex else f for f, flex in zip(fixed, flexible)]
    widths = fitted_widths(content, available)
    if widths:
        widths[0] = max(widths[0], min(content[0], int(available * NAME_SHARE)))
    return widths


class RequestListPane(QWidget):
    rowPicked = Signal(object)  # the Row the person made current, or None
    columnsChanged = Signal(list)  # the names of the columns the person hid (``listcolumns``)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._syncing = False
        self.model = RequestListModel(self)
        self.proxy = RequestFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter requests (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setAccessibleName("Filter requests")
        self.has_drops = QCheckBox("Has drops", self)
        self.has_drops.setAccessibleName("Only requests with dropped items")
        self.audit_errors = QCheckBox("Audit errors", self)
        self.audit_errors.setAccessibleName("Only requests with audit errors")
        self.view = QTableView(self)
        self.view.setModel(self.proxy)
        self.view.setAccessibleName("Requests")
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # file order until a header is clicked
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setResizeContentsPrecision(SIZED_ROWS)
        # a column narrower than its title shows the title's start, elided ("Requ…"), not its middle clipped
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.shown_label = QLabel(self)
        self.shown_label.setAccessibleName("Requests shown")
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_columns)
        self._refit_timer = QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(REFIT_MS)
        self._refit_timer.timeout.connect(self.fit_columns)
        self._sized = False  # the person has not resized a column yet
        self._measured_font = ""  # the font the widths below were measured with (fit_columns)
        self._advance: dict[str, int] = {}  # a cell text's width
        self._padding: dict[tuple[int, bool], int] = {}  # the delegate's padding around a column's text
        header.sectionResized.connect(self._section_resized)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)  # which columns are shown
        header.customContextMenuRequested.connect(self._header_menu)
        self._fitting = False
        self._filter_timer = QTimer(self)  # typing into a long list filters once per pause, not per key
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(FILTER_PAUSE_MS)
        self._filter_timer.timeout.connect(lambda: self.proxy.set_text(self.filter_edit.text()))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("<b>Requests</b>", self))
        filter_row = QHBoxLayout()
        filter_row.addWidget(self.filter_edit, 1)
        filter_row.addWidget(self.shown_label)
        layout.addLayout(filter_row)
        toggles = QHBoxLayout()
        toggles.addWidget(self.has_drops)
        toggles.addWidget(self.audit_errors)
        toggles.addStretch(1)
        layout.addLayout(toggles)
        layout.addWidget(self.view)

        self.filter_edit.textChanged.connect(self._filter_changed)
        self.has_drops.toggled.connect(self.proxy.set_has_drops)
        self.audit_errors.toggled.connect(self.proxy.set_audit_errors)
        self.view.selectionModel().currentRowChanged.connect(self._current_changed)
        for signal in (self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.modelReset,
                       self.proxy.layoutChanged):
            signal.connect(self._rows_changed)
        self.model.dataChanged.connect(self._refit_soon)
        self.view.viewport().installEventFilter(self)
        self._rows_changed()

    def _filter_changed(self, text: str) -> None:
        if text and self.model.rowCount() > TYPING_ROWS:
            self._filter_timer.start()
        else:
            self._filter_timer.stop()
            self.proxy.set_text(text)

    # ---- "N of M shown" and columns sized to their content

    def _rows_changed(self, *_args) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.shown_label.setText(f"{shown} of {total} shown")
        self._fit_timer.start()

    def _refit_soon(self, *_args) -> None:
        """Rows read in place may be wider now: fitted again within a moment, once for a whole stream of them."""
        if not self._refit_timer.isActive():
            self._refit_timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_timer.start()
        return super().eventFilter(watched, event)

    def _section_resized(self, column: int, _old: int, _new: int) -> None:
        # a width the person dragged stays theirs (the stretched last column and our own fitting do not count)
        if not self._fitting and column != self.model.columnCount() - 1 and QApplication.mouseButtons() \
                != Qt.MouseButton.NoButton:
            self._sized = True

    def fill_columns_menu(self, menu: QMenu) -> QMenu:
        """``menu`` (the header's right-click menu, View > Request List Columns) with a checkable entry per column."""
        return fill_columns_menu(menu, self.view, self._columns_changed)

    def _header_menu(self, at) -> None:
        menu = self.fill_columns_menu(QMenu(self))
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(self.view.horizontalHeader().mapToGlobal(at))

    def set_hidden_columns(self, names: list[str]) -> None:
        """Hide the columns named (as remembered from an earlier run); the others are shown."""
        if hide_named(self.view, names):
            self.fit_columns()

    def _columns_changed(self) -> None:
        self.fit_columns()
        self.columnsChanged.emit(hidden_names(self.view))

    def fit_columns(self) -> None:
        """Every column as wide as its content (header included) when there is room; else the widest
        give up width and their text is elided."""
        if self._sized or self.model.rowCount() == 0:
            return
        header = self.view.horizontalHeader()
        columns = [c for c in range(self.model.columnCount()) if not self.view.isColumnHidden(c)]
        content = [w + 4 for w in self._content_widths(columns)]
        headers = [header.sectionSizeHint(c) + 4 for c in columns]
        flexible = [c in RequestListModel.TEXT_COLUMNS for c in columns]
        widths = column_widths(content, headers, flexible, self.view.viewport().width())
        self._fitting = True
        try:
            for column, width in zip(columns, widths):
                header.resizeSection(column, width)
        finally:
            self._fitting = False

    def _content_widths(self, columns: list[int]) -> list[int]:
        """What ``sizeHintForColumn`` gives (the delegate's size hint of the widest cell among the shown rows
        and the first ``SIZED_ROWS``), without asking the delegate for every cell of those rows (each ask is
        several calls into Python): the texts are the rows' precomputed list values measured with the view's
        font, plus the delegate's own padding around a text (with and without the audit icon), asked once."""
        view, proxy = self.view, self.proxy
        count = proxy.rowCount()
        top = max(0, view.rowAt(0))
        bottom = view.rowAt(view.viewport().height())
        bottom = count - 1 if bottom < 0 else bottom
        shown = sorted(set(range(min(count, SIZED_ROWS))) | set(range(top, min(count, bottom + 1))))
        rows = [(p, self.model.row_at(proxy.source_row(p))) for p in shown]
        values = [(p, row.pending, listing(row)) for p, row in rows if row is not None]
        metrics = view.fontMetrics()
        font = view.font().key()
        if font != self._measured_font:  # widths measured with another font are forgotten
            self._measured_font, self._advance, self._padding = font, {}, {}
        advance, padding = self._advance, self._padding  # kept between fits: a refit measures only new texts
        if len(advance) > MEASURED_TEXTS:
            advance.clear()
        option = QStyleOptionViewItem()
        view.initViewItemOption(option)
        delegate = view.itemDelegate()
        grid = 1 if view.showGrid() else 0
        widths = []
        for column in columns:
            widest = 0
            for p, pending, listed in values:
                text = listed.texts[column]
                width = advance.get(text)
                if width is None:
                    width = advance[text] = metrics.horizontalAdvance(text)
                icon = column == RequestListModel.C_AUDIT and not pending
                pad = padding.get((column, icon))
                if pad is None:
                    pad = padding[(column, icon)] = delegate.sizeHint(option, proxy.index(p, column)).width() - width
                widest = max(widest, width + pad)
            widths.append(widest + grid)
        return widths

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._syncing:
            return
        source = self.proxy.mapToSource(current)
        self.rowPicked.emit(self.model.row_at(source.row()) if source.isValid() else None)

    def proxy_row_of(self, row: Row) -> int:
        number = self.model.row_number(row)
        if number < 0:
            return -1
        return self.proxy.mapFromSource(self.model.index(number, 0)).row()

    def select_proxy_row(self, number: int) -> None:
        """Make the ``number``-th shown row current, as a person's click would (``rowPicked`` follows)."""
        index = self.proxy.index(number, 0)
        if index.isValid():
            self.view.selectionModel().setCurrentIndex(index, SELECT_ROW)
            self.view.scrollTo(index)

    def select_first(self) -> None:
        if self.proxy.rowCount():
            self.select_proxy_row(0)

    def step(self, delta: int) -> None:
        count = self.proxy.rowCount()
        if not count:
            return
        current = self.view.currentIndex()
        number = current.row() + delta if current.isValid() else 0
        self.select_proxy_row(max(0, min(count - 1, number)))

    def show_row(self, row: Row | None) -> None:
        """Mark ``row`` as the current one without reporting it (the window already knows)."""
        self._syncing = True
        try:
            if row is None:
                self.view.selectionModel().clearSelection()
            else:
                number = self.proxy_row_of(row)
                if number >= 0:
                    index = self.proxy.index(number, 0)
                    self.view.selectionModel().setCurrentIndex(index, SELECT_ROW)
                    self.view.scrollTo(index)
        finally:
            self._syncing = False

    def focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()
