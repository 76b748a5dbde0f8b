"""The budget as one horizontal stacked bar (pyqtgraph), against the context limit, readable from a few
hundred tokens to a 1M-token window.

The layout is core's (``core.result_segments``): main lane, each section's sent tokens (prompt order),
free, margin and output reserve; the lane below holds what was not sent, hatched, a section's many
items folded into one labelled run with its count. Three views: *Fit to input* (what was sent and
dropped, the allowance brought in when near), *Whole window* (0 to the context limit) and
*Composition* (a table of each section's tokens and share, ``compositionview``). The token axis zooms
(wheel) and pans (drag), within a few tokens and everything; marks past the right edge are named
there. For an imported provider request the lower lane shows the provider's own input-token count.
While a replay is shown the recording gets a lane of its own above. Plot items are created once and
updated. Export: PNG or SVG of the bar (``files/charts.py``).
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QCursor
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QMenu, QSizePolicy, QStackedWidget, QToolButton,
                               QToolTip, QVBoxLayout, QWidget)

import core

from .. import theme
from ..document import Row
from ..files.charts import ChartExportError, chart_name, export_chart, save_chart
from .budget import caption as barcaption
from .budget.composition import CompositionView
from .budget.legend import Legend, legend_entries
from .budget.marks import BarMarks
from .budget.plot import COMPARISON_Y_RANGE, DROP_LANE, MAIN_LANE, RECORDED_LANE, Y_RANGE, SegmentsItem, TokenAxis, \
    contains, drawn_segments
from .plotstyle import style_plot

Segment = core.Segment
HEIGHT, COMPARISON_HEIGHT = 140, 200
VIEWS = {"fit": "Fit to input", "window": "Whole window", "composition": "Composition"}
LABEL_ROOM = 1.13  # room right of the furthest mark for its label


class BudgetBar(QWidget):
    """Caption, view switch, the pyqtgraph bar (or the composition table) and its legend."""

    segmentClicked = Signal(str, object)  # section, item id (a dropped item) or None (a section or a run)
    exported = Signal(str)  # the path a chart was written to
    exportFailed = Signal(str)  # why a chart could not be written

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Token budget bar")
        self.segments: list[Segment] = []
        self.last_hover_text = ""
        self.view_mode = "fit"
        self.unfolded: set[str] = set()
        self._row: Row | None = None
        self._recorded: Row | None = None  # set while a replay is compared with its recording
        self._newly: frozenset[tuple[str, str]] = frozenset()
        self._note = ""
        self._selected_section: str | None = None
        self._marks: list[tuple[str, int]] = []  # (name, token) of each line, for the off-edge note
        self._lane_ticks: list[tuple[float, str]] | None = None  # the left axis's lane names, as last set

        self.caption = QLabel(self)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Budget summary")

        self.view_buttons: dict[str, QToolButton] = {}
        self._view_group = QActionGroup(self)
        bar_row = QHBoxLayout()
        bar_row.setContentsMargins(0, 0, 0, 0)
        for key, title in VIEWS.items():
            action = QAction(title, self, checkable=True)
            action.setData(key)
            self._view_group.addAction(action)
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setAccessibleName(f"Budget view: {title}")
            self.view_buttons[key] = button
            bar_row.addWidget(button)
        self._view_group.triggered.connect(lambda action: self.set_view(action.data()))
        bar_row.addStretch(1)
        self.reset_button = QToolButton(self)
        self.reset_button.setText("Reset zoom")
        self.reset_button.setToolTip("Back to the view's range (the wheel zooms the token axis, a drag pans it)")
        self.reset_button.clicked.connect(self.reset_zoom)
        self.export_button = QToolButton(self)
        self.export_button.setText("Export")
        self.export_button.setAccessibleName("Export the budget bar")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_menu = QMenu(self.export_button)
        self.act_png = self.export_menu.addAction("Save bar as PNG…", lambda: self.save_chart("png"))
        self.act_svg = self.export_menu.addAction("Save bar as SVG…", lambda: self.save_chart("svg"))
        self.export_button.setMenu(self.export_menu)
        bar_row.addWidget(self.reset_button)
        bar_row.addWidget(self.export_button)

        self.plot = pg.PlotWidget(parent=self, axisItems={"bottom": TokenAxis("bottom")})
        self.plot.setAccessibleName("Budget bar chart")
        self.plot.setMinimumHeight(120)
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.plot.setFixedHeight(HEIGHT)
        self.plot.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.plot.customContextMenuRequested.connect(self._context_menu)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=True, y=False)  # zoom and pan the token axis only
        item.showAxis("left")
        item.getAxis("left").setWidth(62)
        item.setLabel("bottom", "tokens")
        self.view = item.getViewBox()
        self.view.setYRange(*Y_RANGE, padding=0)

        self._bars = SegmentsItem()
        self.plot.addItem(self._bars)
        self.marks = BarMarks(self.plot)
        self._allowance, self._limit, self._mark_labels = self.marks.allowance, self.marks.limit, self.marks.labels
        self.offscreen = self.marks.offscreen
        self.view.sigXRangeChanged.connect(self._place_offscreen)
        self.view.sigResized.connect(self._place_offscreen)  # the same range over fewer pixels: labels move

        self.composition = CompositionView(self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.plot)
        self.stack.addWidget(self.composition)
        self.stack.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

        self.legend = Legend(self)
        self.legend.setAccessibleName("Budget bar legend")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(2)
        layout.addWidget(self.caption)
        layout.addLayout(bar_row)
        layout.addWidget(self.stack)
        layout.addWidget(self.legend)

        self.plot.scene().sigMouseMoved.connect(self._hovered)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.view_buttons["fit"].defaultAction().setChecked(True)
        self.apply_palette()
        self.show_row(None)

    # ---- theme

    def apply_palette(self) -> None:
        pal = self.palette()
        style_plot(self.plot, pal)
        self.marks.apply_palette(pal)
        self.legend.update()
        self._redraw()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.PaletteChange:
            self.apply_palette()

    # ---- content

    @property
    def comparing(self) -> bool:
        return self._recorded is not None

    def show_row(self, row: Row | None) -> None:
        self._row = row
        self._recorded = None
        self._newly = frozenset()
        self._selected_section = None
        self._refresh()

    def show_comparison(self, recorded: Row, replayed: Row, newly_dropped: frozenset[tuple[str, str]] = frozenset(),
                        note: str = "") -> None:
        """The recording (upper bar) above its replay (lower bars: sent, then what the replay dropped)."""
        self._row = replayed
        self._recorded = recorded
        self._newly = newly_dropped
        self._note = note
        self._refresh()

    def set_view(self, view: str) -> None:
        """"fit", "window" or "composition"."""
        if view not in VIEWS:
            raise ValueError(f"unknown budget view {view!r}")
        self.view_mode = view
        self.view_buttons[view].defaultAction().setChecked(True)
        self._refresh()

    def unfold(self, section: str, unfolded: bool = True) -> None:
        """Draw ``section``'s not-sent items one by one (or fold them again)."""
        (self.unfolded.add if unfolded else self.unfolded.discard)(section)
        self._refresh()

    def _layout_view(self) -> str:
        return "window" if self.view_mode == "window" else "fit"

    def _refresh(self) -> None:
        row, view = self._row, self._layout_view()
        composition = self.view_mode == "composition"
        self.stack.setCurrentWidget(self.composition if composition else self.plot)
        self.reset_button.setEnabled(not composition)
        self.export_button.setEnabled(not composition)
        if self.comparing:
            recorded = self._recorded
            upper = (core.result_segments(recorded.result, "recorded", drops=None) if recorded.result is not None
                     else self._rejection(recorded, "recorded", "recorded"))
            lower = (core.result_segments(row.result, "main", newly=self._newly, view=view, unfolded=self.unfolded)
                     if row is not None and row.result is not None else [])
            self.segments = upper + lower
            self._set_mode(comparison=True)
            self._update_provider_mark(None)
            self._update_marks(recorded, row)
            self.caption.setText(barcaption.comparison_caption(recorded, row, self._note))
        else:
            self.segments = self._segments_for(row, view)
            self._set_mode(comparison=False)
            self._update_provider_mark(row)
            self._update_lines(row)
            self.caption.setText(barcaption.caption(row))
        if composition:  # filled only while shown: its table sizes every cell to its contents
            self.composition.set_result(row.result if row is not None else None)
            self.stack.setFixedHeight(min(max(self.composition.wanted_height(), 120), 360))
        else:
            self.stack.setFixedHeight(self.plot.maximumHeight())
        estimate = row is not None and row.result is not None and core.bar_basis(row.result).provider
        self.legend.set_entries(legend_entries(self.segments, provider=self.provider_tokens is not None,
                                               comparing=self.comparing, estimate=estimate))
        self.legend.setVisible(not composition)
        self._redraw()

    @staticmethod
    def _rejection(row: Row, required_lane: str, lane: str) -> list[Segment]:
        if row.input_tokens is None or row.allowance is None:
            return []
        rec = row.rejection or {}
        return core.rejection_segments(row.input_tokens, row.allowance, rec.get("margin"), rec.get("max_new_tokens"),
                                       required_lane, lane)

    def _segments_for(self, row: Row | None, view: str) -> list[Segment]:
        if row is None:
            return []
        if row.result is None:
            return self._rejection(row, "dropped", "main") if row.kind == "rejected" else []
        return core.result_segments(row.result, "main", view=view, unfolded=self.unfolded)

    def _set_mode(self, *, comparison: bool) -> None:
        if comparison:
            self._set_lane_ticks([(sum(RECORDED_LANE) / 2, "recorded"), (sum(MAIN_LANE) / 2, "replayed"),
                                  (sum(DROP_LANE) / 2, "dropped")])
            self.plot.setFixedHeight(COMPARISON_HEIGHT)
        else:
            self._set_lane_ticks([(sum(MAIN_LANE) / 2, "sent"), (sum(DROP_LANE) / 2, "dropped")])
            self.plot.setFixedHeight(HEIGHT)
        self.marks.set_comparison(comparison)

    def highlight_section(self, section: str | None) -> None:
        self._selected_section = section
        self._redraw()

    def section_segment(self, section: str, lane: str = "main") -> Segment | None:
        """The sent segment of ``section`` (lane "main"), its first not-sent segment (lane "dropped"), or its
        segment in the recording while a replay is compared (lane "recorded")."""
        return next((s for s in self.segments if s.section == section and s.lane == lane), None)

    def dropped_by_section(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for seg in self.segments:
            if seg.kind == "dropped":
                totals[seg.key] = totals.get(seg.key, 0) + seg.tokens
        return totals

    def sent_by_section(self, lane: str = "main") -> dict[str, int]:
        return {s.key: s.tokens for s in self.segments if s.kind == "section" and s.lane == lane}

    def _update_provider_mark(self, row: Row | None) -> None:
        self.provider_tokens = self.marks.show_provider(row)
        if self.provider_tokens is not None:
            estimate = core.bar_basis(row.result).provider  # drawn to the provider's figure, ours below
            self._set_lane_ticks([(sum(MAIN_LANE) / 2, "provider" if estimate else "ours"),
                                  (sum(DROP_LANE) / 2, "estimate" if estimate else "provider")])

    def _set_lane_ticks(self, ticks: list[tuple[float, str]]) -> None:
        """The lanes' names on the left axis; the same names again leave the axis as drawn (a new set of
        ticks makes pyqtgraph lay out and redraw the axis)."""
        if ticks != self._lane_ticks:
            self._lane_ticks = ticks
            self.plot.getPlotItem().getAxis("left").setTicks([ticks])

    def _update_lines(self, row: Row | None) -> None:
        allowance, limit = barcaption.limits(row)
        self._marks = self.marks.show_lines(allowance, limit)
        provider = ([Segment("required", "provider", 0, self.provider_tokens, "dropped", self.provider_tokens)]
                    if self.provider_tokens is not None else [])
        right = core.view_extent(self.segments + provider, self._layout_view(), allowances=[allowance],
                                 limits=[limit])
        self._set_range(right, [allowance, limit, self.provider_tokens], Y_RANGE)

    def _update_marks(self, recorded: Row, replayed: Row | None) -> None:
        (a0, l0), (a1, l1) = barcaption.limits(recorded), barcaption.limits(replayed)
        self._marks = self.marks.show_comparison((a0, l0), (a1, l1))
        right = core.view_extent(self.segments, self._layout_view(), allowances=[a0, a1], limits=[l0, l1])
        self._set_range(right * 1.15, [a0, l0, a1, l1], COMPARISON_Y_RANGE)  # room for the limit labels

    def _set_range(self, right: float, marks: list, y_range: tuple[float, float]) -> None:
        narrow, wide = core.zoom_limits(self.segments, marks)
        right = max(right, narrow)  # (nothing drawn, an unreadable row: an empty axis from 0, not from -6)
        wide = max(wide, right * LABEL_ROOM)
        self.view.setLimits(xMin=-0.02 * wide, xMax=wide, minXRange=narrow, maxXRange=wide * 1.02)
        self._home = (0.0, right * LABEL_ROOM)
        self.view.setXRange(*self._home, padding=0)
        self.view.setYRange(*y_range, padding=0)
        self._place_offscreen()

    def reset_zoom(self) -> None:
        self.view.setXRange(*self._home, padding=0)

    def x_range(self) -> tuple[float, float]:
        return tuple(self.view.viewRange()[0])  # type: ignore[return-value]

    def _place_offscreen(self, *args) -> None:
        self.marks.place_offscreen(self.view.viewRange(), self._marks, self.view.viewPixelSize()[0])

    def _redraw(self) -> None:
        self._bars.setData(drawn_segments(self.segments, self.palette(), self._selected_section))

    # ---- hover, click, menu

    def segment_at(self, x: float, y: float) -> Segment | None:
        return next((seg for seg in self.segments if contains(seg, x, y)), None)

    def hover_text(self, seg: Segment) -> str:
        row = self._recorded if seg.lane == "recorded" else self._row
        return barcaption.hover_text(seg, row, comparing=self.comparing)

    def view_to_widget(self, x: float, y: float) -> QPoint:
        """Where a point of the bar (tokens, lane height) is on the plot's viewport, for tests and tooling."""
        scene = self.view.mapViewToScene(QPointF(x, y))
        return self.plot.mapFromScene(scene)

    def _hovered(self, scene_pos: QPointF) -> None:
        point = self.view.mapSceneToView(scene_pos)
        seg = self.segment_at(point.x(), point.y())
        if seg is None:
            self.last_hover_text = ""
            QToolTip.hideText()
            return
        self.last_hover_text = self.hover_text(seg)
        QToolTip.showText(QCursor.pos(), self.last_hover_text, self.plot)

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        point = self.view.mapSceneToView(event.scenePos())
        seg = self.segment_at(point.x(), point.y())
        if seg is None or seg.section is None:
            return
        if event.double() and seg.folded:
            self.unfold(seg.key)
            return
        self.segmentClicked.emit(seg.section, seg.items[0] if seg.kind == "dropped" and not seg.folded else None)

    def context_menu(self, pos: QPoint) -> QMenu:
        """The bar's menu at ``pos`` (viewport pixels): unfold/fold a run, reset the zoom, export."""
        menu = QMenu(self)
        point = self.view.mapSceneToView(self.plot.mapToScene(pos))
        seg = self.segment_at(point.x(), point.y())
        if seg is not None and seg.folded:
            menu.addAction(f"Unfold {theme.section_title(seg.key)}'s {len(seg.items)} items",
                           lambda key=seg.key: self.unfold(key))
        elif seg is not None and seg.kind == "dropped" and seg.key in self.unfolded:
            menu.addAction(f"Fold {theme.section_title(seg.key)}'s items", lambda key=seg.key: self.unfold(key, False))
        menu.addAction("Reset zoom", self.reset_zoom)
        menu.addSeparator()
        menu.addAction(self.act_png)
        menu.addAction(self.act_svg)
        return menu

    def _context_menu(self, pos: QPoint) -> None:
        self.context_menu(pos).popup(self.plot.viewport().mapToGlobal(pos))

    # ---- export

    def export(self, path, fmt: str):
        """Write the bar (with its axes and marks) as ``fmt`` ("png" or "svg") to ``path``."""
        return export_chart(self.plot.getPlotItem(), path, fmt)

    def save_chart(self, fmt: str) -> None:
        row = self._row
        name = chart_name(row.label if row is not None else "request", row.strategy if row is not None else None,
                          "budget", fmt)
        try:
            path = save_chart(self, self.plot.getPlotItem(), name, fmt)
        except ChartExportError as exc:
            self.exportFailed.emit(str(exc))
            return
        if path is not None:
            self.exported.emit(str(path))
