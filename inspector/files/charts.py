"""Saving a chart (the budget bar, the what-if chart) as PNG or SVG for slides. PNG through pyqtgraph's
ImageExporter; SVG through Qt's own QSvgGenerator rendering the plot's part of the scene, because
pyqtgraph's SVGExporter fails on the closed paths Qt 6 writes (pyqtgraph issue #3495). Where a chart
goes is decided as for every other save (files/destination.py): the folder of the last save (never an
input's folder), and a file that exists is replaced only after a yes.
"""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401 - registers the exporters
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QWidget

from .destination import ask_save_path, confirm_replace, default_folder, file_name
from .settings import Settings, open_settings

FORMATS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)"}
PNG_WIDTH = 1600  # pixels: sharp on a slide


class ChartExportError(Exception):
    pass


def export_chart(item: pg.PlotItem, path: str | Path, fmt: str) -> Path:
    """Write ``item`` (a plot with its axes) to ``path`` as ``fmt`` ("png" or "svg")."""
    path = Path(path)
    if fmt == "png":
        exporter = pg.exporters.ImageExporter(item)
        exporter.parameters()["width"] = PNG_WIDTH
    elif fmt == "svg":
        return _export_svg(item, path)
    else:
        raise ValueError(f"unknown chart format {fmt!r}; one of {', '.join(FORMATS)}")
    try:
        result = exporter.export(str(path))
    except OSError as exc:
        raise ChartExportError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if result is False or not path.exists():
        raise ChartExportError(f"cannot write {path}")
    return path


def _export_svg(item: pg.PlotItem, path: Path) -> Path:
    source = item.sceneBoundingRect()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(source.size().toSize())
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle("Context Inspector chart")
    views = item.scene().views()
    if views:  # the axes replay pictures recorded at the screen's resolution: write at the same one
        generator.setResolution(views[0].logicalDpiX())
    painter = QPainter()
    if not painter.begin(generator):
        raise ChartExportError(f"cannot write {path}")
    if views:  # the plot's background is the view's, not the scene's: paint it first
        painter.fillRect(QRectF(0, 0, source.width(), source.height()), views[0].backgroundBrush())
    item.scene().render(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()
    if not path.exists() or path.stat().st_size == 0:
        raise ChartExportError(f"cannot write {path}")
    return path


def chart_name(label: str, strategy: str | None, what: str, fmt: str) -> str:
    """``demo.assemble.budget.png``: the request, its strategy and the chart, like the other saves."""
    return file_name(label, strategy, f".{what}.{fmt}")


def ask_chart_path(parent: QWidget | None, settings: Settings, name: str, fmt: str) -> Path | None:
    """A path the person chose (None: cancelled, or declined to replace a file). Starts in the folder of the
    last save (shared with every other save: files/destination.py), asks before replacing, remembers."""
    chosen = ask_save_path(parent, f"Save chart as {fmt.upper()}", default_folder(settings.save_folder()) / name,
                           FORMATS[fmt])
    if not chosen:
        return None
    path = Path(chosen)
    if path.suffix.lower() != f".{fmt}":  # the dialog asked about the name as typed: ask about this one too
        path = path.with_name(path.name + f".{fmt}")
        if not confirm_replace(parent, path):
            return None
    settings.set_save_folder(path.parent)
    return path


def save_chart(parent: QWidget | None, item: pg.PlotItem, name: str, fmt: str) -> Path | None:
    """Ask where (see ``ask_chart_path``) and write ``item`` there; None when the person cancelled.
    Raises ChartExportError when the file cannot be written."""
    path = ask_chart_path(parent, Settings(open_settings()), name, fmt)
    return export_chart(item, path, fmt) if path is not None else None
