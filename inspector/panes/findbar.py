"""Find inside a read-only text (the rendered request, the JSON): a bar under it with the text to find,
"n of m", previous and next. Enter finds the next match, Shift+Enter the previous, Esc closes the bar.
A match is shown as the text's selection, so the text's own tints stay as they are."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QToolButton, QWidget


class _FindEdit(QLineEdit):
    def __init__(self, bar: FindBar) -> None:
        super().__init__(bar)
        self._bar = bar

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._bar.find_next(backward=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        elif event.key() == Qt.Key.Key_Escape:
            self._bar.close_bar()
        else:
            super().keyPressEvent(event)


class FindBar(QWidget):
    def __init__(self, editor: QPlainTextEdit, what: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.setAccessibleName(f"Find in {what}")
        self.edit = _FindEdit(self)
        self.edit.setPlaceholderText(f"Find in {what}")
        self.edit.setAccessibleName(f"Find in {what}")
        self.edit.setClearButtonEnabled(True)
        self.count_label = QLabel(self)
        self.count_label.setAccessibleName("Matches")
        self.prev_button = self._button("▲", "Previous match (Shift+Enter)", lambda: self.find_next(backward=True))
        self.next_button = self._button("▼", "Next match (Enter)", self.find_next)
        self.close_button = self._button("✕", "Close (Esc)", self.close_bar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addWidget(self.edit, 1)
        for widget in (self.count_label, self.prev_button, self.next_button, self.close_button):
            layout.addWidget(widget)
        self.edit.textChanged.connect(self._text_changed)
        self.hide()

    def _button(self, text: str, tip: str, slot) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.clicked.connect(slot)
        return button

    def open_bar(self) -> None:
        """Show the bar with the editor's selected text (if any) to find, and focus it."""
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.edit.setText(selected)
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()
        self._update_count()

    def close_bar(self) -> None:
        self.hide()
        self.editor.setFocus(Qt.FocusReason.OtherFocusReason)

    def matches(self) -> list[int]:
        """Start positions of every match (case-insensitive), in document order."""
        needle = self.edit.text()
        if not needle:
            return []
        document, starts = self.editor.document(), []
        cursor = document.find(needle, 0)
        while not cursor.isNull():
            starts.append(cursor.selectionStart())
            cursor = document.find(needle, cursor)
        return starts

    def find_next(self, *, backward: bool = False) -> bool:
        needle = self.edit.text()
        if not needle:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if not self.editor.find(needle, flags):  # wrap around
            cursor = self.editor.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
            self.editor.setTextCursor(cursor)
            if not self.editor.find(needle, flags):
                self._update_count()
                return False
        self.editor.centerCursor()
        self._update_count()
        return True

    def _text_changed(self, _text: str) -> None:
        cursor = self.editor.textCursor()
        cursor.setPosition(cursor.selectionStart())  # search again from where the last match began
        self.editor.setTextCursor(cursor)
        if not self.find_next():
            self._update_count()

    def _update_count(self) -> None:
        starts = self.matches()
        if not self.edit.text():
            self.count_label.setText("")
            return
        current = self.editor.textCursor()
        at = current.selectionStart() if current.hasSelection() else -1
        number = starts.index(at) + 1 if at in starts else 0
        self.count_label.setText(f"{number} of {len(starts)}" if starts else "no matches")
