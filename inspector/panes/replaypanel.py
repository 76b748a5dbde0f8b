"""The replay panel: the controls a person edits a recording with, and the what-if chart.

Context limit, output reserve and margin (slider and spin box each), the fill order (drag to
reorder, or the up/down buttons), a plan's section shares and pins and its messages' pins, and the
counter (the window's own Counter… actions). The panel only reports that something changed
(``editsChanged``) and says which ``Edits`` the controls hold now; the window replays them.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QColor, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QDoubleSpinBox, QFormLayout, QFrame, QHBoxLayout, QLabel,
                               QListWidget, QListWidgetItem, QPushButton, QSizePolicy, QTableWidgetItem,
                               QToolButton, QVBoxLayout, QWidget)

import core
from core.replay import Diff, Edits

from .. import theme
from ..document.replay import ReplayBase
from .limitcontrol import SPIN_MAX, LimitControl
from .planshares import ID_ROLE, PlanShares
from .whatif import WhatIfChart


class ReplayPanel(QWidget):
    editsChanged = Signal()
    resetRequested = Signal()
    saveRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Replay")
        self._base: ReplayBase | None = None
        self._loading = False
        self._replayed = False

        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setAccessibleName("Replay note")

        self.controls = QWidget(self)
        self.limit = LimitControl("Context limit", self.controls)
        self.reserve = LimitControl("Output reserve", self.controls)
        self.margin = LimitControl("Margin", self.controls)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Context &limit", self.limit)
        form.addRow("Output &reserve", self.reserve)
        form.addRow("Mar&gin", self.margin)
        for label, control in ((form.labelForField(self.limit), self.limit), (form.labelForField(self.reserve),
                               self.reserve), (form.labelForField(self.margin), self.margin)):
            if isinstance(label, QLabel):
                label.setBuddy(control.spin)

        self.fill_list = QListWidget(self.controls)
        self.fill_list.setAccessibleName("Fill order")
        self.fill_list.setToolTip("Which optional section fills first: drag to reorder, or use the arrows")
        self.fill_list.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.fill_list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.fill_list.setMaximumHeight(72)
        self.fill_up = QToolButton(self.controls)
        self.fill_up.setText("▲")
        self.fill_up.setToolTip("Fill the selected section earlier")
        self.fill_up.setAccessibleName("Fill earlier")
        self.fill_down = QToolButton(self.controls)
        self.fill_down.setText("▼")
        self.fill_down.setToolTip("Fill the selected section later")
        self.fill_down.setAccessibleName("Fill later")
        arrows = QVBoxLayout()
        arrows.addWidget(self.fill_up)
        arrows.addWidget(self.fill_down)
        arrows.addStretch(1)
        fill_row = QHBoxLayout()
        fill_row.addWidget(self.fill_list, 1)
        fill_row.addLayout(arrows)
        fill_label = QLabel("&Fill order", self.controls)
        fill_label.setBuddy(self.fill_list)
        form.addRow(fill_label, fill_row)

        self.plan_box = PlanShares(self.controls)
        self.plan_table, self.pin_list = self.plan_box.table, self.plan_box.pins

        self.counter_label = QLabel(self.controls)
        self.counter_label.setAccessibleName("Replay counter")
        self.embedded_button = QToolButton(self.controls)
        self.choose_button = QToolButton(self.controls)
        counter_row = QHBoxLayout()
        counter_row.addWidget(self.counter_label, 1)
        counter_row.addWidget(self.embedded_button)
        counter_row.addWidget(self.choose_button)
        form.addRow("Counter", counter_row)

        controls_layout = QVBoxLayout(self.controls)
        controls_layout.setContentsMargins(0, 0, 0, 0)
        controls_layout.addLayout(form)
        controls_layout.addWidget(self.plan_box)

        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAccessibleName("Replay problem")
        self.message.setAutoFillBackground(True)
        self.message.setFrameShape(QFrame.Shape.StyledPanel)
        self.message.setMargin(4)
        self.message.hide()
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setAccessibleName("Replay summary")

        self.reset_button = QPushButton("Reset to &recorded", self)
        self.save_button = QPushButton("Save &replayed as…", self)
        self.save_button.setToolTip("Write the replayed result as JSON to a new file (never over an open one)")
        buttons = QHBoxLayout()
        buttons.addWidget(self.reset_button)
        buttons.addWidget(self.save_button)
        buttons.addStretch(1)

        self.whatif = WhatIfChart(self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.note)
        layout.addWidget(self.controls)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.summary)
        layout.addWidget(self.whatif, 1)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)

        for control in (self.limit, self.reserve, self.margin):
            control.valueChanged.connect(self._changed)
        self.fill_list.model().rowsMoved.connect(self._changed)
        self.fill_up.clicked.connect(lambda: self.move_fill(-1))
        self.fill_down.clicked.connect(lambda: self.move_fill(1))
        self.plan_box.changed.connect(self._changed)
        self.pin_list.itemChanged.connect(self._changed)
        self.plan_table.itemChanged.connect(self._changed)
        self.reset_button.clicked.connect(self.resetRequested)
        self.save_button.clicked.connect(self.saveRequested)
        self.set_read_only("Select a request or a recorded result to replay it under other limits.")

    # ---- what the window sets

    def set_counter_actions(self, embedded: QAction, choose: QAction) -> None:
        self.embedded_button.setDefaultAction(embedded)
        self.choose_button.setDefaultAction(choose)
        self.embedded_button.setText("Embedded")
        self.choose_button.setText("Tokenizer…")

    def set_counter_text(self, text: str, tip: str = "") -> None:
        self.counter_label.setText(text)
        self.counter_label.setToolTip(tip)

    @property
    def base(self) -> ReplayBase | None:
        return self._base

    def set_read_only(self, note: str) -> None:
        """Nothing to replay here (a recording without its request, an unreadable entry): say why, and show no
        figures (greyed controls holding the last row's limits read as this row's)."""
        self._base = None
        self.note.setText(note)
        self._loading = True
        try:
            for control in (self.limit, self.reserve, self.margin):
                control.blank()
            self.fill_list.clear()
            self.plan_box.clear()
        finally:
            self._loading = False
        self.controls.setEnabled(False)
        self.reset_button.setEnabled(False)
        self.save_button.setEnabled(False)
        self.message.hide()
        self.summary.setText("")
        self.whatif.clear("")

    def load(self, base: ReplayBase, note: str) -> None:
        """Show the recorded values of a new row, without reporting an edit."""
        self._loading = True
        try:
            self._base = base
            self.note.setText(note)
            self.controls.setEnabled(True)
            self.reset_button.setEnabled(True)
            limit = base.context_limit
            self.limit.load(limit, 1, 2 * limit)
            self.reserve.load(base.max_new_tokens, 0, max(2 * base.max_new_tokens, limit // 2))
            margin = base.margin or 0
            self.margin.load(margin, 0, max(2 * margin, limit // 8, 64))
            self.margin.setEnabled(base.margin is not None)
            self.margin.setToolTip("" if base.margin is not None else "A plan has no margin: its budget is the "
                                                                      "window minus the output reserve")
            self.fill_list.clear()
            for name in base.fill_order:
                item = QListWidgetItem(theme.section_title(name))
                item.setData(ID_ROLE, name)
                item.setIcon(theme.section_icon(name))
                self.fill_list.addItem(item)
            self.plan_box.load(base)
            self.message.hide()
            self.summary.setText("")
        finally:
            self._loading = False
        self._update_save()

    # ---- reading the controls

    def fill_order(self) -> tuple[str, ...]:
        return tuple(self.fill_list.item(i).data(ID_ROLE) for i in range(self.fill_list.count()))

    def share_spin(self, section: str) -> QDoubleSpinBox | None:
        return self.plan_box.share_spin(section)

    def section_pin_item(self, section: str) -> QTableWidgetItem | None:
        return self.plan_box.section_pin_item(section)

    def message_pin_item(self, message_id: str) -> QListWidgetItem | None:
        return self.plan_box.message_pin_item(message_id)

    def edits(self) -> Edits:
        """The edits the controls hold against the recording (a value left as recorded is not an edit)."""
        base = self._base
        if base is None:
            return Edits()
        limit, reserve = self.limit.value(), self.reserve.value()
        margin = self.margin.value() if base.margin is not None else None
        order = self.fill_order()
        shares, pins = self.plan_box.edits(base)
        shown = lambda recorded: min(recorded, SPIN_MAX) if recorded is not None else None  # noqa: E731
        return Edits(context_limit=limit if limit != shown(base.context_limit) else None,
                     max_new_tokens=reserve if reserve != shown(base.max_new_tokens) else None,
                     margin=margin if margin is not None and margin != shown(base.margin) else None,
                     fill_order=order if order != base.fill_order else None,
                     shares=shares, pins=pins)

    # ---- editing

    def apply_edits(self, edits: Edits) -> None:
        """Set the controls to ``edits`` on top of the loaded recording (a file read again keeps them)."""
        base = self._base
        if base is None:
            return
        self._loading = True
        try:
            if edits.context_limit is not None:
                self.limit.setValue(edits.context_limit)
            if edits.max_new_tokens is not None:
                self.reserve.setValue(edits.max_new_tokens)
            if edits.margin is not None and base.margin is not None:
                self.margin.setValue(edits.margin)
            if edits.fill_order is not None and sorted(edits.fill_order) == sorted(self.fill_order()):
                items = {self.fill_list.item(i).data(ID_ROLE): i for i in range(self.fill_list.count())}
                taken = [self.fill_list.item(items[name]).clone() for name in edits.fill_order]
                self.fill_list.clear()
                for item in taken:
                    self.fill_list.addItem(item)
            self.plan_box.apply(edits.shares, edits.pins)
        finally:
            self._loading = False

    def set_limit(self, value: int) -> None:
        self.limit.setValue(value)

    def move_fill(self, step: int) -> None:
        row = self.fill_list.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.fill_list.count():
            return
        item = self.fill_list.takeItem(row)
        self.fill_list.insertItem(target, item)
        self.fill_list.setCurrentRow(target)
        self._changed()

    def _changed(self, *_args) -> None:
        if self._loading or self._base is None:
            return
        self.whatif.set_edit_limit(self.limit.value())
        self.editsChanged.emit()

    # ---- what the window shows back

    def set_replayed(self, replayed: bool) -> None:
        """Whether a replayed result is shown (and so can be saved)."""
        self._replayed = replayed
        self._update_save()

    def _update_save(self) -> None:
        self.save_button.setEnabled(self._base is not None and self._replayed)

    def show_summary(self, text: str) -> None:
        self.message.hide()
        self.summary.setText(text)

    def show_problem(self, text: str) -> None:
        """An edit the core refuses: the reason in place; the last good view stays as it was."""
        self.message.setText("⚠ " + text + "\nThe view still shows the last edit that fit.")
        pal = self.message.palette()
        pal.setColor(QPalette.ColorRole.Window, theme.tint(QColor(theme.SEVERITY_COLOURS["error"]), None, 0.22))
        self.message.setPalette(pal)
        self.message.show()

    def problem(self) -> str:
        return "" if self.message.isHidden() else self.message.text()


def outcome_summary(recorded: core.AssemblyResult | None, replayed: core.AssemblyResult, diff: Diff | None) -> str:
    """One paragraph of figures for the panel: the replayed budget against the recorded one, and how many
    items changed their decision (counted from the core's diff)."""
    text = (f"Replayed: {replayed.input_tokens} input tokens of a {replayed.input_budget}-token allowance "
            f"(limit {replayed.context_limit}).")
    if recorded is not None:
        text += (f" Recorded: {recorded.input_tokens} of {recorded.input_budget} (limit {recorded.context_limit}); "
                 f"input {replayed.input_tokens - recorded.input_tokens:+d} tokens.")
    if diff is not None:
        counts: dict[str, int] = {}
        for change in diff.changes:
            counts[change.kind] = counts.get(change.kind, 0) + 1
        if counts:
            text += " " + ", ".join(f"{theme.CHANGE_STYLES[k].glyph if k in theme.CHANGE_STYLES else ''}{n} {k}"
                                    for k, n in counts.items()) + "."
        else:
            text += " No item changes its decision."
    return text
