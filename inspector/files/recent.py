"""File ▸ Open Recent: the files opened before (kept in settings), newest first."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtWidgets import QMenu

from .settings import Settings


class RecentMenu:
    def __init__(self, menu: QMenu, settings: Settings, open_files: Callable[[list[str]], None]) -> None:
        self.menu = menu
        self._settings = settings
        self._open_files = open_files

    def rebuild(self) -> None:
        self.menu.clear()
        recent = self._settings.recent_files()
        for n, path in enumerate(recent):
            action = self.menu.addAction(f"&{n + 1} {Path(path).name}" if n < 9 else Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self._open_files([p]))
        if recent:
            self.menu.addSeparator()
            self.menu.addAction("Clear Recent Files", self.clear)
        self.menu.setEnabled(bool(recent))

    def clear(self) -> None:
        self._settings.clear_recent()
        self.rebuild()
