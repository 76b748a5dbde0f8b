"""The replay panel's plan controls: each section's share and pin, and the pins of messages with an id.

The box only says that something changed (``changed``) and which shares and pins differ from the loaded
recording (``edits``); the replay panel folds them into its ``Edits``.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QDoubleSpinBox, QGroupBox, QHeaderView, QLabel, QListWidget,
                               QListWidgetItem, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from .. import theme
from ..document.replay import ReplayBase

ID_ROLE = Qt.ItemDataRole.UserRole + 1


class PlanShares(QGroupBox):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Plan: shares and pins", parent)
        self._loaded_shares: dict[str, float] = {}
        self.table = QTableWidget(0, 3, self)
        self.table.setAccessibleName("Plan sections")
        self.table.setHorizontalHeaderLabels(["Section", "Share", "Pinned"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.pins = QListWidget(self)
        self.pins.setAccessibleName("Pinned messages")
        self.pins.setToolTip("Messages with an id: checked ones are pinned (allocated first, never evicted)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.table)
        layout.addWidget(QLabel("Pinned messages (by id):", self))
        layout.addWidget(self.pins)
        self.hide()
        self.pins.itemChanged.connect(self.changed)
        self.table.itemChanged.connect(self.changed)

    def clear(self) -> None:
        """No plan loaded: no shares nor pins, hidden."""
        self.table.setRowCount(0)
        self.pins.clear()
        self._loaded_shares = {}
        self.hide()

    def load(self, base: ReplayBase) -> None:
        """The recording's shares and pins (shown only for a plan)."""
        self.setVisible(base.is_plan)
        self.table.setRowCount(0)
        self.pins.clear()
        self._loaded_shares = {}
        if not base.is_plan:
            return
        self.table.setRowCount(len(base.shares))
        for row, (name, share) in enumerate(base.shares.items()):
            title = QTableWidgetItem(theme.section_icon(name), name)
            title.setData(ID_ROLE, name)
            self.table.setItem(row, 0, title)
            spin = QDoubleSpinBox(self.table)
            spin.setAccessibleName(f"Share of {name}")
            spin.setRange(0.0, 1.0)
            spin.setDecimals(3)
            spin.setSingleStep(0.05)
            spin.setSpecialValueText("none")  # 0: the section fills what the shared sections leave
            spin.setKeyboardTracking(False)
            spin.setValue(share or 0.0)
            self._loaded_shares[name] = spin.value()
            spin.valueChanged.connect(self.changed)
            self.table.setCellWidget(row, 1, spin)
            pinned = QTableWidgetItem("pinned")
            pinned.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            pinned.setCheckState(Qt.CheckState.Checked if base.section_pins.get(name) else Qt.CheckState.Unchecked)
            pinned.setData(ID_ROLE, name)
            self.table.setItem(row, 2, pinned)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setFixedHeight(self.table.horizontalHeader().height()
                                  + sum(self.table.rowHeight(r) for r in range(len(base.shares))) + 4)
        for pin in base.message_pins:
            item = QListWidgetItem(f"{pin.section} / {pin.id}")
            item.setData(ID_ROLE, pin.id)
            item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            item.setCheckState(Qt.CheckState.Checked if pin.pinned else Qt.CheckState.Unchecked)
            self.pins.addItem(item)
        self.pins.setFixedHeight(min(140, 6 + 22 * max(1, len(base.message_pins))))

    def share_spin(self, section: str) -> QDoubleSpinBox | None:
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).data(ID_ROLE) == section:
                widget = self.table.cellWidget(row, 1)
                return widget if isinstance(widget, QDoubleSpinBox) else None
        return None

    def section_pin_item(self, section: str) -> QTableWidgetItem | None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 2)
            if item is not None and item.data(ID_ROLE) == section:
                return item
        return None

    def message_pin_item(self, message_id: str) -> QListWidgetItem | None:
        for i in range(self.pins.count()):
            if self.pins.item(i).data(ID_ROLE) == message_id:
                return self.pins.item(i)
        return None

    def edits(self, base: ReplayBase) -> tuple[dict[str, float | None], dict[str, bool]]:
        """(shares, pins) that differ from the recording ``base``: a share of 0 is None (no share)."""
        shares: dict[str, float | None] = {}
        pins: dict[str, bool] = {}
        if not base.is_plan:
            return shares, pins
        for name in base.shares:
            spin = self.share_spin(name)
            if spin is not None and spin.value() != self._loaded_shares.get(name):
                shares[name] = spin.value() or None
            item = self.section_pin_item(name)
            if item is not None and (item.checkState() == Qt.CheckState.Checked) != base.section_pins.get(name):
                pins[name] = item.checkState() == Qt.CheckState.Checked
        for pin in base.message_pins:
            item = self.message_pin_item(pin.id)
            if item is not None and (item.checkState() == Qt.CheckState.Checked) != pin.pinned:
                pins[pin.id] = item.checkState() == Qt.CheckState.Checked
        return shares, pins

    def apply(self, shares: dict[str, float | None], pins: dict[str, bool]) -> None:
        """The controls set to ``shares`` and ``pins`` (keys this recording lacks are passed over)."""
        for name, share in shares.items():
            spin = self.share_spin(name)
            if spin is not None:
                spin.setValue(share or 0.0)
        for key, pinned in pins.items():
            item = self.section_pin_item(key) or self.message_pin_item(key)
            if item is not None:
                item.setCheckState(Qt.CheckState.Checked if pinned else Qt.CheckState.Unchecked)
