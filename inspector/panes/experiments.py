"""The Experiments pane: the variants-by-seeds grid of grades, the picked answer beside the rule that
graded it, and the position curve (pass rate by position of the relevant passage, with Wilson
intervals) as a pyqtgraph chart. It shows what the window gives it (``show_view``, ``show_answer``)
and reports a picked cell (``cellPicked``) and the run buttons (``runRequested``, ``cancelRequested``)."""
from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPlainTextEdit, QProgressBar,
                               QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

import core

from ..document.experiments import GLYPHS, ExperimentView

VERDICT_COLOURS = {"pass": "#2E7D32", "fail": "#C62828", "incomplete": "#B26A00"}
CURVE_COLOUR = "#1565C0"


class PositionChart(QWidget):
    """Pass rate by position; the plot items are made once and updated with ``setData``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Position curve")
        self.plot = pg.PlotWidget(parent=self)
        self.plot.setAccessibleName("Pass rate by position of the relevant passage")
        self.plot.setMinimumHeight(150)
        self.plot.setMinimumWidth(320)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "position of the relevant passage (1 = first)")
        item.setLabel("left", "pass rate")
        item.showGrid(y=True, alpha=0.2)
        self._bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0), beam=0.18, pen=pg.mkPen(CURVE_COLOUR, width=1.5))
        self._line = pg.PlotDataItem([], [], pen=pg.mkPen(CURVE_COLOUR, width=1.5, style=Qt.PenStyle.DashLine))
        self._dots = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(CURVE_COLOUR), pen=pg.mkPen("w"))
        for plot_item in (self._bars, self._line, self._dots):
            self.plot.addItem(plot_item)
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)
        self.points: list[core.PositionPoint] = []
        self.apply_palette()

    def apply_palette(self) -> None:
        pal = self.palette()
        base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        self.plot.setBackground(base)
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(text))
            axis.setTextPen(pg.mkPen(text))
        self._dots.setPen(pg.mkPen(base))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.apply_palette()

    def show_curve(self, points: list[core.PositionPoint]) -> None:
        self.points = list(points)
        xs = np.array([float(p.position) for p in points])
        ys = np.array([p.rate for p in points])
        tops = np.array([p.interval[1] - p.rate for p in points])
        bottoms = np.array([p.rate - p.interval[0] for p in points])
        self._bars.setData(x=xs, y=ys, top=tops, bottom=bottoms)
        self._line.setData(xs, ys)
        self._dots.setData(xs, ys)
        item = self.plot.getPlotItem()
        item.setYRange(-0.05, 1.05, padding=0)
        if len(xs):
            item.setXRange(0.5, float(xs.max()) + 0.5, padding=0)
            item.getAxis("bottom").setTicks([[(x, str(int(x))) for x in xs]])
        runs = sorted({p.n for p in points})
        self.caption.setText(
            f"Pass rate per position, {', '.join(map(str, runs))} run(s) each; bars are 95% Wilson intervals. "
            "An illustration for this model and this prompt, not a measure of answer quality." if points else "")


class ExperimentsPane(QWidget):
    cellPicked = Signal(str, int)  # variant, seed
    runRequested = Signal()
    cancelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Experiments")
        self.view: ExperimentView | None = None
        self.title = QLabel("Open an experiment's answers (*.answers.jsonl), or run one on the selected request.", self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.run_button = QPushButton("Run Experiment…", self)
        self.run_button.setToolTip("Send variants of the selected request to a model endpoint you name, N seeds each")
        self.run_button.clicked.connect(self.runRequested)
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.cancel_button.hide()
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        top.addWidget(self.run_button)

        self.grid = QTableWidget(self)
        self.grid.setAccessibleName("Grades: variants by seeds")
        self.grid.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.grid.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.grid.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.grid.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.grid.currentCellChanged.connect(self._cell_changed)

        self.answer_title = QLabel("", self)
        self.answer_title.setWordWrap(True)
        self.answer_title.setTextFormat(Qt.TextFormat.PlainText)
        self.answer_text = QPlainTextEdit(self)
        self.answer_text.setReadOnly(True)
        self.answer_text.setAccessibleName("The model's answer")
        self.provenance = QLabel("", self)
        self.provenance.setWordWrap(True)
        self.provenance.setTextFormat(Qt.TextFormat.PlainText)
        self.provenance.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        answer_box = QWidget(self)
        answer_layout = QVBoxLayout(answer_box)
        answer_layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.answer_title, self.answer_text, self.provenance):
            answer_layout.addWidget(widget)
        answer_layout.setStretch(1, 1)

        self.chart = PositionChart(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.grid)
        self.splitter.addWidget(answer_box)
        self.splitter.addWidget(self.chart)
        for k, stretch in enumerate((3, 3, 4)):
            self.splitter.setStretchFactor(k, stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        self.chart.hide()

    # ---- what the window gives it

    def show_view(self, view: ExperimentView | None) -> None:
        self.view = view
        self.grid.blockSignals(True)
        self.grid.clear()
        self.answer_title.setText("")
        self.answer_text.setPlainText("")
        self.provenance.setText("")
        if view is None:
            self.grid.setRowCount(0)
            self.grid.setColumnCount(0)
            self.chart.hide()
            self.grid.blockSignals(False)
            return
        title = view.title()
        if view.problem:
            title += f"\nNot graded: {view.problem}"
        self.title.setText(title + "\n" + core.ILLUSTRATION)
        variants, seeds = view.answers.variants, view.answers.seeds
        self.grid.setRowCount(len(variants))
        self.grid.setColumnCount(len(seeds) + 3)
        self.grid.setHorizontalHeaderLabels([f"seed {s}" for s in seeds] + ["pass", "fail", "incomplete"])
        self.grid.setVerticalHeaderLabels(variants)
        for r, variant in enumerate(variants):
            counts = {v: 0 for v in ("pass", "fail", "incomplete")}
            for c, seed in enumerate(seeds):
                grade = view.grade(variant, seed)
                answer = view.answer(variant, seed)
                cell = QTableWidgetItem(GLYPHS.get(grade.verdict, "?") if grade else ("?" if answer else ""))
                cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if grade is not None:
                    counts[grade.verdict] += 1
                    cell.setForeground(QBrush(QColor("white")))
                    cell.setBackground(QBrush(QColor(VERDICT_COLOURS[grade.verdict])))
                    cell.setToolTip(f"{grade.verdict}: {grade.rule} ({grade.detail})")
                self.grid.setItem(r, c, cell)
            for k, verdict in enumerate(("pass", "fail", "incomplete")):
                total = QTableWidgetItem(str(counts[verdict]))
                total.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.grid.setItem(r, len(seeds) + k, total)
        self.grid.blockSignals(False)
        curve = view.graded.position_curve() if view.graded is not None else []
        self.chart.setVisible(bool(curve))
        self.chart.show_curve(curve)

    def show_answer(self, variant: str, seed: int) -> None:
        view = self.view
        answer = view.answer(variant, seed) if view is not None else None
        if answer is None:
            return
        grade = view.grade(variant, seed)
        verdict = f"{grade.verdict} — rule {grade.rule}: {grade.detail}" if grade else "not graded"
        self.answer_title.setText(f"{variant}, seed {seed}: {verdict}")
        text = answer.get("answer")
        self.answer_text.setPlainText(text if text else f"(no answer: {answer.get('error') or 'empty'})")
        tokens = answer.get("prompt_tokens") or {}
        model = answer.get("model") or {}
        latency = answer.get("latency_seconds")
        self.provenance.setText(
            f"prompt tokens: ours {tokens.get('ours')} ({tokens.get('counter')}), server {tokens.get('server')}; "
            f"finish {answer.get('finish_reason')}; latency {latency} s; model {model.get('reported')}; "
            f"request sha256 {str(answer.get('request_sha256'))[:16]}…; sampling {json.dumps(answer.get('sampling'))}")

    def select(self, variant: str, seed: int) -> None:
        """Put the grid's current cell on (variant, seed), which reports it like a click."""
        if self.view is None:
            return
        variants, seeds = self.view.answers.variants, self.view.answers.seeds
        if variant in variants and seed in seeds:
            self.grid.setCurrentCell(variants.index(variant), seeds.index(seed))

    def show_progress(self, done: int, total: int, text: str) -> None:
        self.progress.show()
        self.cancel_button.show()
        self.run_button.setEnabled(False)
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{done}/{total} {text}")

    def run_finished(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.run_button.setEnabled(True)

    # ---- what the person does

    def _cell_changed(self, row: int, column: int, _prev_row: int, _prev_column: int) -> None:
        if self.view is None or row < 0:
            return
        variants, seeds = self.view.answers.variants, self.view.answers.seeds
        if row < len(variants) and 0 <= column < len(seeds):
            self.cellPicked.emit(variants[row], seeds[column])
