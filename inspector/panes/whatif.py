"""The what-if chart (pyqtgraph): tokens sent per section against the context limit, across a sweep.

Sections are stacked areas in their colours (each curve is the running total up to its section,
filled down to zero, drawn behind the smaller totals); dots are the total input tokens of each point
and can be clicked to try that limit; a red cross at zero marks a limit where the required content
does not fit. A dashed line marks the recorded limit, a solid one the current edit. Plot items are
created once per section name and updated with ``setData``; a section's new area and each entry of a new
legend are made one an event-loop turn (pyqtgraph makes each in milliseconds of Python), so the first sweep
is not one long burst of the GUI thread. Export: PNG or SVG (``files/charts.py``).
"""
from __future__ import annotations

from typing import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from core.replay import SweepPoint

from .. import theme
from ..files.charts import ChartExportError, chart_name, export_chart, save_chart
from .budget.plot import TokenAxis
from .plotstyle import style_plot

FAIL_COLOUR = "#C62828"
EMPTY_RANGE = (0.0, 1.0)  # both axes of a chart with nothing in it (as it starts)


class WhatIfChart(QWidget):
    limitPicked = Signal(int)  # a point was clicked: try that context limit
    exported = Signal(str)  # the path the chart was written to
    exportFailed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("What-if chart")
        self.points: list[SweepPoint] = []
        self.sections: list[str] = []
        self._legend_sections: list[str] = []  # the sections the legend names (or is being given) now
        self._legend_due: list[str] = []  # the legend's entries still to add, one an event-loop turn
        self._wanted: tuple | None = None  # the sweep to draw once its sections' areas exist (set_points)
        self._stepper = QTimer(self)  # the next step, at the next event-loop turn (gone with the chart)
        self._stepper.setSingleShot(True)
        self._stepper.setInterval(0)
        self._stepper.timeout.connect(self._step)
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setAccessibleName("What-if summary")
        self.export_button = QToolButton(self)
        self.export_button.setText("Export")
        self.export_button.setAccessibleName("Export the what-if chart")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Save chart as PNG…", lambda: self.save_chart("png"))
        menu.addAction("Save chart as SVG…", lambda: self.save_chart("svg"))
        self.export_button.setMenu(menu)
        self.plot = pg.PlotWidget(parent=self, axisItems={"bottom": TokenAxis("bottom"), "left": TokenAxis("left")})
        self.plot.setAccessibleName("What-if plot: tokens sent per section against the context limit")
        self.plot.setMinimumHeight(180)
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.setLabel("bottom", "context limit (tokens)")
        item.setLabel("left", "tokens sent")
        self.view = item.getViewBox()
        self.view.disableAutoRange()  # each sweep sets both ranges: no range worked out again per item added
        self.legend = item.addLegend(offset=(8, 4), labelTextSize="8pt")
        self._areas: dict[str, pg.PlotDataItem] = {}
        self._totals = pg.ScatterPlotItem(size=8, symbol="o")
        self._failed = pg.ScatterPlotItem(size=11, symbol="x")
        # The line labels sit below the legend (top left: seven sections fill the top two fifths), so neither hides
        # the other; each is right of its line, or left of it once the line is right of the middle (at the right
        # edge it would be cut off)
        self._recorded = pg.InfiniteLine(angle=90, movable=False, label="",
                                         labelOpts={"position": 0.42, "anchors": [(0, 0.5), (1, 0.5)]})
        self._edit = pg.InfiniteLine(angle=90, movable=False, label="",
                                     labelOpts={"position": 0.32, "anchors": [(0, 0.5), (1, 0.5)]})
        for line in (self._totals, self._failed, self._recorded, self._edit):
            self.plot.addItem(line)
        self._recorded.setZValue(20)
        self._edit.setZValue(21)
        self._totals.setZValue(15)
        self._failed.setZValue(16)
        self._recorded_limit: int | None = None
        self._edit_limit: int | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.apply_palette()
        self.clear("")

    # ---- theme

    def apply_palette(self) -> None:
        pal = self.palette()
        base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        style_plot(self.plot, pal)
        self._recorded.setPen(pg.mkPen(text, width=2, style=Qt.PenStyle.DashLine))
        self._edit.setPen(pg.mkPen(pal.color(QPalette.ColorRole.Highlight), width=2))
        for line in (self._recorded, self._edit):
            line.label.setColor(text)
            line.label.fill = pg.mkBrush(theme.with_alpha(base, 220))
        self._totals.setPen(pg.mkPen(text, width=1))
        self._totals.setBrush(pg.mkBrush(base))
        self._failed.setPen(pg.mkPen(FAIL_COLOUR, width=2))
        self._failed.setBrush(pg.mkBrush(FAIL_COLOUR))
        self.legend.setLabelTextColor(text)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.apply_palette()

    # ---- content

    def clear(self, note: str) -> None:
        self._wanted = None
        self._legend_due = []
        self.points = []
        self.sections = []
        for area in self._areas.values():
            area.setData([], [])
            area.hide()
        self.legend.clear()
        self._legend_sections = []
        self._totals.setData([], [])
        self._failed.setData([], [])
        self._recorded.hide()
        self._edit.hide()
        self.view.setRange(xRange=EMPTY_RANGE, yRange=EMPTY_RANGE, padding=0)  # (not the last row's limits)
        self.caption.setText(note)

    def set_computing(self) -> None:
        self.caption.setText("What if: computing tokens sent per section across context limits…")

    def set_points(self, points: Sequence[SweepPoint], recorded_limit: int | None, order: Sequence[str]) -> None:
        """Show a sweep; ``order`` is the sections' order (the result's prompt order). Drawn now when every
        section it shows has its area, else once they have (one made each event-loop turn)."""
        self._wanted = (points, recorded_limit, order)
        self._step()

    def is_idle(self) -> bool:
        """Nothing of the last sweep is still to draw."""
        return self._wanted is None and not self._legend_due

    def _step(self) -> None:
        """One piece of the chart's setup (a new section's area, or a legend entry) or the sweep drawn."""
        if self._wanted is not None:
            points, recorded_limit, order = self._wanted
            sections = self._sections_of(points, order)
            missing = next((s for s in sections if s not in self._areas), None)
            if missing is not None:
                self._area(missing)
            else:
                self._wanted = None
                self._draw(points, recorded_limit, sections)
        elif self._legend_due:
            section = self._legend_due.pop(0)
            self.legend.addItem(self._areas[section], theme.section_title(section))
        if (self._wanted is not None or self._legend_due) and not self._stepper.isActive():
            self._stepper.start()

    @staticmethod
    def _sections_of(points: Sequence[SweepPoint], order: Sequence[str]) -> list[str]:
        present = {s for p in points if p.fits for s, tokens in p.section_tokens.items() if tokens > 0}
        return [s for s in theme.section_order(list(order) + sorted(present)) if s in present]

    def _draw(self, points: Sequence[SweepPoint], recorded_limit: int | None, sections: list[str]) -> None:
        self.points = sorted(points, key=lambda p: p.value)
        fits = [p for p in self.points if p.fits]
        self.sections = sections
        xs = [float(p.value) for p in fits]
        running = [0.0] * len(fits)
        if self.sections != self._legend_sections:  # the same sections: the legend stays as it is
            self.legend.clear()
            self._legend_sections = list(self.sections)
            self._legend_due = list(self.sections)
        for z, section in enumerate(self.sections):
            running = [r + p.section_tokens.get(section, 0) for r, p in zip(running, fits)]
            area = self._areas[section]
            area.setData(xs, list(running))
            area.setZValue(-z)  # the larger running totals behind the smaller ones
            area.show()
        for section, area in self._areas.items():
            if section not in self.sections:
                area.setData([], [])
                area.hide()
        self._totals.setData(xs, [float(p.input_tokens or 0) for p in fits],
                             data=[p.value for p in fits])
        failed = [p for p in self.points if not p.fits]
        self._failed.setData([float(p.value) for p in failed], [0.0] * len(failed), data=[p.value for p in failed])
        self._recorded_limit = recorded_limit
        self._update_line(self._recorded, recorded_limit, "recorded")
        self._update_line(self._edit, self._edit_limit, "edit")
        if self.points:
            low, high = self.points[0].value, self.points[-1].value
            for value in (recorded_limit, self._edit_limit):
                if value is not None:
                    low, high = min(low, value), max(high, value)
            top = max([p.input_tokens or 0 for p in fits] + [1])
            self.view.setXRange(low, high, padding=0.04)
            self.view.setYRange(0, top * 1.18, padding=0)
        smallest = fits[0].value if fits else None
        text = (f"What if: tokens sent per section at {len(self.points)} context limits "
                f"({self.points[0].value}–{self.points[-1].value}). Click a point to try that limit."
                if self.points else "What if: no points.")
        if failed:
            text += (f" Below {smallest} the required content does not fit (red ×)." if smallest is not None
                     else " At none of these limits does the required content fit.")
        self.caption.setText(text)

    def set_edit_limit(self, value: int | None) -> None:
        self._edit_limit = value
        self._update_line(self._edit, value, "edit")

    def _area(self, section: str) -> pg.PlotDataItem:
        area = self._areas.get(section)
        if area is None:
            colour = theme.section_colour(section)
            area = pg.PlotDataItem(pen=pg.mkPen(colour.darker(130), width=1), fillLevel=0.0,
                                   brush=pg.mkBrush(colour))
            self.plot.addItem(area)
            self._areas[section] = area
        return area

    @staticmethod
    def _update_line(line: pg.InfiniteLine, value: int | None, text: str) -> None:
        if value is None:
            line.hide()
            return
        line.setValue(value)
        line.show()
        line.label.setFormat(f"{text} {value}")

    # ---- export

    def export(self, path, fmt: str):
        """Write the chart (areas, dots, lines, legend and axes) as ``fmt`` ("png" or "svg") to ``path``."""
        return export_chart(self.plot.getPlotItem(), path, fmt)

    def save_chart(self, fmt: str) -> None:
        try:
            path = save_chart(self, self.plot.getPlotItem(), chart_name("what-if", None, "chart", fmt), fmt)
        except ChartExportError as exc:
            self.exportFailed.emit(str(exc))
            return
        if path is not None:
            self.exported.emit(str(path))

    # ---- picking a limit

    def point_values(self) -> list[int]:
        return [p.value for p in self.points]

    def nearest_value(self, x: float) -> int | None:
        if not self.points:
            return None
        return min(self.points, key=lambda p: abs(p.value - x)).value

    def point_position(self, value: int) -> QPoint:
        """Where the dot (or cross) of ``value`` is on the plot's viewport, for tests and tooling."""
        point = next(p for p in self.points if p.value == value)
        scene = self.view.mapViewToScene(QPointF(float(value), float(point.input_tokens or 0)))
        return self.plot.mapFromScene(scene)

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or not self.points:
            return
        if not self.view.sceneBoundingRect().contains(event.scenePos()):
            return
        value = self.nearest_value(self.view.mapSceneToView(event.scenePos()).x())
        if value is not None:
            self.limitPicked.emit(int(value))
