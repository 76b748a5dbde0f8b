"""Reading and assembling files off the GUI thread (a large JSONL: workers.jsonl, in worker processes).

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

from ..document import Row, invalid_row, rows_from_entry
from ..document.experiments import experiment_rows
from ..document.imported import failed_row, format_title, imported_row, imported_source, provider_format
from ..document.listing import listing
from .counters import CounterCache
from .failures import failure_text
from .jsonl import BATCH_ROWS, BATCH_SECONDS, MAX_ENTRY_MESSAGES, JsonlReading

log = logging.getLogger("inspector")


@dataclass
class LoadJob:
    paths: list[str]
    counter_spec: str
    demo: bool = False  # the demo adds the naive baseline beside each request
    generation: int = 0
    context_limits: dict[str, int] = field(default_factory=dict)  # model -> limit set for imported requests


class LoadThread(JsonlReading, QThread):
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
        except Exception as exc:
            counter_error = failure_text(exc, None, "building counter %s", self.job.counter_spec)
            told = counter_error if isinstance(exc, core.ContextInspectorError) else f"cannot build it ({counter_error})"
            self.problem.emit(gen, "error", f"counter {self.job.counter_spec}: {told}")
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
        except Exception as exc:  # a provider's file that cannot be decoded: core names format and place
            self.problem.emit(self.job.generation, "error", failure_text(
                exc, f"{path}: cannot be read", "detecting the format of %s", path, known=core.FormatError))
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
                self.batchReady.emit(gen, listed(pending))
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
        except Exception as exc:
            self.problem.emit(gen, "error", failure_text(exc, f"{path}: cannot be read", "loading %s", path))
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
        self.batchReady.emit(gen, listed(rows))
        self.progress.emit(gen, len(rows), len(rows), Path(path).name)

    # ---- a provider's body or trace export: core.formats reads it, each model call is counted

    def _load_provider(self, path: str, info: core.FormatInfo, counter: core.TokenCounter | None,
                       counter_error: str | None) -> None:
        gen = self.job.generation
        name = Path(path).name
        self.progress.emit(gen, 0, 0, name)
        try:
            imported = core.import_file(path)
        except Exception as exc:
            self.problem.emit(gen, "error", failure_text(exc, f"{path}: cannot be read as {info.name}", "importing %s",
                                                         path))
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
        everything = imported.calls()  # the calls that could not be read are rows too, in file order
        for n, request in enumerate(everything):
            if self._cancel.is_set():
                break
            if isinstance(request, core.FailedCall):
                rows.append(failed_row(request, n, path, source))
                self.problem.emit(gen, "warning", f"{name}: {request}")  # the others were read
                continue
            try:
                with self._cache.lock:
                    rows.append(imported_row(request, n, path, source, counter, self.job.context_limits,
                                             counter_error, auto=self._cache.auto()
                                             if self.job.counter_spec == core.AUTO else None))
            except Exception as exc:  # a bug must not stop the other model calls
                log.exception("counting %s of %s", request.label, path)
                self.problem.emit(gen, "error", f"{path}: {request.label}: cannot be counted "
                                                f"({type(exc).__name__}: {exc})")
            else:
                if rows[-1].kind == "uncounted":
                    self.problem.emit(gen, "error", rows[-1].error or f"{request.label}: not counted")
            if len(rows) >= BATCH_ROWS:  # a trace of many calls fills the list as it is counted
                self.batchReady.emit(gen, listed(rows))
                rows = []
            self.progress.emit(gen, n + 1, len(everything), f"Counting {name}: %v of %m")
        if rows:
            self.batchReady.emit(gen, listed(rows))
        unread = f", {len(imported.failed)} could not be read (their rows say why)" if imported.failed else ""
        self.problem.emit(gen, "info", f"{what}: {calls} model call{'s' if calls != 1 else ''}{unread}")

    def _more_uncounted(self, uncounted: int, name: str, counter: core.TokenCounter | None) -> None:
        if uncounted > MAX_ENTRY_MESSAGES:
            self.problem.emit(self.job.generation, "error",
                              f"{uncounted - MAX_ENTRY_MESSAGES} more entries of {name} could not be counted with "
                              f"{counter.name if counter is not None else 'the counter'}; they are listed as "
                              "not counted")


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


def listed(rows: list[Row]) -> list[Row]:
    """``rows`` with their list values computed (``document.listing``): here, not on the GUI thread."""
    for row in rows:
        listing(row)
    return rows
