"""Where a save goes, and asking before it replaces anything.

A save starts in the folder the person last saved into (remembered in settings), else their Documents
folder or home: never the folder of an opened file, where a default name could match a recorded one.
Default names carry the strategy (``demo.assemble.result.json``, ``demo.naive_truncate.result.json``).
Every save that would replace an existing file asks first, with our own prompt (the file dialogs are
told not to ask, so the person is asked once, the same way, whichever dialog chose the file).
"""
from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget


def default_folder(remembered: str | None) -> Path:
    if remembered and Path(remembered).is_dir():
        return Path(remembered)
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return Path(documents)
    return Path.home()


def file_name(label: str, strategy: str | None, suffix: str) -> str:
    """``<label>.<strategy><suffix>``; characters a file system may refuse become "_"."""
    parts = [label, strategy] if strategy else [label]
    stems = [re.sub(r'[\\/:*?"<>|\s]+', "_", part).strip("._") for part in parts]
    stem = ".".join(s for s in stems if s) or "request"
    return stem[:120] + suffix


def confirm_replace(parent: QWidget | None, path: str | Path) -> bool:
    """True when ``path`` does not exist yet, or the person said to replace it."""
    path = Path(path)
    if not path.exists():
        return True
    answer = QMessageBox.question(parent, "Replace file?",
                                  f"{path.name} already exists in {path.parent}.\nReplace it?",
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                  QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def ask_save_path(parent: QWidget | None, title: str, suggested: Path, pattern: str) -> str | None:
    """A file dialog starting at ``suggested``; None when cancelled or the person would not replace the file."""
    path, _ = QFileDialog.getSaveFileName(parent, title, str(suggested), pattern,
                                          options=QFileDialog.Option.DontConfirmOverwrite)
    if not path or not confirm_replace(parent, path):
        return None
    return path
