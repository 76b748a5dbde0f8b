"""The message bar: a non-modal banner for the latest problem, how many came before it, and a way to the log."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from .. import theme


class MessageBar(QFrame):
    """A non-modal banner for problems: the latest message, how many others, and a way to the log."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Message bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.icon = QLabel(self)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName("Message")
        self.log_button = QPushButton("Show log", self)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setAccessibleName("Dismiss message")
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.icon)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.log_button)
        layout.addWidget(self.close_button)
        self.level = "info"
        self._shown = 0  # messages since the bar was last dismissed
        self.hide()

    def dismiss(self) -> None:
        self._shown = 0
        self.hide()

    def show_message(self, level: str, text: str) -> None:
        """Show the latest problem; the ones before it (since the last dismissal) are counted, not hidden."""
        self._shown = self._shown + 1 if not self.isHidden() else 1
        others = self._shown - 1
        self.level = level
        severity = {"error": "error", "warning": "warning"}.get(level, "ok")
        self.icon.setPixmap(theme.severity_icon(severity).pixmap(18, 18))
        suffix = f"  (+{others} more in the log)" if others else ""
        self.text.setText(text + suffix)
        pal = self.palette()
        colour = theme.SEVERITY_COLOURS.get(severity, theme.SEVERITY_COLOURS["ok"])
        pal.setColor(QPalette.ColorRole.Window, theme.tint(QColor(colour), None, 0.22))
        self.setPalette(pal)
        self.show()

    def message(self) -> str:
        return "" if self.isHidden() else self.text.text()
