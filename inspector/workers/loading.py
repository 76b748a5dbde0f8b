"""Reading and assembling files off the GUI thread.

Rows reach the GUI in batches through queued signals; a job can be cancelled between records.
"""
from __future__ import annotations

import gc
import json
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QThread, Signal

import core

from ..document import Row, invalid_row, pending_row, read_pending, rows_from_entry, unreadable_line
from ..document.experiments import experiment_rows
from ..document.imported import format_title, imported_row, imported_source, provider_format
from .counters import CounterCache

log = logging.getLogger("inspector")

BATCH_ROWS = 100
BATCH_SECONDS = 0.05
LISTED_BATCH = 5000  # rows listed from a JSONL index per batch (they carry only their summary)
MAX_ENTRY_MESSAGES = 5  # per file; the rest are summarised so a bad JSONL does not flood the log


@dataclass
class LoadJob:
    paths: list[str]
    counter_spec: str
    demo: bool = False  # the demo adds the naive baseline beside each request
    generation: int = 0
    context_limits: dict[str, int] = field(default_factory=dict)  # model -> limit set for imported requests


class LoadThread(QThread):
    """Reads the job's files record by record, assembles requests, audits results, sends rows in batches.

    A JSONL file is indexed first (``core.index_jsonl``): every line is listed at once from its summary
    as a pending row, then each is read, validated and assembled in the background, in list order, a
    row the person selects first (``prioritise``).
    """

    batchReady = Signal(int, object)  # generation, list[Row]
    rowsRead = Signal(int, object)  # generation, list[(pending Row, full Row)]
    progress = Signal(int, int, int, str)  # generation, done, total (0 = unknown), progress bar format
    problem = Signal(int, str, str)  # generation, level ("error"/"warning"/"info"/"note"), one-line message
    counterReady = Signal(int, object)  # generation, counter (or None when it cannot be built)

    def __init__(self, job: LoadJob, cache: CounterCache, parent=None) -> None:
        super().__init__(parent)
        self.job = job
        self._cache = cache
        self._cancel = threading.Event()
        self._priority: deque[Row] = deque()
        self._priority_lock = threading.Lock()
        self.cancelled = False
        self.unread = 0  # pending rows left unread when the job ended (cancelled)

    def cancel(self) -> None:
        self._cancel.set()

    def prioritise(self, row: Row) -> None:
        """Read ``row`` next (the person selected it while it was still pending)."""
        with self._priority_lock:
            self._priority.append(row)

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
        # collected, once per batch, here; the collector's own schedule resumes afterwards. What was
        # loaded lives as long as its file is open, so it is moved out of the collector's sight
        # (gc.freeze) rather than scanned by the full collection its arrival would otherwise set off;
        # it is still freed by reference counting when the file is closed.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for path in self.job.paths:
                if self._cancel.is_set():
                    break
                self._load_file(path, counter, counter_error)
        finally:
            gc.collect(1)
            gc.freeze()
            if collecting:
                gc.enable()
        self.cancelled = self._cancel.is_set()

    def _load_file(self, path: str, counter: core.TokenCounter | None, counter_error: str | None) -> None:
        if core.sniff_answers(path):  # an experiment's answers: one row per variant's recorded request
            self._load_answers(path, counter)
            return
        jsonl = is_jsonl_file(path)
        try:
            info = provider_format(path, jsonl=jsonl)
        except core.FormatError as exc:  # a provider's file that cannot be decoded: core names format and place
            self.problem.emit(self.job.generation, "error", str(exc))
            return
        except Exception as exc:  # never a traceback to the person
            log.exception("detecting the format of %s", path)
            self.problem.emit(self.job.generation, "error", f"{path}: cannot be read ({type(exc).__name__}: {exc})")
            return
        if info is not None:
            self._load_provider(path, info, counter, counter_error)
            return
        if jsonl:
            self._load_jsonl(path, counter, counter_error)
            return
        gen = self.job.generation
        name = Path(path).name
        pending: list[Row] = []
        bad_entries = uncounted = 0
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
                        rows = rows_from_entry(entry, path, counter, counter_error, with_baseline=self.job.demo)
                    for row in rows:
                        if row.kind == "uncounted":  # read, but the counter refused it: said, not "unreadable"
                            uncounted += 1
                            if uncounted <= MAX_ENTRY_MESSAGES:
                                self.problem.emit(gen, "error", row.error or f"{row.where}: not counted")
                    pending.extend(rows)
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
        self._more_uncounted(uncounted, name, counter)
        if bad_entries > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{path}: {bad_entries - MAX_ENTRY_MESSAGES} more entries could not be "
                                            "read; they are listed as unreadable rows")
        self.progress.emit(gen, index + 1, max(total, index + 1), name)


    def _load_answers(self, path: str, counter: core.TokenCounter | None) -> None:
        gen = self.job.generation
        try:
            answers = core.load_answers(path)
        except core.ContextInspectorError as exc:
            self.problem.emit(gen, "error", str(exc))
            return
        with self._cache.lock:
            rows = experiment_rows(answers, path, counter)
        self.batchReady.emit(gen, rows)
        self.progress.emit(gen, len(rows), len(rows), Path(path).name)

    # ---- a provider's body or trace export: core.formats reads it, each model call is counted

    def _load_provider(self, path: str, info: core.FormatInfo, counter: core.TokenCounter | None,
                       counter_error: str | None) -> None:
        gen = self.job.generation
        name = Path(path).name
        self.progress.emit(gen, 0, 0, name)
        try:
            imported = core.import_file(path)
        except core.ContextInspectorError as exc:
            self.problem.emit(gen, "error", str(exc))
            return
        except Exception as exc:  # never a traceback to the person
            log.exception("importing %s", path)
            self.problem.emit(gen, "error", f"{path}: cannot be read as {info.name} ({type(exc).__name__}: {exc})")
            return
        calls = len(imported.requests)
        what = f"{name}: {format_title(imported.format.name)} ({imported.format.name})"
        for warning in imported.warnings:  # every one in the log; each request's also in its Item tab
            self.problem.emit(gen, "note", f"{name}: import warning: {warning}")
        if imported.warnings:
            self.problem.emit(gen, "warning", f"{what}: {len(imported.warnings)} thing"
                                              f"{'s' if len(imported.warnings) != 1 else ''} could not be mapped "
                                              "exactly (listed in the log and in each request's Item tab)")
        if not calls:
            self.problem.emit(gen, "warning", f"{what}: no model calls in this file ({imported.format.detail})")
            return
        rows: list[Row] = []
        source = imported_source(imported)
        for n, request in enumerate(imported.requests):
            if self._cancel.is_set():
                break
            try:
                with self._cache.lock:
                    rows.append(imported_row(request, n, path, source, counter, self.job.context_limits,
                                             counter_error))
            except Exception as exc:  # a bug must not stop the other model calls
                log.exception("counting %s of %s", request.label, path)
                self.problem.emit(gen, "error", f"{path}: {request.label}: cannot be counted "
                                                f"({type(exc).__name__}: {exc})")
            else:
                if rows[-1].kind == "uncounted":
                    self.problem.emit(gen, "error", rows[-1].error or f"{request.label}: not counted")
            if len(rows) >= BATCH_ROWS:  # a trace of many calls fills the list as it is counted
                self.batchReady.emit(gen, rows)
                rows = []
            self.progress.emit(gen, n + 1, calls, f"Counting {name}: %v of %m")
        if rows:
            self.batchReady.emit(gen, rows)
        self.problem.emit(gen, "info", f"{what}: {calls} model call{'s' if calls != 1 else ''}")

    # ---- JSONL: list every line from the index, then read them in the background

    def _load_jsonl(self, path: str, counter: core.TokenCounter | None, counter_error: str | None) -> None:
        gen = self.job.generation
        name = Path(path).name

        def indexed(done: int, total: int) -> None:
            self.progress.emit(gen, done, max(total, 1), f"Indexing {name}: %p%")

        try:
            index = core.index_jsonl(path, progress=indexed, should_stop=self._cancel.is_set)
        except core.ContextInspectorError as exc:
            self.problem.emit(gen, "error", str(exc))
            return
        except Exception as exc:  # never a traceback to the person
            log.exception("indexing %s", path)
            self.problem.emit(gen, "error", f"{path}: cannot be read ({type(exc).__name__}: {exc})")
            return
        if index is None:  # cancelled while indexing
            return
        listed: list[Row] = []
        pending: list[Row] = []
        bad_entries = 0
        for summary in index.rows:
            if summary.kind == "error":
                row = unreadable_line(path, index, summary)
                bad_entries += 1
                if bad_entries <= MAX_ENTRY_MESSAGES:
                    self.problem.emit(gen, "error", row.error or "unreadable line")
            else:
                row = pending_row(path, index, summary, demo=self.job.demo)
                pending.append(row)
            listed.append(row)
            if len(listed) >= LISTED_BATCH:
                self.batchReady.emit(gen, listed)
                listed = []
        if listed:
            self.batchReady.emit(gen, listed)
        if bad_entries > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{path}: {bad_entries - MAX_ENTRY_MESSAGES} more lines could not be "
                                            "read; they are listed as unreadable rows")
        self._read_rows(pending, counter, counter_error, name)

    def _more_uncounted(self, uncounted: int, name: str, counter: core.TokenCounter | None) -> None:
        if uncounted > MAX_ENTRY_MESSAGES:
            self.problem.emit(self.job.generation, "error",
                              f"{uncounted - MAX_ENTRY_MESSAGES} more entries of {name} could not be counted with "
                              f"{counter.name if counter is not None else 'the counter'}; they are listed as "
                              "not counted")

    def _next_row(self, queue: deque[Row]) -> Row | None:
        with self._priority_lock:
            while self._priority:
                row = self._priority.popleft()
                if row.pending:
                    return row
        while queue:
            row = queue.popleft()
            if row.pending:
                return row
        return None

    def _read_rows(self, rows: list[Row], counter: core.TokenCounter | None, counter_error: str | None,
                   name: str) -> None:
        gen = self.job.generation
        queue = deque(rows)
        total = len(rows)
        done: list[tuple[Row, Row]] = []
        count = bad = uncounted = 0
        last_flush = time.monotonic()
        self.progress.emit(gen, 0, total, f"Reading {name}: %v of %m")
        while not self._cancel.is_set():
            with self._priority_lock:
                urgent = bool(self._priority)
            row = self._next_row(queue)
            if row is None:
                break
            try:
                with self._cache.lock:
                    full = read_pending(row, counter, counter_error)
                time.sleep(0)  # let a GUI thread waiting for the counter's lock take it between rows
            except Exception as exc:  # a bug must not stop the other rows
                log.exception("reading %s", row.where)
                full = invalid_row(row.source, row.index, row.line, f"{row.where}: cannot be read "
                                                                     f"({type(exc).__name__}: {exc})", None)
            if full.kind == "invalid":
                bad += 1
                if bad <= MAX_ENTRY_MESSAGES:
                    self.problem.emit(gen, "error", full.error or f"{row.where}: cannot be read")
            elif full.kind == "uncounted":
                uncounted += 1
                if uncounted <= MAX_ENTRY_MESSAGES:
                    self.problem.emit(gen, "error", full.error or f"{row.where}: not counted")
            done.append((row, full))
            count += 1
            if urgent or len(done) >= BATCH_ROWS or time.monotonic() - last_flush >= BATCH_SECONDS:
                self.rowsRead.emit(gen, done)
                done = []
                gc.collect(1)
                last_flush = time.monotonic()
                self.progress.emit(gen, count, total, f"Reading {name}: %v of %m")
        if done:
            self.rowsRead.emit(gen, done)
        if bad > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{bad - MAX_ENTRY_MESSAGES} more entries of {name} could not be read; "
                                            "they are listed as unreadable rows")
        self._more_uncounted(uncounted, name, counter)
        self.unread += sum(1 for r in queue if r.pending)
        self.progress.emit(gen, count, max(total, 1), f"Reading {name}: %v of %m")


class ReadRowThread(QThread):
    """Reads one pending row on demand (selected after its loading was cancelled)."""

    rowsRead = Signal(int, object)  # 0, [(pending Row, full Row)]

    def __init__(self, row: Row, cache: CounterCache, counter_spec: str, parent=None) -> None:
        super().__init__(parent)
        self.row = row
        self._cache = cache
        self._spec = counter_spec

    def run(self) -> None:
        counter, error = None, None
        try:
            counter = self._cache.get(self._spec)
        except Exception as exc:
            error = str(exc)
        try:
            with self._cache.lock:
                full = read_pending(self.row, counter, error)
        except Exception as exc:
            log.exception("reading %s", self.row.where)
            full = invalid_row(self.row.source, self.row.index, self.row.line,
                               f"{self.row.where}: cannot be read ({type(exc).__name__}: {exc})", None)
        self.rowsRead.emit(0, [(self.row, full)])


def is_jsonl_file(path: str) -> bool:
    """JSON Lines: a first line that is a whole JSON object, and more after it (the core's own test)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
            rest = handle.read(4096)
    except OSError:
        return False
    first = first.removeprefix(b"\xef\xbb\xbf").strip()
    if not first.startswith(b"{") or not rest.strip():
        return False
    try:
        json.loads(first)
    except ValueError:
        return False
    return True


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
