"""The session timeline (pyqtgraph): one bar per model call, its input tokens stacked by section, the
window and the allowance as lines, the cached prefix shaded over each bar, and marks above the calls
where something was compacted, removed or rewritten. Plot items are made once (bars once per section
name) and updated with ``setOpts``/``setData``; clicking a bar reports its call (``callPicked``)."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

import core

from .. import theme
from .plotstyle import fixed_plot, style_plot

COMPACTED_COLOUR = "#B26A00"
REMOVED_COLOUR = "#C62828"
WINDOW_COLOUR = "#C62828"


class SessionChart(QWidget):
    callPicked = Signal(int)  # the index (into session.calls) of the bar clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Session timeline")
        self.session: core.Session | None = None
        self.by_time = False
        self.xs: list[float] = []
        self.caption = QLabel(self)
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.plot = fixed_plot(self, "Session timeline: input tokens of each call, stacked by section", "input tokens",
                               min_height=170)
        item = self.plot.getPlotItem()
        self.view = item.getViewBox()
        self.legend = item.addLegend(offset=(8, 4), labelTextSize="8pt", colCount=4)
        self._bars: dict[str, pg.BarGraphItem] = {}
        self._cached = pg.BarGraphItem(x=[], height=[], width=0.3)
        self._window = pg.InfiniteLine(angle=0, movable=False)
        self._allowance = pg.InfiniteLine(angle=0, movable=False)
        # legend samples of the two lines (an InfiniteLine has no sample of its own)
        self._window_sample, self._allowance_sample = pg.PlotDataItem([], []), pg.PlotDataItem([], [])
        self._compacted = pg.ScatterPlotItem(size=12, symbol="t")
        self._removed = pg.ScatterPlotItem(size=10, symbol="x")
        self._selected = pg.InfiniteLine(angle=90, movable=False)
        for z, line in enumerate((self._cached, self._window, self._allowance, self._compacted, self._removed,
                                  self._selected)):
            self.plot.addItem(line)
            line.setZValue(10 + z)
        self.legend.addItem(self._cached, "cached prefix (predicted)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.caption)
        layout.addWidget(self.plot, 1)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.apply_palette()

    def apply_palette(self) -> None:
        pal = self.palette()
        base, text = style_plot(self.plot, pal)
        self._cached.setOpts(brush=pg.mkBrush(theme.with_alpha(text, 70)), pen=pg.mkPen(None))
        self._window.setPen(pg.mkPen(WINDOW_COLOUR, width=2))
        self._allowance.setPen(pg.mkPen(text, width=1.5, style=Qt.PenStyle.DashLine))
        self._window_sample.setPen(self._window.pen)
        self._allowance_sample.setPen(self._allowance.pen)
        self._compacted.setPen(pg.mkPen(COMPACTED_COLOUR))
        self._compacted.setBrush(pg.mkBrush(COMPACTED_COLOUR))
        self._removed.setPen(pg.mkPen(REMOVED_COLOUR, width=2))
        self._removed.setBrush(pg.mkBrush(REMOVED_COLOUR))
        self._selected.setPen(pg.mkPen(pal.color(QPalette.ColorRole.Highlight), width=2))
        self.legend.setLabelTextColor(text)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.apply_palette()

    # ---- content

    def set_by_time(self, on: bool) -> None:
        self.by_time = on
        self.show_session(self.session)

    def _positions(self, session: core.Session) -> tuple[list[float], float]:
        starts = [c.start_time for c in session.calls]
        if self.by_time and starts and all(s is not None for s in starts):
            first = min(s for s in starts if s is not None)
            xs = [float(s - first) for s in starts if s is not None]
            gaps = [b - a for a, b in zip(xs, xs[1:]) if b > a]
            return xs, (min(gaps) if gaps else 1.0) * 0.8
        return [float(i + 1) for i in range(len(session.calls))], 0.8

    def show_session(self, session: core.Session | None) -> None:
        self.session = session
        calls = session.calls if session is not None else []
        self.xs, width = self._positions(session) if session is not None else ([], 0.8)
        present = [s for s in theme.section_order([name for c in calls for name in c.sections])]
        self.legend.clear()
        base = [0.0] * len(calls)
        for section in present:
            heights = [float(c.sections.get(section, 0)) for c in calls]
            bar = self._bar(section)
            bar.setOpts(x=self.xs, height=heights, y0=list(base), width=width)
            bar.show()
            self.legend.addItem(bar, theme.section_title(section))
            base = [b + h for b, h in zip(base, heights)]
        for section, bar in self._bars.items():
            if section not in present:
                bar.setOpts(x=[], height=[], y0=[])
                bar.hide()
        self.legend.addItem(self._cached, "cached prefix (predicted)")
        cached = [float(d.prefix_tokens or 0) if d is not None else 0.0 for d in session.diffs] if session else []
        self._cached.setOpts(x=self.xs, height=cached, y0=[0.0] * len(cached), width=width * 0.45)
        top = max([float(c.input_tokens or 0) for c in calls] + [1.0])
        compacted, removed = [], []
        for i, d in enumerate(session.diffs if session else []):
            kinds = {c.kind for c in d.changes} if d is not None else set()
            if "compacted" in kinds:
                compacted.append(i)
            elif kinds & {"removed", "rewritten"}:
                removed.append(i)
        mark_y = top * 1.06
        self._compacted.setData([self.xs[i] for i in compacted], [mark_y] * len(compacted), data=compacted)
        self._removed.setData([self.xs[i] for i in removed], [mark_y] * len(removed), data=removed)
        window = session.context_window if session is not None else None
        allowances = [session.allowance(i) for i in range(len(calls))] if session is not None else []
        allowance = min((a for a in allowances if a is not None), default=None)
        self._line(self._window, window)
        self._line(self._allowance, allowance if allowance != window else None)
        if window is not None:
            self.legend.addItem(self._window_sample, f"window {window:,}")
        if allowance is not None and allowance != window:
            self.legend.addItem(self._allowance_sample, f"allowance {allowance:,} (less the output reserve)")
        ceiling = max([top * 1.45] + [v * 1.05 for v in (window, allowance) if v is not None])
        if calls:
            self.view.setXRange(min(self.xs) - width, max(self.xs) + width, padding=0.01)
            self.view.setYRange(0, ceiling, padding=0)
        self.plot.getPlotItem().setLabel("bottom", "seconds since the first call" if self.by_time and calls
                                         and self.xs != [float(i + 1) for i in range(len(calls))] else "call")
        self._selected.hide()
        self.caption.setText(self._caption(session))

    @staticmethod
    def _caption(session: core.Session | None) -> str:
        if session is None:
            return "No session: open a trace or transcript with model calls and show its session."
        peak = session.peak
        text = f"{len(session.calls)} model calls"
        if peak is not None:
            text += f"; peak {peak.input_tokens:,} input tokens at call {peak.index + 1}"
            if session.context_window:
                text += f" ({peak.input_tokens / session.context_window:.0%} of the {session.context_window:,} window)"
        removals = session.removal_calls
        text += "; something removed at call " + ", ".join(str(i + 1) for i in removals) if removals else \
            "; nothing removed between calls"
        if not session.context_window:
            text += "; window unknown (set the context limit for the model: Ctrl+Shift+L)"
        return text + ". Shaded: the prefix a prompt cache could reuse. Click a bar to select its call."

    def _bar(self, section: str) -> pg.BarGraphItem:
        bar = self._bars.get(section)
        if bar is None:
            colour = theme.section_colour(section)
            bar = pg.BarGraphItem(x=[], height=[], width=0.8, brush=pg.mkBrush(colour),
                                  pen=pg.mkPen(colour.darker(130), width=1))
            self.plot.addItem(bar)
            self._bars[section] = bar
        return bar

    @staticmethod
    def _line(line: pg.InfiniteLine, value: int | None) -> None:
        if value is None:
            line.hide()
            return
        line.setValue(value)
        line.show()

    def select_call(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.xs):
            self._selected.hide()
            return
        self._selected.setValue(self.xs[index])
        self._selected.show()

    # ---- picking a call

    def nearest_call(self, x: float) -> int | None:
        if not self.xs:
            return None
        return min(range(len(self.xs)), key=lambda i: abs(self.xs[i] - x))

    def call_position(self, index: int) -> QPoint:
        """Where the middle of call ``index``'s bar is on the plot's viewport, for tests and tooling."""
        assert self.session is not None
        height = float(self.session.calls[index].input_tokens or 0)
        scene = self.view.mapViewToScene(QPointF(self.xs[index], height / 2))
        return self.plot.mapFromScene(scene)

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or not self.xs:
            return
        if not self.view.sceneBoundingRect().contains(event.scenePos()):
            return
        index = self.nearest_call(self.view.mapSceneToView(event.scenePos()).x())
        if index is not None:
            self.callPicked.emit(index)
