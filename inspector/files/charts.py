"""Saving a chart (the budget bar, the what-if chart) as PNG or SVG for slides. PNG through pyqtgraph's
ImageExporter; SVG through Qt's own QSvgGenerator rendering the plot's part of the scene, because
pyqtgraph's SVGExporter fails on the closed paths Qt 6 writes (pyqtgraph issue #3495). The file dialog opens in the folder the person saved a chart to before (never an input's
folder), and a file that exists is replaced only after a yes.
"""
from __future__ import annotations

import re
from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401 - registers the exporters
from PySide6.QtCore import QDir, QRectF, QSettings, QStandardPaths
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

FORMATS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)"}
FOLDER_KEY = "files/chart_folder"
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


def chart_folder(settings: QSettings) -> str:
    """The folder a chart was saved to last, else the person's Pictures (or home) folder."""
    folder = settings.value(FOLDER_KEY, "", type=str)
    if folder and Path(folder).is_dir():
        return folder
    pictures = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation)
    return pictures if pictures and Path(pictures).is_dir() else QDir.homePath()


def file_stem(text: str) -> str:
    return re.sub(r'[\\/:*?"<>|\s]+', "_", text).strip("._")[:120] or "chart"


def confirm_replace(parent: QWidget | None, path: Path) -> bool:
    answer = QMessageBox.question(parent, "Replace file?", f"{path.name} already exists in {path.parent}. Replace it?",
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def ask_chart_path(parent: QWidget | None, settings: QSettings, name: str, fmt: str) -> Path | None:
    """A path the person chose (None: cancelled or declined to replace). The dialog's own overwrite
    prompt is off so that the one prompt here is the same everywhere (and testable)."""
    start = str(Path(chart_folder(settings)) / f"{file_stem(name)}.{fmt}")
    chosen, _ = QFileDialog.getSaveFileName(parent, f"Save chart as {fmt.upper()}", start, FORMATS[fmt],
                                            options=QFileDialog.Option.DontConfirmOverwrite)
    if not chosen:
        return None
    path = Path(chosen)
    if path.suffix.lower() != f".{fmt}":
        path = path.with_name(path.name + f".{fmt}")
    if path.exists() and not confirm_replace(parent, path):
        return None
    settings.setValue(FOLDER_KEY, str(path.parent))
    return path
