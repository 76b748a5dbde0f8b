"""The budget bar's marks: the allowance and context-limit lines, a replay's per-lane marks, the
provider's own input-token count of an imported request, and the note at the right edge naming the
marks the view does not reach ("context limit 200,000 →"). Created once, updated in place."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPalette, QPen
from PySide6.QtWidgets import QGraphicsRectItem

import core

from ... import theme
from ...document import Row
from .plot import DROP_LANE, MAIN_LANE, RECORDED_LANE

Limits = tuple[int | None, int | None]  # (allowance, context limit)


class BarMarks:
    def __init__(self, plot: pg.PlotWidget) -> None:
        self.allowance = pg.InfiniteLine(angle=90, movable=False, label="",
                                         labelOpts={"position": 0.93, "anchors": [(1, 0.5), (1, 0.5)]})
        self.limit = pg.InfiniteLine(angle=90, movable=False, label="",
                                     labelOpts={"position": 0.93, "anchors": [(0, 0.5), (0, 0.5)]})
        # comparison: a limit (solid) and an allowance (dashed) mark per lane, and a label beside each limit
        self.limit_marks = pg.PlotCurveItem(connect="pairs")
        self.allowance_marks = pg.PlotCurveItem(connect="pairs")
        self.labels = [pg.TextItem(anchor=(0, 0.5)), pg.TextItem(anchor=(0, 0.5))]
        # an imported request: where the provider's reported input tokens end, against our count
        self.provider_mark = pg.PlotCurveItem()
        self.provider_bar = QGraphicsRectItem()
        self.provider_label = pg.TextItem(anchor=(0, 0.5))
        self.offscreen = pg.TextItem(anchor=(1, 0))
        self.offscreen.setZValue(30)
        for mark in (self.allowance, self.limit, self.limit_marks, self.allowance_marks, *self.labels,
                     self.provider_bar, self.provider_mark, self.provider_label, self.offscreen):
            plot.addItem(mark)
            mark.hide()

    def apply_palette(self, pal: QPalette) -> None:
        base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        self.allowance.setPen(pg.mkPen(text, width=2, style=Qt.PenStyle.DashLine))
        self.limit.setPen(pg.mkPen(text, width=2))
        self.limit_marks.setPen(pg.mkPen(text, width=2))
        self.allowance_marks.setPen(pg.mkPen(text, width=2, style=Qt.PenStyle.DashLine))
        for line in (self.allowance, self.limit):
            line.label.setColor(text)
            line.label.fill = pg.mkBrush(theme.with_alpha(base, 220))
        provider = QColor(core.PROVIDER_COLOUR)
        self.provider_mark.setPen(pg.mkPen(provider, width=3, style=Qt.PenStyle.DotLine))
        bar_pen = QPen(provider, 2)
        bar_pen.setCosmetic(True)  # pixels, not tokens: the view is scaled
        self.provider_bar.setPen(bar_pen)
        self.provider_bar.setBrush(QBrush(theme.with_alpha(provider, 28)))
        self.provider_label.setColor(provider if not theme.is_dark(pal) else text)
        for label in (self.provider_label, *self.labels, self.offscreen):
            if label is not self.provider_label:
                label.setColor(text)
            label.fill = pg.mkBrush(theme.with_alpha(base, 220))

    def set_comparison(self, comparison: bool) -> None:
        if comparison:
            self.allowance.hide()
            self.limit.hide()
        else:
            for mark in (self.limit_marks, self.allowance_marks, *self.labels):
                mark.hide()

    def show_lines(self, allowance: int | None, limit: int | None) -> list[tuple[str, int]]:
        """One request's allowance and limit lines; returns the marks (name, token) drawn."""
        marks = []
        for line, value, text in ((self.allowance, allowance, "allowance"), (self.limit, limit, "context limit")):
            if value is None:
                line.hide()
                continue
            marks.append((text, value))
            line.setValue(value)
            line.show()
            line.label.setFormat(f"{text} {value:,}")  # pyqtgraph ignores a new format while the line is hidden
        return marks

    def show_comparison(self, recorded: Limits, replayed: Limits) -> list[tuple[str, int]]:
        limit_x: list[float] = []
        limit_y: list[float] = []
        allow_x: list[float] = []
        allow_y: list[float] = []
        marks = []
        for (allowance, limit), lane, label, name in ((recorded, RECORDED_LANE, self.labels[0], "recorded"),
                                                      (replayed, MAIN_LANE, self.labels[1], "replayed")):
            y0, y1 = lane[0] - 0.08, lane[1] + 0.08
            if limit is not None:
                limit_x += [limit, limit]
                limit_y += [y0, y1]
                marks.append((f"{name} limit", limit))
            if allowance is not None:
                allow_x += [allowance, allowance]
                allow_y += [y0, y1]
            if limit is None:
                label.hide()
                continue
            label.setText(f"limit {limit:,}" + (f" · allowance {allowance:,}" if allowance is not None else ""))
            label.setPos(limit, sum(lane) / 2)
            label.show()
        self.limit_marks.setData(limit_x, limit_y)
        self.allowance_marks.setData(allow_x, allow_y)
        self.limit_marks.show()
        self.allowance_marks.show()
        return marks

    def show_provider(self, row: Row | None) -> int | None:
        """The lower lane of an imported row: the provider's reported input tokens beside our count, or, where
        our count is an estimate and the bar is drawn to the provider's figure, our estimate beside it. Returns
        where that lane ends (None, and hidden, for any other row)."""
        extra = (row.result.model_extra or {}) if row is not None and row.result is not None else {}
        theirs = extra.get("provider_input_tokens") if row is not None and row.imported is not None else None
        items = (self.provider_bar, self.provider_mark, self.provider_label)
        if not isinstance(theirs, int):
            for mark in items:
                mark.hide()
            return None
        basis = core.bar_basis(row.result)
        drift = extra.get("count_drift")
        if basis.provider:  # the main lane is the provider's figure: ours, an estimate, goes below
            x = float(basis.ours)
            self.provider_label.setText(f"our estimate {basis.ours:,} · drift {basis.drift:+,}")
        else:
            x = float(theirs)
            self.provider_label.setText(f"provider {theirs:,}" + (f" · drift {drift:+d}" if isinstance(drift, int)
                                                                  else ""))
        self.provider_mark.setData([x, x], [DROP_LANE[1], MAIN_LANE[1] + 0.12])
        y0, y1 = DROP_LANE[0] + 0.12, DROP_LANE[1]
        self.provider_bar.setRect(QRectF(0.0, y0, x, y1 - y0))
        self.provider_label.setPos(x, sum(DROP_LANE) / 2)
        for mark in items:
            mark.show()
        return int(x)

    def place_offscreen(self, view_range, marks: list[tuple[str, int]], token_per_pixel: float = 0.0) -> None:
        (x0, x1), (_, y1) = view_range
        # the lower lane's label reads right of its mark, or left of it (inside its bar) where it would run off
        room = self.provider_label.boundingRect().width() * token_per_pixel
        end = self.provider_label.pos().x()
        self.provider_label.setAnchor((1, 0.5) if _reads_left(end, room, x0, x1) else (0, 0.5))
        self._place_limit_label(x0, x1, token_per_pixel)
        beyond = [f"{name} {value:,} →" for name, value in marks if value > x1]
        self.offscreen.setText(" · ".join(beyond))
        self.offscreen.setPos(x1, y1)
        self.offscreen.setVisible(bool(beyond))

    def _place_limit_label(self, x0: float, x1: float, token_per_pixel: float) -> None:
        """The context limit's label reads right of its line, or left of it where it would run off the view's right
        edge ("context limit 1,0" cut off), if it then stays clear of the allowance's label (left of its line)."""
        label = self.limit.label
        if not self.limit.isVisible() or token_per_pixel <= 0:
            return
        value = self.limit.value()
        room = label.boundingRect().width() * token_per_pixel
        allowance = self.allowance.value() if self.allowance.isVisible() else None
        left = _reads_left(value, room, x0, x1) and (allowance is None or allowance > value or value - room > allowance)
        anchor = (1, 0.5) if left else (0, 0.5)
        if label.anchors[0] != anchor:
            label.anchors = [anchor, anchor]
            label.updatePosition()


def _reads_left(x: float, room: float, x0: float, x1: float) -> bool:
    """Whether a label ``room`` tokens wide, beside a mark at ``x``, reads left of it: it would run off the view's
    right edge ``x1`` on the right and fits on the left (past ``x0``)."""
    return x + room > x1 and x - room > x0
