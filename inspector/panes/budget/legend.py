"""The budget bar's legend: a swatch (fill, and hatch for what was not sent) and a name per entry,
laid out left to right and wrapped, so it never clips on a narrow window. A section's entry carries
its short code too ("History (His)"), the label a narrow segment shows."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QWidget, QWidgetItem

import core

from ... import theme
from .plot import section_code

Entry = tuple[str, QBrush, "QBrush | None"]


def legend_entries(segments: list[core.Segment], *, provider: bool, comparing: bool,
                   estimate: bool = False) -> list[Entry]:
    """``estimate``: the bar is drawn to the provider's figure and the lower lane is our estimate."""
    entries: list[Entry] = []
    sections = theme.section_order(s.key for s in segments if s.kind in ("section", "dropped"))
    for section in sections:
        entries.append((f"{theme.section_title(section)} ({section_code(section)})",
                        QBrush(theme.section_colour(section)), None))
    for kind in ("free", "margin", "reserve", "required"):
        if any(s.kind == kind for s in segments):
            colour = QColor(theme.RESERVE_COLOURS[kind])
            hatch = theme.hatch_brush(colour.darker(170)) if kind == "required" else None
            entries.append((theme.RESERVE_TITLES[kind], QBrush(colour), hatch))
    if any(s.kind == "dropped" for s in segments):
        grey = QColor(core.NOT_SENT_COLOUR)
        title = ("Not sent (hatched: dropped, or summarised)" if any(s.kind == "dropped" and s.summarised
                                                                      for s in segments)
                 else "Dropped (hatched: not sent)")
        if any(s.folded for s in segments):
            title += "; runs of many folded into one, with their count"
        entries.append((title, QBrush(theme.with_alpha(grey, 70)), theme.hatch_brush(grey)))
    if provider and not comparing:
        entries.append(("Our estimate of the input (no public tokenizer; the bar above is the provider's figure)"
                        if estimate else "Input tokens the provider reported",
                        QBrush(theme.with_alpha(QColor(core.PROVIDER_COLOUR), 28)), None))
    if any(s.newly for s in segments):
        style = theme.CHANGE_STYLES["newly dropped"]
        entries.append((f"{style.glyph} Newly dropped by the replay (red outline)",
                        QBrush(theme.with_alpha(QColor(style.colour), 60)), None))
    return entries


class _Swatch(QWidget):
    def __init__(self, text: str, fill: QBrush, hatch: QBrush | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = text
        self._fill = fill
        self._hatch = hatch
        self.setAccessibleName(f"Legend: {text}")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def set_entry(self, text: str, fill: QBrush, hatch: QBrush | None) -> bool:
        """This swatch shows another entry, repainted; True when its text (so its size) changed."""
        resized = text != self.text
        if resized:
            self.text = text
            self.setAccessibleName(f"Legend: {text}")
            self.updateGeometry()
        self._fill, self._hatch = fill, hatch
        self.update()
        return resized

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance(self.text) + 30, max(18, metrics.height() + 4))

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        h = self.height()
        box = QRect(2, (h - 12) // 2, 18, 12)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Text), 1))
        painter.setBrush(self._fill)
        painter.drawRect(box)
        if self._hatch is not None:
            painter.setBrush(self._hatch)
            painter.drawRect(box)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(QRect(26, 0, self.width() - 26, h), Qt.AlignmentFlag.AlignVCenter, self.text)
        painter.end()


class _FlowLayout(QLayout):
    """Lays children left to right and wraps them, so the legend never clips on a narrow window."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 12) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        x, y, line_height = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and line_height > 0:
                x = rect.x()
                y += line_height + 2
                line_height = 0
            if apply:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line_height = max(line_height, hint.height())
        return y + line_height - rect.y()


class Legend(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = _FlowLayout(self)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def entries(self) -> list[str]:
        return [item.widget().text for item in self._layout._items if isinstance(item, QWidgetItem)
                and isinstance(item.widget(), _Swatch)]

    def swatches(self) -> list[QWidget]:
        """The entry widgets this legend holds now (old ones are gone at once, not at the next event loop)."""
        return [w for w in self.findChildren(_Swatch) if w.parent() is self]

    def set_entries(self, entries: list[tuple[str, QBrush, QBrush | None]]) -> None:
        """The entries shown, in order. The swatches already there are reused in place (a replay shown
        after another mostly names the same entries: no widget made, shown or deleted for them); the ones
        left over leave at once: hidden and unparented before deleteLater, so none of them is drawn over
        the new ones while it waits to be deleted."""
        swatches = [item.widget() for item in self._layout._items]
        if [(w.text, w._fill, w._hatch) for w in swatches] == list(entries):
            return
        changed = len(swatches) != len(entries)
        for swatch, (text, fill, hatch) in zip(swatches, entries):
            changed |= swatch.set_entry(text, fill, hatch)
        while self._layout.count() > len(entries):
            item = self._layout.takeAt(len(entries))
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.setParent(None)
                widget.deleteLater()
        for text, fill, hatch in entries[len(swatches):]:
            swatch = _Swatch(text, fill, hatch, self)
            self._layout.addWidget(swatch)
            swatch.setVisible(self.isVisible())  # now, not when the layout's queued show runs
        if changed:
            self._layout.invalidate()
            self.updateGeometry()
