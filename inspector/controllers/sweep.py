"""A SWEEP.json opened in the window: the sweep pane shows its settings; a clicked bucket lists its
requests (read in a worker); a request activated there opens as usual, replayed under that setting."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

import core
from core.replay import Edits

from ..workers.sweep import MAX_LISTED, BucketThread

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


def caption_of(path: str, sweep: dict[str, Any]) -> str:
    corpus = sweep["corpus"]
    skipped = len(sweep["bad_files"])
    text = (f"{Path(path).name}: {corpus['requests']:,} requests in {corpus['files']} files, "
            f"{len(sweep['settings'])} settings, counter {sweep['counter']}, engine {sweep['engine']}")
    if skipped or sweep["bad_records"]:
        text += f"; skipped {skipped} files and {sweep['bad_records']} records that could not be read"
    return text + "".join(f". {note[0].upper()}{note[1:]}" for note in sweep["notes"])


class SweepController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.path: str | None = None
        self.sweep: dict[str, Any] | None = None
        self._threads: list[BucketThread] = []
        self._waiting: QTimer | None = None
        pane = window.sweep_pane
        pane.bucketPicked.connect(self.list_bucket)
        pane.memberActivated.connect(self.open_member)

    def is_idle(self) -> bool:
        return not self._threads and self._waiting is None

    def open_sweep(self, path: str) -> None:
        try:
            sweep = core.load_sweep(path)
        except core.ContextInspectorError as exc:
            self.window.report("error", str(exc))
            return
        self.path, self.sweep = path, sweep
        self.window.sweep_pane.show_sweep(sweep, caption_of(path, sweep))
        self.window.sweep_dock.show()
        self.window.sweep_dock.raise_()
        self.window.report("info", f"Opened the sweep {Path(path).name}: {len(sweep['settings'])} settings")

    def list_bucket(self, setting: int, histogram: str, bucket: int) -> None:
        if self.sweep is None or self.path is None:
            return
        thread = BucketThread(self.path, self.sweep, setting, histogram, bucket, self)
        thread.listed.connect(self._listed)
        thread.failed.connect(lambda text: self.window.report("error", text))
        thread.finished.connect(lambda t=thread: self._finished(t))
        self._threads.append(thread)
        thread.start()

    def _finished(self, thread: BucketThread) -> None:
        if thread in self._threads:
            self._threads.remove(thread)
        thread.deleteLater()

    def _listed(self, setting: int, histogram: str, bucket: int, members: list) -> None:
        b = self.sweep["settings"][setting]["histograms"][histogram][bucket]
        what = "input tokens" if histogram == "input_tokens" else "kept items lost"
        more = f" (the first {MAX_LISTED})" if len(members) >= MAX_LISTED else ""
        caption = (f"{b['count']:,} requests with {b['lo']:,} to {b['hi'] - 1:,} {what} under "
                   f"{self.sweep['settings'][setting]['setting']['label']}{more}; double-click one to open it")
        self.window.sweep_pane.show_members(caption, [
            (m.ref, f"{m.label}  ({m.value:,} {what}; {Path(core.member_location(m.ref)[0]).name})")
            for m in members])

    def open_member(self, ref: str, setting: int) -> None:
        """Open the request's file as usual, select the request, and replay it under the setting."""
        w = self.window
        path, line, index = core.member_location(ref)
        chosen = core.setting_of(self.sweep, setting)
        edits = Edits(context_limit=chosen.context_limit, fill_order=chosen.fill_order)
        w.open_files([path])
        resolved = str(Path(path).resolve())
        timer = QTimer(self)
        timer.setInterval(100)
        self._waiting = timer

        def when_loaded() -> None:
            if not w.is_idle(ignore_sweep=True):
                return
            timer.stop()
            self._waiting = None
            rows = [r for r in w.request_model.rows() if r.source == resolved]
            row = next((r for r in rows if (line is not None and r.line == line)
                        or (line is None and r.index == index)), rows[0] if rows else None)
            if row is None:
                w.report("error", f"{ref}: the request is no longer in its file")
                return
            w.select_row(row, origin="sweep")
            if not w.replay_dock.isVisible():
                w.act_replay.trigger()
            if w.replay_panel.base is not None and not edits.is_empty():
                w.replay_panel.apply_edits(edits)
                w.replaying.edits_changed()
            w.report("info", f"{row.label} replayed under {chosen.label}")

        timer.timeout.connect(when_loaded)
        timer.start()

    def wait(self) -> None:
        for thread in list(self._threads):
            thread.wait()
