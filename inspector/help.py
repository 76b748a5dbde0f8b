"""Help ▸ About: the versions a bug report needs (the app, core's result format, Qt, pyqtgraph, the counter)."""
from __future__ import annotations

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QMessageBox, QWidget

import core

from . import APP_NAME, app_version


def about_text(counter: core.TokenCounter | None, spec: str) -> str:
    import pyqtgraph

    identity = counter.identity if counter is not None else None
    counter_text = (f"{identity.name} ({identity.model}, {identity.revision})" if identity is not None
                    else f"{spec} (not built yet)")
    result_format = getattr(core, "RESULT_FORMAT", None)
    if result_format is None:
        from core.result import RESULT_FORMAT as result_format
    return (f"{APP_NAME} {app_version()}\n"
            "See exactly what a model request carried, item by item, and why.\n\n"
            f"Core result format: {result_format}\n"
            f"PySide6: {pyside_version}\nQt: {qVersion()}\npyqtgraph: {pyqtgraph.__version__}\n"
            f"Counter: {counter_text}")


def about_box(parent: QWidget) -> QMessageBox:
    # non-modal: it never blocks the event loop (or a test)
    box = QMessageBox(QMessageBox.Icon.Information, f"About {APP_NAME}", "", QMessageBox.StandardButton.Ok, parent)
    box.setWindowModality(Qt.WindowModality.NonModal)
    return box
