"""A one-line label that gives up width: it asks for its text's width, accepts much less, and then
draws the text elided on the right (``text()`` stays whole, for the tooltip and for tests)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    def __init__(self, parent: QWidget | None = None, *, minimum: int = 80) -> None:
        super().__init__(parent)
        self._minimum = minimum
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(self._minimum, hint.width()), hint.height())

    def paintEvent(self, event) -> None:
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        self.style().drawItemText(painter, rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), self.palette(),
                                  self.isEnabled(), text, self.foregroundRole())
        painter.end()
