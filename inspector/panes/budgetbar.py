"""The budget as one horizontal stacked bar (pyqtgraph), against the context limit.

Main lane, left to right: each section's sent tokens in its colour (template overhead first, prompt
order), the free part of the input allowance, then the safety margin and the output reserve up to
the context limit. The lane below starts at the allowance line and carries what was dropped,
ghosted and hatched, so the eye sees what did not fit. For an imported provider request (nothing
is dropped there) the lower lane shows the provider's own input-token count as a bar, and a dotted
line carries it up to ours, so the drift is seen. Plot items are created once and updated.

While a replay is shown (``show_comparison``) the recording gets a lane of its own above: two
stacked bars one above the other on the same token axis, each with its own limit and allowance
marks; the lanes below are the replay's, and items the replay newly dropped are outlined.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QCursor, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QLayout, QLayoutItem, QSizePolicy, QToolTip, QVBoxLayout, QWidget, QWidgetItem

import core

from .. import theme
from ..document import Row

MAIN_LANE = (0.0, 1.0)  # y0, y1
DROP_LANE = (-0.85, -0.15)
RECORDED_LANE = (1.35, 2.35)
LANES = {"main": MAIN_LANE, "dropped": DROP_LANE, "recorded": RECORDED_LANE}
Y_RANGE = (-1.0, 1.6)
COMPARISON_Y_RANGE = (-1.0, 2.5)
HEIGHT, COMPARISON_HEIGHT = 140, 200
PROVIDER_COLOUR = "#CC3311"  # the provider's own count: a colour no section uses


@dataclass(frozen=True)
class Segment:
    """One drawn part of the bar. ``kind``: section, dropped, free, margin, reserve or required."""

    kind: str
    key: str  # the section name, or the reserve key
    x0: float
    width: float
    lane: str  # "main", "dropped" or (a replay's recording) "recorded"
    tokens: int
    items: tuple[str, ...] = ()
    newly: bool = False  # a dropped item the replay newly dropped
    summarised: bool = False  # not dropped but replaced by a summary (drawn with the dropped)

    @property
    def x1(self) -> float:
        return self.x0 + self.width

    @property
    def section(self) -> str | None:
        return self.key if self.kind in ("section", "dropped") else None

    def contains(self, x: float, y: float) -> bool:
        y0, y1 = LANES[self.lane]
        return self.x0 <= x <= self.x1 and y0 <= y <= y1


@dataclass
class _Drawn:
    rect: QRectF
    fill: QBrush
    hatch: QBrush | None
    pen: QPen
    label: str
    label_colour: QColor


class SegmentsItem(pg.GraphicsObject):
    """Rectangles in view coordinates, painted in device coordinates so hatch patterns and labels stay
    crisp at any zoom (a pattern brush would otherwise be stretched by the view's scaling)."""

    def __init__(self) -> None:
        super().__init__()
        self._drawn: list[_Drawn] = []
        self._bounds = QRectF()

    def setData(self, drawn: list[_Drawn]) -> None:
        self.prepareGeometryChange()
        self._drawn = drawn
        bounds = QRectF()
        for d in drawn:
            bounds = bounds.united(d.rect)
        self._bounds = bounds
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, *args) -> None:
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        metrics = QFontMetrics(painter.font())
        for d in self._drawn:
            rect = transform.mapRect(d.rect).normalized()
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(d.fill)
            painter.drawRect(rect)
            if d.hatch is not None:
                painter.setBrush(d.hatch)
                painter.drawRect(rect)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(d.pen)
            painter.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
            if d.label and rect.width() > 24:
                text = metrics.elidedText(d.label, Qt.TextElideMode.ElideRight, int(rect.width()) - 6)
                if text and text != "…":
                    painter.setPen(d.label_colour)
                    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()


def _readable_on(colour: QColor) -> QColor:
    """Black or white, whichever reads on ``colour`` (a fixed segment colour, not the palette)."""
    luminance = 0.299 * colour.redF() + 0.587 * colour.greenF() + 0.114 * colour.blueF()
    return QColor("#111111") if luminance > 0.55 else QColor("#FFFFFF")


def _result_segments(result: core.AssemblyResult, lane: str, *, drops: str | None,
                     newly_dropped: frozenset[tuple[str, str]] = frozenset()) -> list[Segment]:
    """Sent sections, free, margin and reserve of ``result`` in ``lane``; its dropped items in lane
    ``drops`` from the allowance line on (none when ``drops`` is None)."""
    segments: list[Segment] = []
    sent = result.sent_tokens_by_section()
    order = theme.section_order(e.section for e in result.trace)
    x = 0.0
    for section in order:
        tokens = sent.get(section, 0)
        if tokens <= 0:
            continue
        ids = tuple(e.id for e in result.trace if e.section == section and e.decision not in core.NOT_SENT)
        segments.append(Segment("section", section, x, tokens, lane, tokens, ids))
        x += tokens
    free = max(0, result.remaining_tokens)
    x = max(x, float(result.input_tokens))
    if free:
        segments.append(Segment("free", "free", x, free, lane, free))
    x = float(result.input_budget) if result.input_tokens <= result.input_budget else x
    if result.margin > 0:
        segments.append(Segment("margin", "margin", x, result.margin, lane, result.margin))
        x += result.margin
    if result.max_new_tokens > 0:
        segments.append(Segment("reserve", "reserve", x, result.max_new_tokens, lane, result.max_new_tokens))
    if drops is None:
        return segments
    # what was not sent (dropped, or summarised: replaced by a summary): one segment per item, from the
    # allowance line on, sections in prompt order
    x = float(result.input_budget)
    rank = {section: n for n, section in enumerate(order)}
    dropped = [e for e in result.trace if e.decision in core.NOT_SENT]
    for entry in sorted(dropped, key=lambda e: rank.get(e.section, len(rank))):
        width = max(entry.tokens, 0)
        segments.append(Segment("dropped", entry.section, x, width, drops, entry.tokens, (entry.id,),
                                newly=(entry.section, entry.id) in newly_dropped,
                                summarised=entry.decision == "summarised"))
        x += width
    return segments


def _rejection_segments(row: Row, required_lane: str, lane: str) -> list[Segment]:
    """A rejected row: nothing was sent; the required content is drawn from 0 in ``required_lane``."""
    if row.input_tokens is None or row.allowance is None:
        return []
    rec = row.rejection or {}
    need, have = row.input_tokens, row.allowance
    segments = [Segment("required", "required", 0, need, required_lane, need)]
    margin, reserve = rec.get("margin"), rec.get("max_new_tokens")
    x = float(have)
    if isinstance(margin, int) and margin > 0:
        segments.append(Segment("margin", "margin", x, margin, lane, margin))
        x += margin
    if isinstance(reserve, int) and reserve > 0:
        segments.append(Segment("reserve", "reserve", x, reserve, lane, reserve))
    return segments


def _limits(row: Row | None) -> tuple[int | None, int | None]:
    """(input allowance, context limit) of a row, as recorded."""
    if row is None:
        return None, None
    if row.result is not None:
        return row.result.input_budget, row.result.context_limit
    if row.rejection is not None:
        limit = row.rejection.get("context_limit")
        return row.allowance, limit if isinstance(limit, int) else None
    return None, None


class BudgetBar(QWidget):
    """Caption, the pyqtgraph bar and its legend. ``segmentClicked`` names what was clicked."""

    segmentClicked = Signal(str, object)  # section, item id (a dropped item) or None (a section)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Token budget bar")
        self.segments: list[Segment] = []
        self.last_hover_text = ""
        self._row: Row | None = None
        self._recorded: Row | None = None  # set while a replay is compared with its recording
        self._selected_section: str | None = None

        self.caption = QLabel(self)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Budget summary")

        self.plot = pg.PlotWidget(parent=self)
        self.plot.setAccessibleName("Budget bar chart")
        self.plot.setMinimumHeight(120)
        self.plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.plot.setFixedHeight(HEIGHT)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.showAxis("left")
        item.getAxis("left").setWidth(62)
        item.setLabel("bottom", "tokens")
        self.view = item.getViewBox()
        self.view.setYRange(*Y_RANGE, padding=0)

        self._bars = SegmentsItem()
        self.plot.addItem(self._bars)
        self._allowance = pg.InfiniteLine(angle=90, movable=False,
                                          label="", labelOpts={"position": 0.93, "anchors": [(1, 0.5), (1, 0.5)]})
        self._limit = pg.InfiniteLine(angle=90, movable=False,
                                      label="", labelOpts={"position": 0.93, "anchors": [(0, 0.5), (0, 0.5)]})
        self.plot.addItem(self._allowance)
        self.plot.addItem(self._limit)
        self._allowance.hide()
        self._limit.hide()
        # comparison: a limit (solid) and an allowance (dashed) mark per lane, and a label beside each limit
        self._limit_marks = pg.PlotCurveItem(connect="pairs")
        self._allowance_marks = pg.PlotCurveItem(connect="pairs")
        self._mark_labels = [pg.TextItem(anchor=(0, 0.5)), pg.TextItem(anchor=(0, 0.5))]
        for mark in (self._limit_marks, self._allowance_marks, *self._mark_labels):
            self.plot.addItem(mark)
            mark.hide()
        # an imported request: where the provider's reported input tokens end, against our count
        self._provider_mark = pg.PlotCurveItem()
        self._provider_bar = QGraphicsRectItem()
        self._provider_label = pg.TextItem(anchor=(0, 0.5))
        for mark in (self._provider_bar, self._provider_mark, self._provider_label):
            self.plot.addItem(mark)
            mark.hide()
        self.provider_tokens: int | None = None

        self.legend = Legend(self)
        self.legend.setAccessibleName("Budget bar legend")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 2)
        layout.setSpacing(2)
        layout.addWidget(self.caption)
        layout.addWidget(self.plot)
        layout.addWidget(self.legend)

        self.plot.scene().sigMouseMoved.connect(self._hovered)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.apply_palette()
        self.show_row(None)

    # ---- theme

    def apply_palette(self) -> None:
        pal = self.palette()
        self.plot.setBackground(pal.color(QPalette.ColorRole.Base))
        text = pal.color(QPalette.ColorRole.Text)
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(pg.mkPen(text))
            axis.setTextPen(pg.mkPen(text))
        self._allowance.setPen(pg.mkPen(text, width=2, style=Qt.PenStyle.DashLine))
        self._limit.setPen(pg.mkPen(text, width=2))
        self._limit_marks.setPen(pg.mkPen(text, width=2))
        self._allowance_marks.setPen(pg.mkPen(text, width=2, style=Qt.PenStyle.DashLine))
        for line in (self._allowance, self._limit):
            line.label.setColor(text)
            line.label.fill = pg.mkBrush(theme.with_alpha(pal.color(QPalette.ColorRole.Base), 220))
        self._provider_mark.setPen(pg.mkPen(QColor(PROVIDER_COLOUR), width=3, style=Qt.PenStyle.DotLine))
        bar_pen = QPen(QColor(PROVIDER_COLOUR), 2)
        bar_pen.setCosmetic(True)  # pixels, not tokens: the view is scaled
        self._provider_bar.setPen(bar_pen)
        self._provider_bar.setBrush(QBrush(theme.with_alpha(QColor(PROVIDER_COLOUR), 28)))
        self._provider_label.setColor(QColor(PROVIDER_COLOUR) if not theme.is_dark(pal) else text)
        self._provider_label.fill = pg.mkBrush(theme.with_alpha(pal.color(QPalette.ColorRole.Base), 220))
        for label in self._mark_labels:
            label.setColor(text)
            label.fill = pg.mkBrush(theme.with_alpha(pal.color(QPalette.ColorRole.Base), 220))
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
        self._selected_section = None
        self.segments = self._segments_for(row)
        self._set_mode(comparison=False)
        self._update_provider_mark(row)
        self._update_lines(row)
        self._update_caption(row)
        self.legend.set_entries(self._legend_entries())
        self._redraw()

    def show_comparison(self, recorded: Row, replayed: Row, newly_dropped: frozenset[tuple[str, str]] = frozenset(),
                        note: str = "") -> None:
        """The recording (upper bar) above its replay (lower bars: sent, then what the replay dropped)."""
        self._row = replayed
        self._recorded = recorded
        if recorded.result is not None:
            upper = _result_segments(recorded.result, "recorded", drops=None)
        else:
            upper = _rejection_segments(recorded, "recorded", "recorded")
        lower = _result_segments(replayed.result, "main", drops="dropped", newly_dropped=newly_dropped) \
            if replayed.result is not None else []
        self.segments = upper + lower
        self._set_mode(comparison=True)
        self._update_provider_mark(None)
        self._update_marks(recorded, replayed)
        self._update_comparison_caption(recorded, replayed, note)
        self.legend.set_entries(self._legend_entries())
        self._redraw()

    def _set_mode(self, *, comparison: bool) -> None:
        axis = self.plot.getPlotItem().getAxis("left")
        if comparison:
            axis.setTicks([[(sum(RECORDED_LANE) / 2, "recorded"), (sum(MAIN_LANE) / 2, "replayed"),
                            (sum(DROP_LANE) / 2, "dropped")]])
            self.plot.setFixedHeight(COMPARISON_HEIGHT)
            self._allowance.hide()
            self._limit.hide()
        else:
            axis.setTicks([[(sum(MAIN_LANE) / 2, "sent"), (sum(DROP_LANE) / 2, "dropped")]])
            self.plot.setFixedHeight(HEIGHT)
            for mark in (self._limit_marks, self._allowance_marks, *self._mark_labels):
                mark.hide()

    def highlight_section(self, section: str | None) -> None:
        self._selected_section = section
        self._redraw()

    def section_segment(self, section: str, lane: str = "main") -> Segment | None:
        """The sent segment of ``section`` (lane "main"), its first dropped item (lane "dropped"), or its
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

    def _segments_for(self, row: Row | None) -> list[Segment]:
        if row is None:
            return []
        if row.result is None:
            return _rejection_segments(row, "dropped", "main") if row.kind == "rejected" else []
        return _result_segments(row.result, "main", drops="dropped")

    def _update_provider_mark(self, row: Row | None) -> None:
        extra = (row.result.model_extra or {}) if row is not None and row.result is not None else {}
        theirs = extra.get("provider_input_tokens") if row is not None and row.imported is not None else None
        self.provider_tokens = theirs if isinstance(theirs, int) else None
        if self.provider_tokens is None:
            for mark in (self._provider_bar, self._provider_mark, self._provider_label):
                mark.hide()
            return
        x = float(self.provider_tokens)
        self._provider_mark.setData([x, x], [DROP_LANE[1], MAIN_LANE[1] + 0.12])
        y0, y1 = DROP_LANE[0] + 0.12, DROP_LANE[1]
        self._provider_bar.setRect(QRectF(0.0, y0, x, y1 - y0))
        self.plot.getPlotItem().getAxis("left").setTicks([[(sum(MAIN_LANE) / 2, "ours"),
                                                            (sum(DROP_LANE) / 2, "provider")]])
        drift = extra.get("count_drift")
        self._provider_label.setText(f"provider {self.provider_tokens}"
                                     + (f" · drift {drift:+d}" if isinstance(drift, int) else ""))
        self._provider_label.setPos(x, sum(DROP_LANE) / 2)
        for mark in (self._provider_bar, self._provider_mark, self._provider_label):
            mark.show()

    def _update_lines(self, row: Row | None) -> None:
        allowance, limit = _limits(row)
        for line, value, text in ((self._allowance, allowance, "allowance"), (self._limit, limit, "context limit")):
            if value is None:
                line.hide()
                continue
            line.setValue(value)
            line.show()
            line.label.setFormat(f"{text} {value}")  # pyqtgraph ignores a new format while the line is hidden
        right = max([s.x1 for s in self.segments] + [limit or 0, allowance or 0, self.provider_tokens or 0, 1])
        # room on the right for the context-limit label
        self.view.setXRange(0, right * 1.13, padding=0)
        self.view.setYRange(*Y_RANGE, padding=0)

    def _update_marks(self, recorded: Row, replayed: Row) -> None:
        limit_x: list[float] = []
        limit_y: list[float] = []
        allow_x: list[float] = []
        allow_y: list[float] = []
        right = max([s.x1 for s in self.segments] + [1])
        for row, lane, label in ((recorded, RECORDED_LANE, self._mark_labels[0]),
                                 (replayed, MAIN_LANE, self._mark_labels[1])):
            allowance, limit = _limits(row)
            y0, y1 = lane[0] - 0.08, lane[1] + 0.08
            if limit is not None:
                limit_x += [limit, limit]
                limit_y += [y0, y1]
                right = max(right, limit)
            if allowance is not None:
                allow_x += [allowance, allowance]
                allow_y += [y0, y1]
            if limit is None:
                label.hide()
                continue
            label.setText(f"limit {limit}" + (f" · allowance {allowance}" if allowance is not None else ""))
            label.setPos(limit, sum(lane) / 2)
            label.show()
        self._limit_marks.setData(limit_x, limit_y)
        self._allowance_marks.setData(allow_x, allow_y)
        self._limit_marks.show()
        self._allowance_marks.show()
        # room on the right for the limit labels
        self.view.setXRange(0, right * 1.3, padding=0)
        self.view.setYRange(*COMPARISON_Y_RANGE, padding=0)

    def _update_caption(self, row: Row | None) -> None:
        if row is None:
            self.caption.setText("No request selected.")
            return
        if row.result is None:
            self.caption.setText(f"{row.label}: {row.summary()}")
            return
        r = row.result
        dropped = r.section_tokens("dropped")
        dropped_total = sum(dropped.values())
        text = (f"{row.label} ({r.strategy}): {r.input_tokens} input tokens of a {r.input_budget}-token allowance "
                f"({max(0, r.remaining_tokens)} free); context limit {r.context_limit} = allowance + margin "
                f"{r.margin} + output reserve {r.max_new_tokens}.")
        if row.dropped_count:
            text += f" Dropped: {row.dropped_count} items, {dropped_total} tokens."
        summarised = [e for e in r.trace if e.decision == "summarised"]
        if summarised:
            text += (f" Summarised: {len(summarised)} items, {sum(e.tokens for e in summarised)} tokens, "
                     "replaced by summaries.")
        if r.over_budget:
            text += f" OVER the allowance by {r.input_tokens - r.input_budget}."
        self.caption.setText(text)

    def _update_comparison_caption(self, recorded: Row, replayed: Row, note: str) -> None:
        r = replayed.result
        if recorded.result is not None:
            rec = recorded.result
            before = (f"recorded {rec.input_tokens} input tokens of a {rec.input_budget}-token allowance "
                      f"(limit {rec.context_limit})")
        else:
            before = f"recorded: {recorded.summary()}"
        after = (f"replayed {r.input_tokens} of {r.input_budget} (limit {r.context_limit}, margin {r.margin}, "
                 f"output reserve {r.max_new_tokens}), {replayed.dropped_count} items dropped"
                 if r is not None else "no replay")
        self.caption.setText(f"{recorded.label} ({recorded.strategy}) under edits: {after}; {before}."
                             + (f" {note}" if note else ""))

    def _legend_entries(self) -> list[tuple[str, QBrush, QBrush | None]]:
        entries: list[tuple[str, QBrush, QBrush | None]] = []
        sections = theme.section_order(s.key for s in self.segments if s.kind in ("section", "dropped"))
        for section in sections:
            entries.append((theme.section_title(section), QBrush(theme.section_colour(section)), None))
        for kind in ("free", "margin", "reserve", "required"):
            if any(s.kind == kind for s in self.segments):
                colour = QColor(theme.RESERVE_COLOURS[kind])
                hatch = theme.hatch_brush(colour.darker(170)) if kind == "required" else None
                entries.append((theme.RESERVE_TITLES[kind], QBrush(colour), hatch))
        if any(s.kind == "dropped" for s in self.segments):
            grey = QColor("#888888")
            title = ("Not sent (hatched: dropped, or summarised)"
                     if any(s.kind == "dropped" and s.summarised for s in self.segments)
                     else "Dropped (hatched: did not fit)")
            entries.append((title, QBrush(theme.with_alpha(grey, 70)), theme.hatch_brush(grey)))
        if self.provider_tokens is not None and not self.comparing:
            entries.append(("Input tokens the provider reported", QBrush(theme.with_alpha(QColor(PROVIDER_COLOUR), 28)),
                            None))
        if any(s.newly for s in self.segments):
            style = theme.CHANGE_STYLES["newly dropped"]
            entries.append((f"{style.glyph} Newly dropped by the replay (red outline)",
                            QBrush(theme.with_alpha(QColor(style.colour), 60)), None))
        return entries

    def _redraw(self) -> None:
        pal = self.palette()
        text = pal.color(QPalette.ColorRole.Text)
        highlight = pal.color(QPalette.ColorRole.Highlight)
        drawn: list[_Drawn] = []
        for seg in self.segments:
            y0, y1 = LANES[seg.lane]
            rect = QRectF(seg.x0, y0, seg.width, y1 - y0)
            outline = QPen(theme.with_alpha(text, 110), 1)
            if seg.kind == "section":
                colour = theme.section_colour(seg.key)
                fill, hatch, label_colour = QBrush(colour), None, _readable_on(colour)
                label = f"{theme.section_title(seg.key)} {seg.tokens}"
            elif seg.kind == "dropped":
                colour = theme.section_colour(seg.key)
                fill = QBrush(theme.with_alpha(colour, 80))
                hatch = theme.hatch_brush(colour.darker(135) if not theme.is_dark(pal) else colour.lighter(130))
                label_colour = text
                label = f"{seg.items[0]} {seg.tokens}"
                outline = QPen(colour.darker(120), 1)
                if seg.newly:
                    style = theme.CHANGE_STYLES["newly dropped"]
                    outline = QPen(QColor(style.colour), 3)
                    label = f"{style.glyph} {label}"
            else:
                colour = QColor(theme.RESERVE_COLOURS[seg.kind])
                if seg.kind == "free":
                    fill = QBrush(theme.with_alpha(colour, 110))
                    label_colour = text
                else:
                    fill = QBrush(colour)
                    label_colour = _readable_on(colour)
                hatch = theme.hatch_brush(colour.darker(170)) if seg.kind == "required" else None
                label = {"free": f"free {seg.tokens}", "margin": f"margin {seg.tokens}",
                         "reserve": f"output reserve {seg.tokens}",
                         "required": f"required {seg.tokens}"}[seg.kind]
            if self._selected_section is not None and seg.section == self._selected_section:
                outline = QPen(highlight, 3)
            drawn.append(_Drawn(rect, fill, hatch, outline, label, label_colour))
        self._bars.setData(drawn)

    # ---- hover and click

    def segment_at(self, x: float, y: float) -> Segment | None:
        for seg in self.segments:
            if seg.contains(x, y):
                return seg
        return None

    def hover_text(self, seg: Segment) -> str:
        row = self._recorded if seg.lane == "recorded" else self._row
        limit = _limits(row)[1]
        share = f"{100.0 * seg.tokens / limit:.1f}% of the {limit}-token context limit" if limit else ""
        if seg.kind == "section":
            head = f"{theme.section_title(seg.key)}: {seg.tokens} tokens sent"
        elif seg.kind == "dropped":
            head = f"{theme.section_title(seg.key)} / {seg.items[0]}: {seg.tokens} tokens " + (
                "summarised (replaced by a summary)" if seg.summarised else "dropped (did not fit)")
            if seg.newly:
                head += "; newly dropped by the replay"
        else:
            head = f"{theme.RESERVE_TITLES[seg.kind]}: {seg.tokens} tokens"
        if self.comparing:
            head = ("Recorded — " if seg.lane == "recorded" else "Replayed — ") + head
        lines = [head]
        if share:
            lines.append(share)
        if seg.items and seg.kind != "dropped":
            shown = ", ".join(seg.items[:8]) + (f", and {len(seg.items) - 8} more" if len(seg.items) > 8 else "")
            lines.append(f"{len(seg.items)} item{'s' if len(seg.items) != 1 else ''}: {shown}")
        return "\n".join(lines)

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
        if seg is not None and seg.section is not None:
            self.segmentClicked.emit(seg.section, seg.items[0] if seg.kind == "dropped" else None)


# --------------------------------------------------------------------------------------------
# legend


class _Swatch(QWidget):
    def __init__(self, text: str, fill: QBrush, hatch: QBrush | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = text
        self._fill = fill
        self._hatch = hatch
        self.setAccessibleName(f"Legend: {text}")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance(self.text) + 30, max(18, metrics.height() + 4))

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        h = self.height()
        box = QRect(2, (h - 12) // 2, 18, 12)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Text), 1))
        painter.setBrush(self._fill)
        painter.drawRect(box)
        if self._hatch is not None:
            painter.setBrush(self._hatch)
            painter.drawRect(box)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(QRect(26, 0, self.width() - 26, h), Qt.AlignmentFlag.AlignVCenter, self.text)
        painter.end()


class _FlowLayout(QLayout):
    """Lays children left to right and wraps them, so the legend never clips on a narrow window."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 12) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        x, y, line_height = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and line_height > 0:
                x = rect.x()
                y += line_height + 2
                line_height = 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y()


class Legend(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = _FlowLayout(self)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def entries(self) -> list[str]:
        return [item.widget().text for item in self._layout._items if isinstance(item, QWidgetItem)
                and isinstance(item.widget(), _Swatch)]

    def swatches(self) -> list[QWidget]:
        """The entry widgets this legend holds now (old ones are gone at once, not at the next event loop)."""
        return [w for w in self.findChildren(_Swatch) if w.parent() is self]

    def set_entries(self, entries: list[tuple[str, QBrush, QBrush | None]]) -> None:
        # The old entries leave at once: hidden and unparented before deleteLater, so none of them is drawn
        # over the new ones while it waits to be deleted.
        while self._layout.count():
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        for text, fill, hatch in entries:
            swatch = _Swatch(text, fill, hatch, self)
            self._layout.addWidget(swatch)
            swatch.setVisible(self.isVisible())  # now, not when the layout's queued show runs
        self._layout.invalidate()
        self.updateGeometry()
