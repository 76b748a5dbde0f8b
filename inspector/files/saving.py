"""Saving and exporting the shown result: the dialogs, and one write path that never touches an open file.

Dialogs start in the folder of the last save (``destination``), name the strategy, and ask before
replacing a file.

What is written comes from ``core`` (``AssemblyResult.to_json``, ``core.export_text``); this only picks
the file and writes it atomically."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

import core

from ..paths import demo_request_path
from .atomic import write_atomically
from .destination import ask_save_path, default_folder, file_name
from .exporting import ExportDialog

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class Saver(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._export_dialog: ExportDialog | None = None
        self._folder: str | None = window.settings.save_folder() if window.persist else None

    @property
    def folder(self) -> Path:
        """Where the next save starts: the folder of the last one, else Documents or home (never an input's)."""
        return default_folder(self._folder)

    # ---- results as JSON

    def save_result_dialog(self) -> None:
        row = self.window.current_row
        if row is None or row.result is None:
            self.window.report("warning", "Select a request with a result to save")
            return
        suggested = self.folder / file_name(row.label, row.result.strategy, ".result.json")
        path = ask_save_path(self.window, "Save result as", suggested, "Result JSON (*.json)")
        if path:
            self.save_result_to(path)

    def save_result_to(self, path: str) -> bool:
        """Write the selected result to ``path``; refuses any file that is open (opened files are never written)."""
        row = self.window.current_row
        if row is None or row.result is None:
            self.window.report("warning", "Select a request with a result to save")
            return False
        return self.write_text(row.result.to_json(), path, f"{row.label} ({row.result.strategy})")

    def save_replayed_dialog(self) -> None:
        view, current = self.window.replaying.view, self.window.current_row
        if view is None or view.result is None:
            self.window.report("warning", "Edit the replay first: there is no replayed result to save")
            return
        suggested = self.folder / file_name(current.label if current else "request", view.result.strategy,
                                            ".replayed.result.json")
        path = ask_save_path(self.window, "Save replayed result as", suggested, "Result JSON (*.json)")
        if path:
            self.save_replayed_to(path)

    def save_replayed_to(self, path: str) -> bool:
        """Write the replayed result to a new file: never over the opened one (or any open file)."""
        view, current = self.window.replaying.view, self.window.current_row
        if view is None or view.result is None:
            self.window.report("warning", "Edit the replay first: there is no replayed result to save")
            return False
        return self.write_text(view.result.to_json(), path, f"the replay of {current.label if current else ''}")

    def write_text(self, text: str, path: str, what: str) -> bool:
        """Write ``text`` to ``path`` atomically; refuses any file that is open (opened files are never written)."""
        target = Path(path).expanduser().resolve()
        protected = set(self.window.opener.open_paths) | {str(demo_request_path().resolve())}
        if str(target) in protected:
            self.window.report("error", f"{target}: not saved: this file is open in the inspector and is never "
                                        "overwritten; pick another name")
            return False
        try:
            write_atomically(target, text)
        except OSError as exc:
            self.window.report("error", f"{target}: not saved: {exc.strerror or exc}")
            return False
        self._folder = str(target.parent)  # the next save starts here
        if self.window.persist:
            self.window.settings.set_save_folder(target.parent)
        self.window.report("info", f"Saved {what} to {target}")
        return True

    # ---- exports

    def export_dialog(self) -> ExportDialog | None:
        """File ▸ Export…: kind, redaction and file; the export is written when the person presses Export."""
        row = self.window.shown_row
        if row is None or row.result is None:
            self.window.report("warning", "Select a request with a result to export")
            return None
        if self._export_dialog is not None:
            self._export_dialog.deleteLater()
        dialog = ExportDialog(f"{row.label} ({row.result.strategy})", row.label, str(self.folder), self.window,
                              strategy=row.result.strategy)
        dialog.accepted.connect(lambda d=dialog: self.export_to(d.path(), d.kind(), redact=d.redact()))
        self._export_dialog = dialog
        dialog.open()  # window-modal, but it never blocks the event loop
        return dialog

    def export_to(self, path: str, kind: str, *, redact: bool = False) -> bool:
        """Write the shown result (the replay while one is shown) as ``kind`` (a key of ``core.EXPORT_KINDS``)."""
        row = self.window.shown_row
        if row is None or row.result is None:
            self.window.report("warning", "Select a request with a result to export")
            return False
        try:
            text = core.export_text(row.result, kind, redact=redact, findings=row.findings)
        except (core.ContextInspectorError, ValueError) as exc:
            self.window.report("error", f"{row.label}: cannot export as {kind}: {exc}")
            return False
        what = f"{row.label} as {core.EXPORT_KINDS[kind][1]}" + (" (message content redacted)" if redact else "")
        return self.write_text(text, path, what)
