"""The strip above the tree for an imported provider request: where it came from, our count beside the
provider's (the drift), the context limit set for its model, and "Re-assemble".

It only shows and reports: the window remembers the limit per model and recounts off the GUI thread.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from .. import theme
from ..document import Row
from ..document.imported import drift_text, format_title, model_key

MAX_LIMIT = 100_000_000


class ImportedRequestBar(QFrame):
    limitChanged = Signal(str, int)  # model name, context limit (0: none set, core's assumed size)
    reassembleRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Imported request")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setAccessibleName("Imported from")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)  # a long trace or span id wraps; the window never grows for it
        self.drift = QLabel(self)
        self.drift.setTextFormat(Qt.TextFormat.PlainText)
        self.drift.setAccessibleName("Count drift")
        self.drift.setWordWrap(True)
        font = self.drift.font()
        font.setBold(True)
        self.drift.setFont(font)
        self.limit_label = QLabel(self)
        self.limit_label.setWordWrap(True)  # "Context limit for <a long model name>:"
        self.limit = QSpinBox(self)
        self.limit.setRange(0, MAX_LIMIT)
        self.limit.setSpecialValueText("assumed by core")  # 0: no limit set, core's rounded-up size is used
        self.limit.setSingleStep(1024)
        self.limit.setSuffix(" tokens")
        self.limit.setKeyboardTracking(False)  # one recount when the person is done typing, not per digit
        self.limit.setAccessibleName("Context limit for this model")
        self.limit_label.setBuddy(self.limit)
        self.limit_note = QLabel(self)
        self.limit_note.setTextFormat(Qt.TextFormat.PlainText)
        self.limit_note.setWordWrap(True)
        self.limit_note.setAccessibleName("Where the context limit comes from")
        self.reassemble_button = QPushButton("Re-assemble", self)
        self.reassemble_button.setAccessibleName("Re-assemble with the core assembler")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.summary, 1)
        top.addWidget(self.drift)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.limit_label)
        bottom.addWidget(self.limit)
        bottom.addWidget(self.limit_note, 1)
        bottom.addWidget(self.reassemble_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 6, 4)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addLayout(bottom)
        self._model = ""
        self.limit.valueChanged.connect(self._limit_edited)
        self.reassemble_button.clicked.connect(self.reassembleRequested)
        self._tint()
        self.hide()

    @property
    def model(self) -> str:
        """The model name the limit is set for."""
        return self._model

    def set_reassemble_tip(self, tip: str) -> None:
        self.reassemble_button.setToolTip(tip)

    def show_row(self, row: Row | None, remembered: int | None) -> None:
        """Show ``row`` if it is an imported request (else hide); ``remembered`` is the limit set for its model."""
        if row is None or row.imported is None:
            self.hide()
            return
        request = row.imported
        recorded = request.recorded
        self._model = model_key(request)
        info = row.import_source.info if row.import_source is not None else None
        parts = [f"Imported: {format_title(info.name) if info else recorded.format}", recorded.format]
        if recorded.model:
            parts.append(f"model {recorded.model}")
        if recorded.trace_id:
            parts.append(f"trace {recorded.trace_id}")
        if recorded.span_id:
            parts.append(f"span {recorded.span_id}")
        if request.warnings:
            parts.append(f"{len(request.warnings)} import warning{'s' if len(request.warnings) != 1 else ''}")
        self.summary.setText(" · ".join(parts))
        self.summary.setToolTip(info.detail if info is not None else "")
        if row.result is not None:
            self.drift.setText("Count: " + drift_text(row))
            counter = row.result.counter.name if row.result.counter else "the counter"
            self.drift.setToolTip(f"Ours: {counter} over the complete request, chat template and tools included. "
                                  "Provider: the input tokens the file records the provider reported. Another "
                                  "tokenizer, or text the provider adds, shows up as drift (ours − theirs).")
        else:
            self.drift.setText("Not counted (see the Item tab)")
        self.limit_label.setText(f"Context limit for {self._model}:")
        value = row.result.context_limit if row.result is not None else remembered
        self.limit.blockSignals(True)
        self.limit.setValue(value or 0)
        self.limit.blockSignals(False)
        self.limit_note.setText(self._limit_note(row, remembered))
        self.reassemble_button.setEnabled(row.result is not None)
        self.show()

    def _limit_note(self, row: Row, remembered: int | None) -> str:
        if row.result is None:
            return f"Set for {self._model}." if remembered else "No limit set for this model yet."
        source = str((row.result.model_extra or {}).get("context_limit_source") or "")
        if source == "given":
            return (f"Set by you for {self._model} and remembered; output reserve {row.result.max_new_tokens}, "
                    f"allowance {row.result.input_budget}.")
        return (f"{source.capitalize()}. Set the model's real window here; it is remembered for {self._model} "
                "(0 goes back to the assumed size).")

    def _limit_edited(self, value: int) -> None:
        if self._model:
            self.limitChanged.emit(self._model, value)

    def _tint(self) -> None:
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, theme.tint(theme.section_colour("tools"), None, 0.10))
        self.setPalette(pal)
