"""Work that must not run on the GUI thread: building a token counter, reading and assembling files.

Rows reach the GUI in batches through queued signals; a job can be cancelled between records.
The counter is built once per spec and shared (building the embedded one takes most of a second).
"""
from __future__ import annotations

import gc
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QThread, Signal

import core

from .document import Row, invalid_row, rows_from_entry

log = logging.getLogger("inspector")

BATCH_ROWS = 100
BATCH_SECONDS = 0.05
MAX_ENTRY_MESSAGES = 5  # per file; the rest are summarised so a bad JSONL does not flood the log


class CounterCache:
    """Counters by spec, built at most once each, safe to ask from any thread.

    ``lock`` serialises use of the counters: their count cache is not thread-safe, and the GUI
    thread renders with the same counter a worker may be assembling with.
    """

    def __init__(self) -> None:
        self._build_lock = threading.Lock()
        self.lock = threading.RLock()
        self._counters: dict[str, core.TokenCounter] = {}

    @staticmethod
    def normalise(spec: str | None) -> str:
        return spec or core.DEFAULT_COUNTER

    def peek(self, spec: str | None) -> core.TokenCounter | None:
        return self._counters.get(self.normalise(spec))

    def get(self, spec: str | None) -> core.TokenCounter:
        """The counter for ``spec``; raises ``core.CounterError`` if it cannot be built."""
        spec = self.normalise(spec)
        with self._build_lock:
            counter = self._counters.get(spec)
            if counter is None:
                counter = core.make_counter(spec)
                self._counters[spec] = counter
            return counter

    def forget(self, spec: str | None) -> None:
        with self._build_lock:
            self._counters.pop(self.normalise(spec), None)


_SHARED = CounterCache()


def shared_counter_cache() -> CounterCache:
    return _SHARED


class CounterThread(QThread):
    """Builds one counter off the GUI thread."""

    built = Signal(str, object)  # spec, counter
    failed = Signal(str, str)  # spec, one-line message

    def __init__(self, cache: CounterCache, spec: str, parent=None) -> None:
        super().__init__(parent)
        self._cache = cache
        self.spec = spec

    def run(self) -> None:
        try:
            counter = self._cache.get(self.spec)
        except core.ContextInspectorError as exc:
            self.failed.emit(self.spec, str(exc))
        except Exception as exc:  # a tokenizer library failing in its own way: still one line, never a crash
            log.exception("building counter %s", self.spec)
            self.failed.emit(self.spec, f"{self.spec}: cannot build the counter ({type(exc).__name__}: {exc})")
        else:
            self.built.emit(self.spec, counter)


@dataclass
class LoadJob:
    paths: list[str]
    counter_spec: str
    demo: bool = False  # the demo adds the naive baseline beside each request
    generation: int = 0


class LoadThread(QThread):
    """Reads the job's files record by record, assembles requests, audits results, sends rows in batches."""

    batchReady = Signal(int, object)  # generation, list[Row]
    progress = Signal(int, int, int, str)  # generation, done, total (0 = unknown), file name
    problem = Signal(int, str, str)  # generation, level ("error"/"warning"/"info"), one-line message
    counterReady = Signal(int, object)  # generation, counter (or None when it cannot be built)

    def __init__(self, job: LoadJob, cache: CounterCache, parent=None) -> None:
        super().__init__(parent)
        self.job = job
        self._cache = cache
        self._cancel = threading.Event()
        self.cancelled = False

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:
        gen = self.job.generation
        counter: core.TokenCounter | None = None
        counter_error: str | None = None
        try:
            counter = self._cache.get(self.job.counter_spec)
        except core.ContextInspectorError as exc:
            counter_error = str(exc)
            self.problem.emit(gen, "error", f"counter {self.job.counter_spec}: {exc}")
        except Exception as exc:
            log.exception("building counter %s", self.job.counter_spec)
            counter_error = f"{type(exc).__name__}: {exc}"
            self.problem.emit(gen, "error", f"counter {self.job.counter_spec}: cannot build it ({counter_error})")
        self.counterReady.emit(gen, counter)
        # A full (oldest-generation) collection over thousands of fresh results holds the GIL for
        # 100 ms or more, freezing the GUI thread. While loading, only the young generations are
        # collected, once per batch, here; the collector's own schedule resumes afterwards.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for path in self.job.paths:
                if self._cancel.is_set():
                    break
                self._load_file(path, counter, counter_error)
        finally:
            if collecting:
                gc.enable()
        self.cancelled = self._cancel.is_set()

    def _load_file(self, path: str, counter: core.TokenCounter | None, counter_error: str | None) -> None:
        gen = self.job.generation
        name = Path(path).name
        pending: list[Row] = []
        bad_entries = 0
        total = 0
        last_flush = time.monotonic()
        self.progress.emit(gen, 0, 0, name)

        def flush() -> None:
            nonlocal pending, last_flush
            if pending:
                self.batchReady.emit(gen, pending)
                pending = []
            gc.collect(1)
            last_flush = time.monotonic()

        index = -1
        in_array = _is_array_file(path)  # places in a JSON array are named path[i], even the first
        try:
            for index, (line, value) in enumerate(core.iter_json_records(path)):
                if self._cancel.is_set():
                    break
                if index == 0 and line is not None:
                    total = _count_records(path)  # JSONL: one record per non-blank line, for the progress bar
                try:
                    entry = core.entry_from(value, index, line, path, in_array=in_array and line is None)
                except core.ContextInspectorError as exc:
                    bad_entries += 1
                    if bad_entries <= MAX_ENTRY_MESSAGES:
                        self.problem.emit(gen, "error", str(exc))
                    pending.append(invalid_row(path, index, line, str(exc), value))
                else:
                    with self._cache.lock:
                        pending.extend(rows_from_entry(entry, path, counter, counter_error,
                                                       with_baseline=self.job.demo))
                if self.job.demo:
                    for row in pending:
                        row.demo = True
                if len(pending) >= BATCH_ROWS or time.monotonic() - last_flush >= BATCH_SECONDS:
                    flush()
                    self.progress.emit(gen, index + 1, total, name)
        except core.ContextInspectorError as exc:
            self.problem.emit(gen, "error", str(exc))
        except Exception as exc:  # never a traceback to the person: one line, the rest to the log
            log.exception("loading %s", path)
            self.problem.emit(gen, "error", f"{path}: cannot be read ({type(exc).__name__}: {exc})")
        flush()
        if bad_entries > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{path}: {bad_entries - MAX_ENTRY_MESSAGES} more entries could not be "
                                            "read; they are listed as unreadable rows")
        self.progress.emit(gen, index + 1, max(total, index + 1), name)


def _is_array_file(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"[")


def _count_records(path: str) -> int:
    try:
        with open(path, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except OSError:
        return 0
