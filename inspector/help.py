"""Help: the shortcut sheet with the legend of the rendered request's tints (F1), and About (the versions
a bug report needs: the app, core's result format, Qt, pyqtgraph, the counter)."""
from __future__ import annotations

import html

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QTextBrowser, QVBoxLayout, QWidget

import core

from . import APP_NAME, app_version, theme


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


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str, str]]:
    """(menu text, shortcut, what it does) for every action with a shortcut, in the given order."""
    rows = []
    for action in actions:
        key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if key:
            rows.append((action.text().replace("&", ""), key, action.statusTip() or action.toolTip()))
    return rows


def legend_rows(pal: QPalette) -> list[tuple[str, str, str]]:
    """(swatch colour, name, what it marks) for each tint of the rendered request."""
    rows = [(theme.tint(theme.section_colour(s), pal, theme.REGION_TINT).name(), theme.section_title(s),
             "this section's text (click it to select the item)") for s in core.SECTION_ORDER]
    rows.append((theme.tint(QColor(theme.CONTROL_TINT[0]), pal, theme.CONTROL_TINT[1]).name(), "Control token (bold)",
                 "a literal the tokenizer reads as one special token (role markers, turn ends)"))
    rows.append((theme.tint(QColor(theme.ESCAPED_TINT[0]), pal, theme.ESCAPED_TINT[1]).name(),
                 "Escaped boundary (bold, underlined)", "evidence text that looked like a block boundary, escaped"))
    rows.append(("", "Wavy red underline", "where an audit finding points (double-click it in the Audit tab)"))
    rows.append((pal.color(QPalette.ColorRole.Highlight).name(), "Selection", "the selected item, or a match of Find"))
    return rows


def sheet_html(actions: list[QAction], pal: QPalette) -> str:
    keys = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(t)}</td><td>{html.escape(d)}</td></tr>"
                   for t, k, d in shortcut_rows(actions))
    swatch = '<span style="background:{0}">&nbsp;&nbsp;&nbsp;&nbsp;</span>'.format
    tints = "".join(f"<tr><td>{swatch(c) if c else '〰'}</td><td>{html.escape(n)}</td><td>{html.escape(d)}</td></tr>"
                    for c, n, d in legend_rows(pal))
    return (f"<h3>Keyboard shortcuts</h3><table cellspacing='4'>{keys}</table>"
            f"<h3>The rendered request's tints (Request tab)</h3><table cellspacing='4'>{tints}</table>")


class HelpSheet(QDialog):
    """Help ▸ Shortcuts and Legend (F1): every shortcut, and what each tint of the rendered request marks.
    Non-modal, so it can stay open beside the window."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME}: shortcuts and legend")
        self.setAccessibleName("Shortcuts and legend")
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.browser = QTextBrowser(self)
        self.browser.setAccessibleName("Shortcuts and legend")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(760, 620)

    def show_for(self, actions: list[QAction]) -> None:
        self.browser.setHtml(sheet_html(actions, self.palette()))
        self.show()
        self.raise_()
