"""A token figure a person edits with a slider and a spin box together (the replay panel's limits)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QSlider, QSpinBox, QWidget

SPIN_MAX = 2**31 - 1  # Qt's spin boxes and sliders hold 32-bit ints
QT_INT_MAX = SPIN_MAX


class LimitControl(QWidget):
    """A slider and a spin box holding one token figure; either one moves the other."""

    valueChanged = Signal(int)

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setAccessibleName(f"{name} slider")
        self.spin = QSpinBox(self)
        self.spin.setAccessibleName(name)
        self.spin.setRange(0, SPIN_MAX)
        self.spin.setSuffix(" tokens")
        self.spin.setKeyboardTracking(False)  # typing 4096 is one edit, not four
        self.spin.setMinimumWidth(110)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.spin)
        self.slider.valueChanged.connect(self.spin.setValue)
        self.spin.valueChanged.connect(self._spun)

    def _spun(self, value: int) -> None:
        if value > self.slider.maximum():
            self.slider.setMaximum(value)
        self.slider.blockSignals(True)
        self.slider.setValue(value)
        self.slider.blockSignals(False)
        self.valueChanged.emit(value)

    def value(self) -> int:
        return self.spin.value()

    def setValue(self, value: int) -> None:
        self.spin.setValue(value)

    def blank(self) -> None:
        """Show no figure (a dash, the slider at rest) without reporting a change: nothing is loaded to edit."""
        for widget in (self.slider, self.spin):
            widget.blockSignals(True)
        self.slider.setRange(0, 0)
        self.spin.setSpecialValueText("—")  # (shown while the value is the minimum)
        self.spin.setValue(self.spin.minimum())
        for widget in (self.slider, self.spin):
            widget.blockSignals(False)

    def load(self, value: int, low: int, high: int) -> None:
        """Show ``value`` on a slider from ``low`` to ``high`` without reporting a change."""
        for widget in (self.slider, self.spin):
            widget.blockSignals(True)
        self.spin.setSpecialValueText("")  # (a recorded 0 is a figure: ``blank``'s dash is gone)
        # Qt's sliders and spin boxes hold 32-bit ints: a recorded limit beyond that is shown clamped
        value, low, high = (min(v, QT_INT_MAX) for v in (value, low, high))
        self.slider.setRange(low, max(high, value, min(low + 1, QT_INT_MAX)))
        self.slider.setPageStep(max(1, (self.slider.maximum() - low) // 20))
        self.slider.setValue(value)
        self.spin.setValue(value)
        for widget in (self.slider, self.spin):
            widget.blockSignals(False)
