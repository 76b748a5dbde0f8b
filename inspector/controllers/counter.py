"""The token counter the window counts with: built off the GUI thread, remembered in settings, and the
embedded counter when a remembered one cannot be built at start-up.

Nothing remembered means ``auto`` (as ``count`` on the command line): an imported request is counted with
its model's counter (or, where that cannot be built here, as an estimate that says what to run), our own
requests with the embedded counter."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox

import core

from ..workers import CounterCache, CounterThread, LatestJob
from ..workers.readpool import warm_pool

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class CounterController(QObject):
    def __init__(self, window: MainWindow, spec: str) -> None:
        super().__init__(window)
        self.window = window
        self.spec = CounterCache.normalise(spec or core.AUTO)
        self.counter: core.TokenCounter | None = None
        self._building = False
        self._thread: CounterThread | None = None
        self._reload = False
        self._remember = False  # a counter the person chose (or the fallback for one that failed) is kept
        self._fetcher = LatestJob(self)  # a tiktoken encoding downloaded because the person asked
        self._fetcher.finished.connect(self._fetched)
        self.fetching = False
        self._warming = None  # the thread starting the worker processes (``MainWindow(warm_workers=True)``)

    def warming(self) -> bool:
        """The worker processes for the counter are still starting (not part of ``pending``: nothing waits on it)."""
        return self._warming is not None and self._warming.is_alive()

    @property
    def pending(self) -> bool:
        """A counter is being built or a tokenizer downloaded (the window is not idle)."""
        return self._building or self.fetching

    def set_spec(self, spec: str) -> None:
        """Count with ``spec`` from now on (built off the GUI thread); open requests are re-assembled."""
        self.start(CounterCache.normalise(spec), reload_after=True, startup=False, remember=True)

    def choose_dialog(self) -> None:
        directory = QFileDialog.getExistingDirectory(self.window,
                                                     "Tokenizer directory (Hugging Face, with its chat template)")
        if directory:
            self.set_spec(f"hf:{directory}")

    def fetch_dialog(self, encoding: str) -> None:
        """Ask, then download one tiktoken encoding: the only way the app fetches a tokenizer."""
        url = core.TIKTOKEN_ENCODINGS[encoding].url
        answer = QMessageBox.question(
            self.window, "Download a tokenizer",
            f"Download the tiktoken encoding {encoding} from {url} into {core.tiktoken_cache_dir()}?\n\n"
            "openai: and harmony: counters need it; until it is there, auto counts those models as an estimate. "
            "Nothing is downloaded unless you say so here (or run `context-assembler tokenizers fetch "
            f"{encoding}`).")
        if answer == QMessageBox.StandardButton.Yes:
            self.fetch(encoding)

    def fetch(self, encoding: str, url: str | None = None) -> None:
        """Download ``encoding`` (from ``url``, else its public address) off the GUI thread; then count again."""
        def job():
            try:
                return core.fetch_encoding(encoding, url=url)
            except core.CounterError as exc:  # a failed download is one line, not a bug
                return exc

        self.fetching = True
        self.window.status.show_busy(f"Downloading {encoding}")
        self._fetcher.submit(job)

    def _fetched(self, value: object) -> None:
        w = self.window
        self.fetching = False
        w.hide_busy_if_idle()
        if isinstance(value, BaseException):
            w.report("error", f"The tokenizer was not downloaded: {value}")
            return
        w.counter_cache.forget_failures()
        w.report("info", f"Downloaded {value.name} into {value.parent}"
                 + ("; counting the open files again" if w.opener.open_paths else ""))
        if w.opener.open_paths:
            w.reload()

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
        self._building = True
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
        self._building = False
        changed = spec != self.spec or self.counter is None
        self.spec = spec
        self.counter = counter
        w.replay.set_counter(counter)
        if w.warm_workers:
            self._warming = warm_pool(spec)
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
        self._building = False
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
        self._fetcher.stop()
        if self._thread is not None and self._thread.isRunning():
            self._thread.wait()
