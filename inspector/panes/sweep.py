"""The sweep view: one row per setting with its figures, two histograms of the picked setting (input
tokens, kept items lost) whose bars can be clicked, and the requests of the clicked bucket.

The pane shows what the window gives it (``show_sweep``, ``show_members``) and reports what the
person picked: ``settingPicked``, ``bucketPicked(setting, histogram, bucket)`` and
``memberActivated(ref, setting)`` (a double-click: open that request replayed under that setting).
Bar items are created once per histogram and updated with ``setOpts``.
"""
from __future__ import annotations

from typing import Any, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QListWidget, QListWidgetItem,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

COLUMNS = ("Setting", "Requests", "Overflows", "Errors", "Losing kept items", "Items lost", "Audit errors",
           "Input p50", "Input p95", "Free p50", "Input tokens", "Input cost $")
HISTOGRAMS = (("input_tokens", "input tokens", "#1565C0"), ("kept_items_lost", "kept items lost", "#C62828"))
REF_ROLE = Qt.ItemDataRole.UserRole + 1


def _cells(entry: dict[str, Any]) -> list[str]:
    tokens, free = entry["input_tokens"], entry["free_tokens"]

    def shown(value) -> str:
        return "-" if value is None else f"{value:,}"

    cost = entry.get("input_cost_usd")
    return [entry["setting"]["label"], shown(entry["requests"]), shown(entry["overflows"]), shown(entry["errors"]),
            shown(entry["requests_losing_kept_items"]), shown(entry["kept_items_lost"]), shown(entry["audit_errors"]),
            shown(tokens["p50"]), shown(tokens["p95"]), shown(free["p50"]), shown(entry["input_tokens_total"]),
            "-" if cost is None else f"{cost:.4f}"]


class _Histogram(QWidget):
    bucketPicked = Signal(int)

    def __init__(self, title: str, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(parent=self)
        self.plot.setAccessibleName(f"Histogram of {title}: click a bar to list its requests")
        self.plot.setMinimumHeight(150)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", title)
        item.setLabel("left", "requests")
        self.bars = pg.BarGraphItem(x=[], height=[], width=1, brush=colour)
        self.picked = pg.BarGraphItem(x=[], height=[], width=1, brush="#FFB300")
        self.plot.addItem(self.bars)
        self.plot.addItem(self.picked)
        self.buckets: list[dict[str, int]] = []
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.apply_palette()

    def apply_palette(self) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(text))
            axis.setTextPen(pg.mkPen(text))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_palette()
        super().changeEvent(event)

    def show_buckets(self, buckets: Sequence[dict[str, int]]) -> None:
        self.buckets = list(buckets)
        x = [(b["lo"] + b["hi"]) / 2 for b in self.buckets]
        width = [max(b["hi"] - b["lo"], 1) * 0.9 for b in self.buckets]
        self.bars.setOpts(x=x, height=[b["count"] for b in self.buckets], width=width)
        self.mark(None)
        if self.buckets:
            self.plot.setXRange(self.buckets[0]["lo"], self.buckets[-1]["hi"], padding=0.02)
            self.plot.setYRange(0, max(1, max(b["count"] for b in self.buckets)), padding=0.05)

    def mark(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.buckets):
            self.picked.setOpts(x=[], height=[], width=1)
            return
        b = self.buckets[index]
        self.picked.setOpts(x=[(b["lo"] + b["hi"]) / 2], height=[b["count"]], width=[max(b["hi"] - b["lo"], 1) * 0.9])

    def bucket_at(self, x: float) -> int | None:
        for i, b in enumerate(self.buckets):
            if b["lo"] <= x < b["hi"] and b["count"]:
                return i
        return None

    def _clicked(self, event) -> None:
        view = self.plot.getPlotItem().getViewBox()
        if not view.sceneBoundingRect().contains(event.scenePos()):
            return
        index = self.bucket_at(view.mapSceneToView(event.scenePos()).x())
        if index is not None:
            self.bucketPicked.emit(index)


class SweepPane(QWidget):
    settingPicked = Signal(int)
    bucketPicked = Signal(int, str, int)  # setting, histogram name, bucket index
    memberActivated = Signal(str, int)  # request ref, setting

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Sweep")
        self.sweep: dict[str, Any] | None = None
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setAccessibleName("Sweep settings")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.histograms = {name: _Histogram(title, colour, self) for name, title, colour in HISTOGRAMS}
        self.members_caption = QLabel("Click a bar to list its requests; double-click one to open it replayed "
                                      "under that setting.", self)
        self.members_caption.setWordWrap(True)
        self.members = QListWidget(self)
        self.members.setAccessibleName("Requests in the bucket")
        charts = QWidget(self)
        row = QHBoxLayout(charts)
        row.setContentsMargins(0, 0, 0, 0)
        for histogram in self.histograms.values():
            row.addWidget(histogram, 1)
        listing = QWidget(self)
        column = QVBoxLayout(listing)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.members_caption)
        column.addWidget(self.members, 1)
        row.addWidget(listing, 1)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(charts)
        splitter.setSizes([160, 240])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.caption)
        layout.addWidget(splitter, 1)
        self.table.itemSelectionChanged.connect(self._setting_changed)
        for name, histogram in self.histograms.items():
            histogram.bucketPicked.connect(lambda index, n=name: self._bucket(n, index))
        self.members.itemActivated.connect(self._activated)

    def current_setting(self) -> int:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        return rows[0].row() if rows else 0

    def show_sweep(self, sweep: dict[str, Any], caption: str) -> None:
        self.sweep = sweep
        self.caption.setText(caption)
        self.table.setRowCount(len(sweep["settings"]))
        for r, entry in enumerate(sweep["settings"]):
            for c, text in enumerate(_cells(entry)):
                cell = QTableWidgetItem(text)
                if c:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, cell)
        self.members.clear()
        if sweep["settings"]:
            self.table.selectRow(0)
            self._setting_changed()

    def _setting_changed(self) -> None:
        if self.sweep is None or not self.sweep["settings"]:
            return
        index = self.current_setting()
        entry = self.sweep["settings"][index]
        for name, histogram in self.histograms.items():
            histogram.show_buckets(entry["histograms"][name])
        self.members.clear()
        self.settingPicked.emit(index)

    def _bucket(self, name: str, index: int) -> None:
        for other, histogram in self.histograms.items():
            histogram.mark(index if other == name else None)
        self.bucketPicked.emit(self.current_setting(), name, index)

    def show_members(self, caption: str, members: Sequence[tuple[str, str]]) -> None:
        """``members``: (ref, text) per request of the picked bucket."""
        self.members_caption.setText(caption)
        self.members.clear()
        for ref, text in members:
            item = QListWidgetItem(text)
            item.setData(REF_ROLE, ref)
            item.setToolTip(ref)
            self.members.addItem(item)

    def _activated(self, item: QListWidgetItem) -> None:
        self.memberActivated.emit(item.data(REF_ROLE), self.current_setting())
