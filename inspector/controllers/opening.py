"""Opening files: the queue of load jobs, the background reading of each, the rows it gives, reload and
close. Every row comes from ``core`` through the workers; this only keeps track of which file is open
and which job's rows are current."""
from __future__ import annotations

import time
from collections import deque
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

import core

from ..document import Row
from ..paths import demo_request_path
from ..turns import in_a_later_turn
from ..workers import LoadJob, LoadThread, ReadRowThread

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class Opener(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.open_paths: dict[str, bool] = {}  # path -> opened as the demo
        self._jobs: deque[LoadJob] = deque()
        self.thread: LoadThread | None = None
        self._generation = 0
        self._loading: dict[str, int] = {}  # path -> generation of the job whose rows it takes
        self._job_started = 0.0
        self._read_threads: list[ReadRowThread] = []
        self._selecting: tuple[Row, str] | None = None  # a row to select at the next event-loop turn, and why
        self._select_queued = False  # whether ``_select_now`` is queued (``turns``)
        self._choosing = False  # selecting a row itself (not the person: ``person_selected``)
        self._select_first: set[str] = set()  # a file the person opened: its first row is selected on arrival
        self._to_remember: set[str] = set()  # opened by the person: put in Recent once it has been read

    def is_busy(self) -> bool:
        return self.thread is not None or bool(self._jobs) or bool(self._read_threads) or self._selecting is not None

    # ---- asking

    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self.window, "Open requests, results, provider bodies or trace exports", "",
            "Requests, results and traces (*.json *.jsonl *.yaml *.yml);;All files (*)")
        if paths:
            self.open_files(paths)

    def open_demo(self) -> None:
        self._queue([str(demo_request_path())], demo=True, select=True)

    def open_files(self, paths: list[str]) -> None:
        resolved = [str(Path(p).expanduser().resolve()) for p in paths]
        w = self.window
        sweeps = [p for p in resolved if core.is_sweep_file(p)]  # a SWEEP.json, told by content
        for path in sweeps:
            w.sweeps.open_sweep(path)
        resolved = [p for p in resolved if p not in sweeps]
        self._to_remember.update(resolved)
        self._queue(resolved, demo=False, select=True)

    def _queue(self, paths: list[str], *, demo: bool, select: bool = False) -> None:
        if select and paths:
            self._select_first.add(paths[0])
        for path in paths:
            self.open_paths[path] = demo  # an open file opened again is read again when its job starts
        self._jobs.append(LoadJob(paths=list(paths), counter_spec=self.window.counters.spec, demo=demo))
        self.window.update_title()
        self.start_next_job()

    # ---- reading

    def start_next_job(self) -> None:
        w = self.window
        if self.thread is not None or w.counters.pending or not self._jobs:
            return
        job = self._jobs.popleft()
        job.paths = [p for p in job.paths if p in self.open_paths]  # closed while queued
        if not job.paths:
            self.start_next_job()
            return
        job.counter_spec = w.counters.spec
        job.context_limits = dict(w.imports.limits)
        self._generation += 1
        job.generation = self._generation
        for path in job.paths:
            # rows of an earlier read of the same file go; only this job's rows are taken from now on
            self.remove_rows_of(path)
            self._loading[path] = job.generation
        thread = LoadThread(job, w.counter_cache, self)
        # what the thread gives is taken in turn with the other steps put off (``turns``), a few at a time, in
        # the order it came (its end after its last rows): a burst of batches that came while the window waited
        # is not one long burst of the GUI thread
        thread.batchReady.connect(self._in_turn(self._on_batch))
        thread.rowsRead.connect(self._in_turn(self._on_rows_read))
        thread.progress.connect(self._in_turn(self._on_progress))  # (in turn with the rows they are about)
        thread.problem.connect(self._in_turn(self._on_problem))
        thread.counterReady.connect(self._on_job_counter)
        thread.finished.connect(self._in_turn(partial(self._on_job_finished, thread)))
        self.thread = thread
        self._job_started = time.monotonic()
        w.act_cancel.setEnabled(True)
        w.status.show_loading(f"Reading {Path(job.paths[0]).name}")  # until the thread reports
        thread.start()

    def _in_turn(self, slot: Callable[..., object]) -> Callable[..., None]:
        """``slot`` as the receiver of a loading thread's signal: called with its arguments in turn with the other steps
        put off (``turns``), in the order the signals came, not at once."""
        return lambda *args: in_a_later_turn(lambda: slot(*args), self)

    def _on_job_counter(self, generation: int, counter: core.TokenCounter | None) -> None:
        if counter is not None:
            self.window.counters.adopt(counter)

    def _on_batch(self, generation: int, rows: list[Row]) -> None:
        w = self.window
        rows = [r for r in rows if r.source in self.open_paths and self._loading.get(r.source) == generation]
        if not rows:
            return
        w.request_model.append_rows(rows)
        w.imports.rows_arrived(rows)
        first = next((r for r in rows if r.source in self._select_first), None)
        if first is not None:  # a file the person just opened: its first row, scrolled to
            self._select_first.discard(first.source)
            self._select_later(first, "opened")
        elif w.current_row is None and self._selecting is None:
            self._choosing = True  # (the list's first row, chosen here: not a person's selection)
            try:
                w.requests.select_first()
            finally:
                self._choosing = False

    def _on_rows_read(self, _generation: int, pairs: list[tuple[Row, Row]]) -> None:
        """Pending rows were read in the background: each takes its full content in place."""
        w = self.window
        current_read = False
        read = []
        for row, full in pairs:
            if row.pending:
                row.absorb(full)
                read.append(row)
                current_read = current_read or row is w.current_row
        w.request_model.rows_changed(read)
        if current_read:
            self._select_later(w.current_row, "read")

    def _select_later(self, row: Row, origin: str) -> None:
        """``select_row`` at the next event-loop turn, so the list's update and the row's redraw are two
        bursts of the GUI thread, not one. A file's first row replaces a row read waiting to be shown again; a
        row read does not replace a selection already waiting (it shows the row as it is then)."""
        if self._selecting is not None and origin == "read":
            return
        if not self._select_queued:  # (a step dropped by ``person_selected`` may still be queued: it serves)
            self._select_queued = True
            in_a_later_turn(self._select_now, self)
        self._selecting = (row, origin)

    def person_selected(self) -> None:
        """A row was selected by the person: a file's first row or a row read, waiting to be shown, is not shown
        over it, nor is the first row of a file opened before, when it comes (the later choice stands)."""
        if not self._choosing:
            self._selecting = None
            self._select_first.clear()

    def _select_now(self) -> None:
        self._select_queued = False
        if self._selecting is not None:
            (row, origin), self._selecting = self._selecting, None
            if row.source in self.open_paths and (origin != "read" or row is self.window.current_row):
                self.window.select_row(row, origin=origin)
        self.window.hide_busy_if_idle()  # loading may have ended meanwhile (also when the wait was dropped)

    def read_now(self, row: Row) -> None:
        """The person selected a row not read yet: read it next (or now, if its loading has stopped)."""
        thread = self.thread
        if thread is not None and row.source in thread.job.paths:
            if not thread.isFinished():
                thread.prioritise(row)
                return
            if not thread.cancelled and not thread.unread:
                return  # every row of its job was read: its content waits to be taken (``turns``)
        if any(t.row is row for t in self._read_threads):
            return
        reader = ReadRowThread(row, self.window.counter_cache, self.window.counters.spec, self)
        reader.rowsRead.connect(self._in_turn(self._on_rows_read))
        reader.finished.connect(self._in_turn(partial(self._read_finished, reader)))
        self._read_threads.append(reader)
        self.window.status.show_busy(f"Reading {row.label}")
        reader.start()

    def _read_finished(self, reader: ReadRowThread) -> None:
        if reader in self._read_threads:
            self._read_threads.remove(reader)
        reader.deleteLater()
        self.window.hide_busy_if_idle()

    def _on_progress(self, generation: int, done: int, total: int, text: str) -> None:
        if generation == self._generation:
            self.window.status.show_progress(done, total, text)

    def _on_problem(self, generation: int, level: str, text: str) -> None:
        self.window.report(level, text)

    def _on_job_finished(self, thread: LoadThread, *, reloading: bool = False) -> None:
        """The job's end, taken after its rows (``turns``); or at once by a reload, which then neither judges its
        files (some rows may still wait to be taken; each open file is read again) nor goes on to read or load."""
        if thread is not self.thread:
            return  # already handled (a reload waited for it)
        w = self.window
        self.thread = None
        seconds = time.monotonic() - self._job_started
        opened, failed = self._outcome(thread.job.paths, judge=not reloading and not thread.cancelled)
        self._select_first.difference_update(thread.job.paths)
        if thread.cancelled:
            unread = f", {thread.unread} not read yet (select one to read it)" if thread.unread else ""
            w.report("warning", f"Loading cancelled; {w.request_model.rowCount()} rows kept{unread}")
        elif opened:
            w.report("info", f"Loaded {', '.join(Path(p).name for p in opened)} in {seconds:.1f} s")
        if failed:
            w.report("info", f"Not opened: {', '.join(Path(p).name for p in failed)} (nothing in it could be read)")
        self._remember(opened)
        thread.deleteLater()
        w.hide_busy_if_idle()
        w.update_status()
        if reloading:
            return
        if w.current_row is not None and w.current_row.pending:
            self.read_now(w.current_row)  # selected after the thread stopped taking requests
        self.start_next_job()

    def _outcome(self, paths: list[str], *, judge: bool) -> tuple[list[str], list[str]]:
        """The job's files that gave a readable row, and (``judge``: the job was not cancelled) those that
        gave none; a failed file with no row listed is closed again."""
        readable = {r.source for r in self.window.request_model.rows() if r.kind != "invalid"}
        opened = [p for p in paths if p in readable]
        failed = [p for p in paths if judge and p not in readable and p in self.open_paths]
        for path in failed:
            if not any(r.source == path for r in self.window.request_model.rows()):
                self.open_paths.pop(path, None)  # nothing of it is listed: it is not open
        if failed:
            self.window.update_title()
        return opened, failed

    def _remember(self, opened: list[str]) -> None:
        w = self.window
        new = [p for p in opened if p in self._to_remember]
        self._to_remember.difference_update(opened)
        if w.persist and new:
            for path in new:
                w.settings.add_recent(path)
            w.recent.rebuild()

    def cancel(self) -> None:
        self._jobs.clear()
        if self.thread is not None:
            self.thread.cancel()

    # ---- again, and closing

    def reload(self) -> None:
        """Read every open file again (requests are re-assembled with the current counter)."""
        w = self.window
        self.cancel()
        if self.thread is not None:
            self.thread.wait()
            # its rows may still wait to be taken (``turns``): a file none of whose rows were listed yet is not
            # judged unreadable here (every open file is read again below)
            self._on_job_finished(self.thread, reloading=True)
        opened = dict(self.open_paths)
        w.imports.remember_for_reload(w.request_model.rows())
        self._selecting = None  # (its row goes with the list)
        w.request_model.clear()
        w.select_row(None, origin="closed")
        self.open_paths.clear()
        demo = [p for p, d in opened.items() if d]
        plain = [p for p, d in opened.items() if not d]
        if demo:
            self._queue(demo, demo=True)
        if plain:
            self._queue(plain, demo=False)

    def close_current_file(self) -> None:
        w = self.window
        row = w.current_row
        if row is None:
            return
        number = w.requests.proxy_row_of(row)
        self.remove_rows_of(row.source)
        self.open_paths.pop(row.source, None)
        self._loading.pop(row.source, None)
        w.update_title()
        count = w.request_proxy.rowCount()
        if count:
            w.requests.select_proxy_row(min(max(number, 0), count - 1))
        else:
            w.select_row(None)

    def remove_rows_of(self, path: str) -> None:
        w = self.window
        if self._selecting is not None and self._selecting[0].source == path:
            self._selecting = None  # its row goes
        if w.current_row is not None and w.current_row.source == path:
            w.select_row(None, origin="closed")
        w.request_model.remove_source(path)

    def wait(self) -> None:
        for thread in (self.thread, *self._read_threads):
            if thread is not None and thread.isRunning():
                thread.wait()
