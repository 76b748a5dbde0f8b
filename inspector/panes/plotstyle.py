"""What the inspector's pyqtgraph charts share: a fixed plot (no menu, no buttons, no mouse zoom) and
its colours taken from the widget's palette."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget


def fixed_plot(parent: QWidget, name: str, left: str, *, min_height: int) -> pg.PlotWidget:
    """A plot the person reads and clicks but does not pan or zoom."""
    plot = pg.PlotWidget(parent=parent)
    plot.setAccessibleName(name)
    plot.setMinimumHeight(min_height)
    plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    item = plot.getPlotItem()
    item.setMenuEnabled(False)
    item.hideButtons()
    item.setMouseEnabled(x=False, y=False)
    item.setLabel("left", left)
    return plot


def style_plot(plot: pg.PlotWidget, pal: QPalette) -> tuple[QColor, QColor]:
    """Background and axes in the palette's colours; returns (base, text) for the plot's own items."""
    base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
    plot.setBackground(base)
    for name in ("left", "bottom"):
        axis = plot.getPlotItem().getAxis(name)
        axis.setPen(pg.mkPen(text))
        axis.setTextPen(pg.mkPen(text))
    return base, text
