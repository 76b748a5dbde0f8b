"""The budget bar's drawing: core's segment layout (``core.result_segments``) as rectangles in lanes,
painted in device coordinates so hatch patterns and labels stay crisp at any zoom.

A segment too narrow for its label gets its section's short code ("His", "Ev"), and what was not sent
is hatched, so colour is never the only cue. A label sits in the visible part of its segment: a run
that goes past the edge of the view keeps its label on screen.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter, QPalette, QPen

import core

from ... import theme

MAIN_LANE = (0.0, 1.0)  # y0, y1
DROP_LANE = (-0.85, -0.15)
RECORDED_LANE = (1.35, 2.35)
LANES = {"main": MAIN_LANE, "dropped": DROP_LANE, "recorded": RECORDED_LANE}
Y_RANGE = (-1.0, 1.6)
COMPARISON_Y_RANGE = (-1.0, 2.5)

SECTION_CODES = {"template": "Tpl", "instructions": "Ins", "tools": "Tls", "history": "His", "current": "Q",
                 "tool_exchanges": "TX", "evidence": "Ev"}
RESERVE_CODES = {"free": "free", "margin": "m", "reserve": "out", "required": "req"}


class TokenAxis(pg.AxisItem):
    """Token ticks with thousands separators (200,000, not 200000)."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 - pyqtgraph's name
        if spacing >= 1:
            return [f"{int(round(v * scale)):,}" for v in values]
        return super().tickStrings(values, scale, spacing)


def section_code(section: str) -> str:
    """The short label a narrow segment of ``section`` carries (also shown in the legend)."""
    return SECTION_CODES.get(section) or (section[:3].capitalize() if section else "?")


def contains(seg: core.Segment, x: float, y: float) -> bool:
    y0, y1 = LANES[seg.lane]
    return seg.x0 <= x <= seg.x1 and y0 <= y <= y1


@dataclass
class Drawn:
    rect: QRectF
    fill: QBrush
    hatch: QBrush | None
    pen: QPen
    label: str
    code: str  # the short label for a narrow segment
    label_colour: QColor


class SegmentsItem(pg.GraphicsObject):
    """Rectangles in view coordinates, painted in device coordinates (a pattern brush would otherwise
    be stretched by the view's scaling)."""

    def __init__(self) -> None:
        super().__init__()
        self._drawn: list[Drawn] = []
        self._bounds = QRectF()

    def setData(self, drawn: list[Drawn]) -> None:
        self.prepareGeometryChange()
        self._drawn = drawn
        bounds = QRectF()
        for d in drawn:
            bounds = bounds.united(d.rect)
        self._bounds = bounds
        self.update()

    def drawn(self) -> list[Drawn]:
        return list(self._drawn)

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, *args) -> None:
        transform = painter.transform()
        view = self.viewRect()
        visible = transform.mapRect(view).normalized() if view is not None else None
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
            shown = rect.intersected(visible) if visible is not None else rect
            text = label_for(metrics, d, shown.width())
            if text:
                painter.setPen(d.label_colour)
                painter.drawText(shown, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()


def label_for(metrics: QFontMetrics, d: Drawn, width: float) -> str:
    """The label if it fits (elided if a little short), else the short code, else nothing."""
    room = int(width) - 6
    if room <= 0:
        return ""
    if metrics.horizontalAdvance(d.label) <= room:
        return d.label
    if room > 60:
        text = metrics.elidedText(d.label, Qt.TextElideMode.ElideRight, room)
        if text and text != "…":
            return text
    return d.code if metrics.horizontalAdvance(d.code) <= room else ""


def readable_on(colour: QColor) -> QColor:
    """Black or white, whichever reads on ``colour`` (a fixed segment colour, not the palette)."""
    luminance = 0.299 * colour.redF() + 0.587 * colour.greenF() + 0.114 * colour.blueF()
    return QColor("#111111") if luminance > 0.55 else QColor("#FFFFFF")


def drawn_segments(segments: list[core.Segment], pal: QPalette, selected: str | None) -> list[Drawn]:
    text = pal.color(QPalette.ColorRole.Text)
    highlight = pal.color(QPalette.ColorRole.Highlight)
    dark = theme.is_dark(pal)
    out: list[Drawn] = []
    for seg in segments:
        y0, y1 = LANES[seg.lane]
        rect = QRectF(seg.x0, y0, seg.width, y1 - y0)
        outline = QPen(theme.with_alpha(text, 110), 1)
        if seg.kind == "section":
            colour = theme.section_colour(seg.key)
            fill, hatch, label_colour = QBrush(colour), None, readable_on(colour)
            approx = "≈" if seg.estimate is not None else ""  # our estimate's share of the provider's figure
            label, code = f"{theme.section_title(seg.key)} {approx}{seg.tokens:,}", section_code(seg.key)
        elif seg.kind == "dropped":
            colour = theme.section_colour(seg.key)
            fill = QBrush(theme.with_alpha(colour, 80))
            hatch = theme.hatch_brush(colour.darker(135) if not dark else colour.lighter(130))
            label_colour = text
            label = seg.run_label()
            code = (f"{section_code(seg.key)} ×{len(seg.items)}" if seg.folded else section_code(seg.key))
            outline = QPen(colour.darker(120), 2 if seg.folded else 1)
            if seg.newly:
                style = theme.CHANGE_STYLES["newly dropped"]
                outline = QPen(QColor(style.colour), 3)
                label, code = f"{style.glyph} {label}", f"{style.glyph}{code}"
        else:
            colour = QColor(theme.RESERVE_COLOURS[seg.kind])
            if seg.kind == "free":
                fill = QBrush(theme.with_alpha(colour, 110))
                label_colour = text
            else:
                fill = QBrush(colour)
                label_colour = readable_on(colour)
            hatch = theme.hatch_brush(colour.darker(170)) if seg.kind == "required" else None
            label = {"free": f"free {seg.tokens:,}", "margin": f"margin {seg.tokens:,}",
                     "reserve": f"output reserve {seg.tokens:,}", "required": f"required {seg.tokens:,}"}[seg.kind]
            code = RESERVE_CODES[seg.kind]
        if selected is not None and seg.section == selected:
            outline = QPen(highlight, 3)
        out.append(Drawn(rect, fill, hatch, outline, label, code, label_colour))
    return out
