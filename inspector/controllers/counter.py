"""The token counter the window counts with: built off the GUI thread, remembered in settings, and the
embedded counter when a remembered one cannot be built at start-up.

Nothing remembered means ``auto`` (as ``count`` on the command line): an imported request is counted with
its model's counter (or, where that cannot be built here, as an estimate that says what to run), our own
requests with the embedded counter."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

import core

from ..workers import CounterCache, CounterThread

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class CounterController(QObject):
    def __init__(self, window: MainWindow, spec: str) -> None:
        super().__init__(window)
        self.window = window
        self.spec = CounterCache.normalise(spec or core.AUTO)
        self.counter: core.TokenCounter | None = None
        self.pending = False
        self._thread: CounterThread | None = None
        self._reload = False
        self._remember = False  # a counter the person chose (or the fallback for one that failed) is kept

    def set_spec(self, spec: str) -> None:
        """Count with ``spec`` from now on (built off the GUI thread); open requests are re-assembled."""
        self.start(CounterCache.normalise(spec), reload_after=True, startup=False, remember=True)

    def choose_dialog(self) -> None:
        directory = QFileDialog.getExistingDirectory(self.window,
                                                     "Tokenizer directory (Hugging Face, with its chat template)")
        if directory:
            self.set_spec(f"hf:{directory}")

    def choices(self) -> list[core.CounterEntry]:
        """Every counter the picker offers: bundled, configured, and hf: directories used before."""
        return core.available_counters(self.window.settings.hf_dirs())

    def adopt(self, counter: core.TokenCounter) -> None:
        """A loading job built the counter first: count with it until ours is ready."""
        if self.counter is None:
            self.counter = counter
            self.window.update_status()

    def start(self, spec: str, *, reload_after: bool, startup: bool, remember: bool = False) -> None:
        w = self.window
        if self._thread is not None and self._thread.isRunning():
            w.report("warning", f"A counter is still being built; {spec} was not started")
            return
        self.pending = True
        self._reload = reload_after
        self._remember = remember
        w.status.counter_label.setText(f"Counter: building {spec}…")
        thread = CounterThread(w.counter_cache, spec, self)
        thread.built.connect(self._built)
        thread.failed.connect(lambda s, msg: self._failed(s, msg, startup))
        thread.finished.connect(thread.deleteLater)
        self._thread = thread
        w.status.show_busy(f"Building counter {spec}")
        thread.start()

    def _built(self, spec: str, counter: core.TokenCounter) -> None:
        w = self.window
        self._thread = None
        self.pending = False
        changed = spec != self.spec or self.counter is None
        self.spec = spec
        self.counter = counter
        w.replay.set_counter(counter)
        if w.persist and self._remember:
            w.settings.set_last_counter(None if spec == core.AUTO else spec)
            if spec.startswith("hf:"):
                w.settings.add_hf_dir(spec[3:].partition("?")[0])
        w.update_status()
        w.hide_busy_if_idle()
        if self._reload and changed and w.opener.open_paths:
            w.report("info", f"Counting with {spec}; re-assembling the open requests")
            w.reload()
        elif w.current_row is not None:
            w.replaying.setup(w.current_row)
            w.refresh_view()
        w.opener.start_next_job()

    def _failed(self, spec: str, message: str, startup: bool) -> None:
        w = self.window
        self._thread = None
        self.pending = False
        w.report("error", message if spec in message else f"counter {spec}: {message}")
        if startup and spec != core.DEFAULT_COUNTER:
            w.report("warning", f"Falling back to the embedded counter {core.DEFAULT_COUNTER}")
            self.spec = core.DEFAULT_COUNTER
            self.start(core.DEFAULT_COUNTER, reload_after=False, startup=True, remember=True)
            return
        w.update_status()
        w.hide_busy_if_idle()
        w.opener.start_next_job()

    def wait(self) -> None:
        if self._thread is not None and self._thread.isRunning():
            self._thread.wait()
