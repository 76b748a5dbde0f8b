"""Delegates: how a cell is drawn where plain text would not do (a decision as a coloured badge)."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from .. import theme
from .roles import DECISION_ROLE


class DecisionDelegate(QStyledItemDelegate):
    """Draws a decision as a badge: rounded pill in the decision colour, icon and word in white."""

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        decision = index.data(DECISION_ROLE)
        if not decision:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:  # selection background and focus as the style draws them
            opt.text = ""
            opt.icon = QIcon()
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        look = theme.decision_style(decision)
        metrics = option.fontMetrics
        label = f"{look.glyph} {decision}"
        width = min(option.rect.width() - 4, metrics.horizontalAdvance(label) + 16)
        height = min(option.rect.height() - 4, metrics.height() + 4)
        rect = option.rect.adjusted(2, (option.rect.height() - height) // 2, 0, 0)
        rect.setWidth(width)
        rect.setHeight(height)
        painter.save()
        painter.setRenderHint(painter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(look.colour))
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(QColor("#ffffff"))
        font = painter.font()
        font.setBold(True)
        painter.setFont(font)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex):
        size = super().sizeHint(option, index)
        size.setHeight(max(size.height(), option.fontMetrics.height() + 5))
        return size
