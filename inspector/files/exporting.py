"""File ▸ Export…: the shown result as one of core's export kinds (``core.EXPORT_KINDS``: our result
JSON, an OpenAI request body, an OTLP JSON span, a one-file HTML report), optionally redacted.

The text comes from ``core.export_text``; the window writes it where the person chose (atomically,
never over an opened file). The dialog only gathers the choice; it is not modal to the event loop.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

import core

from .destination import confirm_replace, file_name

KINDS: tuple[str, ...] = tuple(core.EXPORT_KINDS)


def suffix(kind: str) -> str:
    return core.EXPORT_KINDS[kind][0]


def suggested_name(label: str, kind: str, strategy: str | None = None) -> str:
    """A file name from the request's label and strategy: characters a file system may refuse become "_"."""
    return file_name(label, strategy, suffix(kind))


def with_suffix(path: str, kind: str) -> str:
    """``path`` with the suffix of ``kind`` in place of another kind's (a name the person typed stays)."""
    for other in KINDS:
        if path.endswith(suffix(other)):
            return path[: -len(suffix(other))] + suffix(kind)
    return path


class ExportDialog(QDialog):
    """Kind, redaction and where to write. ``accepted`` once the person pressed Export with a path."""

    def __init__(self, what: str, label: str, directory: str, parent: QWidget | None = None, *,
                 strategy: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self.setAccessibleName("Export")
        self.kind_box = QComboBox(self)
        self.kind_box.setAccessibleName("Export kind")
        for kind in KINDS:
            self.kind_box.addItem(core.EXPORT_KINDS[kind][1], kind)
        self.redact_box = QCheckBox("Redact message content (keeps counts, ids and structure)", self)
        self.redact_box.setAccessibleName("Redact message content")
        self.path_edit = QLineEdit(str(Path(directory) / suggested_name(label, KINDS[0], strategy)), self)
        self.path_edit.setAccessibleName("Export to file")
        self.browse_button = QPushButton("Browse…", self)
        self.browse_button.clicked.connect(self._browse)
        where = QHBoxLayout()
        where.addWidget(self.path_edit, 1)
        where.addWidget(self.browse_button)
        form = QFormLayout()
        form.addRow("Kind:", self.kind_box)
        form.addRow("", self.redact_box)
        form.addRow("File:", where)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Export {what}", self))
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.kind_box.currentIndexChanged.connect(self._kind_changed)
        self.path_edit.textChanged.connect(self._path_changed)
        self.resize(620, self.sizeHint().height())

    def kind(self) -> str:
        return str(self.kind_box.currentData())

    def set_kind(self, kind: str) -> None:
        self.kind_box.setCurrentIndex(KINDS.index(kind))

    def redact(self) -> bool:
        return self.redact_box.isChecked()

    def path(self) -> str:
        return self.path_edit.text().strip()

    def accept(self) -> None:
        """Export, unless the file exists and the person would rather not replace it (the dialog stays)."""
        if self.path() and not confirm_replace(self, Path(self.path()).expanduser()):
            return
        super().accept()

    def _kind_changed(self) -> None:
        self.path_edit.setText(with_suffix(self.path(), self.kind()))

    def _path_changed(self, text: str) -> None:
        self.export_button.setEnabled(bool(text.strip()))

    def _browse(self) -> None:
        kind = self.kind()
        pattern = f"{core.EXPORT_KINDS[kind][1]} (*{Path(suffix(kind)).suffix})"
        # asked once, when Export is pressed (confirm_replace), not here as well
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path(), pattern,
                                              options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.path_edit.setText(path)
