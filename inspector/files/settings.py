"""What the app remembers between runs, in QSettings: geometry, splitters, recent files, the folder saves
go to, last counter, and the context limit set for each model an imported provider request names.

The settings are always opened in INI format under the user scope, so tests can redirect them with
``QSettings.setPath(IniFormat, UserScope, tmp)`` and never touch a person's real settings.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow, QSplitter

ORGANISATION = "ContextInspector"
APPLICATION = "context-inspector"
MAX_RECENT = 10


def open_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION, APPLICATION)


class Settings:
    """Typed access to the few values the app keeps."""

    def __init__(self, store: QSettings | None = None) -> None:
        self._store = store or open_settings()

    # ---- recent files

    def recent_files(self) -> list[str]:
        value = self._store.value("files/recent", [], type=list)
        return [str(v) for v in value if v]

    def add_recent(self, path: str | Path) -> list[str]:
        path = str(Path(path).resolve())
        recent = [p for p in self.recent_files() if p != path]
        recent.insert(0, path)
        recent = recent[:MAX_RECENT]
        self._store.setValue("files/recent", recent)
        return recent

    def remove_recent(self, path: str) -> list[str]:
        recent = [p for p in self.recent_files() if p != path]
        self._store.setValue("files/recent", recent)
        return recent

    def clear_recent(self) -> None:
        self._store.setValue("files/recent", [])

    # ---- where saves go

    def save_folder(self) -> str | None:
        """The folder the person last saved or exported into (None: never, or it is gone)."""
        value = self._store.value("files/save_folder", "", type=str)
        return value if value and Path(value).is_dir() else None

    def set_save_folder(self, folder: str | Path) -> None:
        self._store.setValue("files/save_folder", str(folder))

    # ---- counter

    def last_counter(self) -> str | None:
        value = self._store.value("counter/spec", "", type=str)
        return value or None

    def set_last_counter(self, spec: str | None) -> None:
        self._store.setValue("counter/spec", spec or "")

    def hf_dirs(self) -> list[str]:
        """Hugging Face tokenizer directories counted with before, newest first (the Counter picker lists them)."""
        value = self._store.value("counter/hf_dirs", [], type=list)
        return [str(v) for v in value if v]

    def add_hf_dir(self, directory: str) -> None:
        dirs = [directory] + [d for d in self.hf_dirs() if d != directory]
        self._store.setValue("counter/hf_dirs", dirs[:10])

    # ---- context limits of imported requests, per model name

    def context_limits(self) -> dict[str, int]:
        """Model name -> the context limit the person set for it."""
        self._store.beginGroup("context_limits")
        try:
            limits = {}
            for key in self._store.childKeys():
                value = self._store.value(key, 0, type=int)
                if isinstance(value, int) and value > 0:
                    limits[unquote(key)] = value
            return limits
        finally:
            self._store.endGroup()

    def set_context_limit(self, model: str, limit: int) -> None:
        # quoted: a model name may hold "/" (a QSettings group separator) or other key characters
        self._store.setValue(f"context_limits/{quote(model, safe='')}", int(limit))

    def clear_context_limit(self, model: str) -> None:
        self._store.remove(f"context_limits/{quote(model, safe='')}")

    # ---- the requests list

    def hidden_columns(self) -> list[str]:
        """The names of the requests list's columns the person hid."""
        value = self._store.value("requests/hidden_columns", [], type=list)
        return [str(v) for v in value if v]

    def set_hidden_columns(self, names: list[str]) -> None:
        self._store.setValue("requests/hidden_columns", list(names))

    # ---- window state

    def geometry(self, key: str) -> QByteArray | None:
        value = self._store.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_geometry(self, key: str, value: QByteArray) -> None:
        self._store.setValue(f"window/{key}", value)

    def sync(self) -> None:
        self._store.sync()


def restore_window(window: QMainWindow, settings: Settings, splitters: dict[str, QSplitter]) -> None:
    """The window's size, docks and splitters as the person left them (a default size the first time)."""
    geometry = settings.geometry("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    else:
        window.resize(1500, 950)
    state = settings.geometry("state")
    if state is not None:
        window.restoreState(state)
    for key, splitter in splitters.items():
        saved = settings.geometry(key)
        if saved is not None:
            splitter.restoreState(saved)


def save_window(window: QMainWindow, settings: Settings, splitters: dict[str, QSplitter]) -> None:
    settings.set_geometry("geometry", window.saveGeometry())
    settings.set_geometry("state", window.saveState())
    for key, splitter in splitters.items():
        settings.set_geometry(key, splitter.saveState())
    settings.sync()
