"""Colours, glyphs and icons shared by every pane, so a section or a decision looks the same everywhere.

Section colours come from core.palette (Paul Tol's "bright" scheme and Okabe-Ito, colour-blind safe,
mid-tone so they read on both a light and a dark window); text colours always come from the palette, never hard-coded black/white.
Decisions are never told by colour alone: each has a glyph and an icon drawn here as shapes (the
icons do not depend on an emoji font being installed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QIcon, QPainter, QPainterPath, QPalette, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QApplication

import core

# Section and budget colours and names live in core (core.palette), shared with the HTML report.
SECTION_COLOURS = core.SECTION_COLOURS
FALLBACK_COLOURS = core.FALLBACK_COLOURS
SECTION_TITLES = core.SECTION_TITLES
RESERVE_COLOURS = core.RESERVE_COLOURS
RESERVE_TITLES = core.RESERVE_TITLES
_SECTION_PALETTE = core.SectionPalette()  # one for the app: a plan's section keeps its colour in every pane

# The rendered request's tints (Request tab), and its legend (Help ▸ Shortcuts and Legend).
REGION_TINT = 0.30  # each section's region: its colour, lightened
CONTROL_TINT = ("#808080", 0.55)  # a control token the tokenizer reads as one: grey, bold
ESCAPED_TINT = ("#FFB000", 0.70)  # an escaped evidence boundary: amber, bold, underlined
ESCAPED_UNDERLINE = "#B26A00"


@dataclass(frozen=True)
class DecisionStyle:
    glyph: str
    colour: str
    label: str


DECISION_STYLES: dict[str, DecisionStyle] = {
    "kept": DecisionStyle("✓", "#2E7D32", "kept"),
    "dropped": DecisionStyle("✕", "#C62828", "dropped"),
    "required": DecisionStyle("★", "#1565C0", "required"),
    "pinned": DecisionStyle("⚑", "#6A1B9A", "pinned"),
    "summarised": DecisionStyle("Σ", "#B26A00", "summarised"),
    "not permitted": DecisionStyle("⊘", "#455A64", "not permitted"),
    "not rendered": DecisionStyle("∅", "#AD1457", "not rendered"),
}
UNKNOWN_DECISION = DecisionStyle("?", "#757575", "unknown")

SEVERITY_COLOURS: dict[str, str] = {"error": "#C62828", "warning": "#B26A00", "ok": "#2E7D32",
                                    "rejected": "#C62828", "invalid": "#C62828"}


def section_colour(section: str) -> QColor:
    return QColor(_SECTION_PALETTE.colour(section))


def section_title(section: str) -> str:
    return core.section_title(section)


def section_sort_key(section: str) -> tuple[int, str]:
    """Prompt order for known sections; unknown ones after them, by name."""
    if section in core.SECTION_ORDER:
        return (core.SECTION_ORDER.index(section), "")
    return (len(core.SECTION_ORDER), section)


def section_order(sections) -> list[str]:
    """Known sections in prompt order, then the others in the order given (core.section_order)."""
    return core.section_order(sections)


# How a replay changed an item (core.replay's ItemChange.kind): glyph and colour, never colour alone.
CHANGE_STYLES: dict[str, DecisionStyle] = {
    "newly kept": DecisionStyle("▲", "#2E7D32", "newly kept"),
    "newly dropped": DecisionStyle("▼", "#C62828", "newly dropped"),
    "newly summarised": DecisionStyle("Σ", "#B26A00", "newly summarised"),
    "changed": DecisionStyle("≠", "#1565C0", "changed"),
}


def change_style(kind: str) -> DecisionStyle | None:
    return CHANGE_STYLES.get(kind)


def decision_style(decision: str) -> DecisionStyle:
    return DECISION_STYLES.get(decision, UNKNOWN_DECISION)


# what a dropped item's figure is, said where it is shown (the bar's hover text, the tree's tooltip)
PRICED_ALONE = ("A dropped item is priced as what it alone would add to the prompt as sent; items sent together "
                "share some tokens (the evidence preamble, a joined seam), so these figures can add up to more than "
                "the prompt would grow by taking them all.")


def decision_text(decision: str) -> str:
    style = decision_style(decision)
    return f"{style.glyph} {decision}"


def palette() -> QPalette:
    app = QApplication.instance()
    return app.palette() if isinstance(app, QApplication) else QPalette()


def is_dark(pal: QPalette | None = None) -> bool:
    pal = pal or palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def tint(colour: QColor, pal: QPalette | None = None, strength: float = 0.28) -> QColor:
    """``colour`` blended into the palette's base colour: a background that keeps text readable."""
    base = (pal or palette()).color(QPalette.ColorRole.Base)
    if is_dark(pal):
        strength = min(1.0, strength * 1.5)
    return QColor(round(base.red() + (colour.red() - base.red()) * strength),
                  round(base.green() + (colour.green() - base.green()) * strength),
                  round(base.blue() + (colour.blue() - base.blue()) * strength))


def with_alpha(colour: QColor, alpha: int) -> QColor:
    out = QColor(colour)
    out.setAlpha(alpha)
    return out


# ---- icons drawn as shapes, at twice the logical size so they stay sharp on high-DPI screens

def _canvas(size: int) -> tuple[QPixmap, QPainter]:
    ratio = 2.0
    pixmap = QPixmap(round(size * ratio), round(size * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    return pixmap, painter


def _glyph_path(kind: str, s: float) -> QPainterPath:
    """A white glyph on a badge of side ``s``: check, cross, star, pin, sigma, exclamation."""
    path = QPainterPath()
    if kind == "kept":
        path.moveTo(s * 0.26, s * 0.52)
        path.lineTo(s * 0.43, s * 0.69)
        path.lineTo(s * 0.75, s * 0.33)
    elif kind == "dropped":
        path.moveTo(s * 0.32, s * 0.32)
        path.lineTo(s * 0.68, s * 0.68)
        path.moveTo(s * 0.68, s * 0.32)
        path.lineTo(s * 0.32, s * 0.68)
    elif kind == "summarised":
        path.moveTo(s * 0.70, s * 0.28)
        path.lineTo(s * 0.32, s * 0.28)
        path.lineTo(s * 0.54, s * 0.50)
        path.lineTo(s * 0.32, s * 0.72)
        path.lineTo(s * 0.70, s * 0.72)
    elif kind == "pinned":
        path.addEllipse(QPointF(s * 0.5, s * 0.36), s * 0.13, s * 0.13)
        path.moveTo(s * 0.5, s * 0.49)
        path.lineTo(s * 0.5, s * 0.78)
    elif kind in ("error", "warning"):
        path.moveTo(s * 0.5, s * 0.27)
        path.lineTo(s * 0.5, s * 0.58)
        path.moveTo(s * 0.5, s * 0.71)
        path.lineTo(s * 0.5, s * 0.73)
    return path


def _star(s: float) -> QPolygonF:
    points = []
    for k in range(10):
        radius = s * (0.30 if k % 2 == 0 else 0.13)
        angle = -math.pi / 2 + k * math.pi / 5
        points.append(QPointF(s * 0.5 + radius * math.cos(angle), s * 0.53 + radius * math.sin(angle)))
    return QPolygonF(points)


@lru_cache(maxsize=64)
def badge_icon(kind: str, colour: str, size: int = 16) -> QIcon:
    """A coloured badge (circle, or triangle for warnings) with a white glyph."""
    pixmap, painter = _canvas(size)
    s = float(size)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    if kind == "warning":
        painter.drawPolygon(QPolygonF([QPointF(s * 0.5, s * 0.06), QPointF(s * 0.96, s * 0.90),
                                       QPointF(s * 0.04, s * 0.90)]))
    else:
        painter.drawEllipse(QRectF(s * 0.06, s * 0.06, s * 0.88, s * 0.88))
    pen = QPen(QColor("white"), max(1.6, s * 0.13), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap,
               Qt.PenJoinStyle.RoundJoin)
    if kind == "required":
        painter.setBrush(QColor("white"))
        painter.drawPolygon(_star(s))
    else:
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(_glyph_path(kind, s))
    painter.end()
    return QIcon(pixmap)


def decision_icon(decision: str) -> QIcon:
    style = decision_style(decision)
    return badge_icon(decision if decision in DECISION_STYLES else "unknown", style.colour)


def severity_icon(severity: str) -> QIcon:
    """error/warning badges; "ok" is a check; "rejected"/"invalid" read as errors."""
    kind = {"ok": "kept", "warning": "warning"}.get(severity, "error")
    return badge_icon(kind, SEVERITY_COLOURS.get(severity, SEVERITY_COLOURS["error"]))


@lru_cache(maxsize=64)
def swatch_icon(colour: str, size: int = 14) -> QIcon:
    pixmap, painter = _canvas(size)
    painter.setPen(QPen(QColor(colour).darker(130), 1))
    painter.setBrush(QColor(colour))
    painter.drawRoundedRect(QRectF(1, 1, size - 2, size - 2), 3, 3)
    painter.end()
    return QIcon(pixmap)


def section_icon(section: str) -> QIcon:
    return swatch_icon(section_colour(section).name())


def hatch_brush(colour: QColor) -> QBrush:
    """The hatch drawn over what did not fit."""
    return QBrush(colour, Qt.BrushStyle.BDiagPattern)
