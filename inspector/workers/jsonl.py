"""A JSONL file of many requests or results: every line listed at once from the index, then each read,
validated, assembled and audited in the background, in list order, a row the person selects first.

A file of more than ``POOL_ROWS`` pending rows is read in worker processes (``readpool``): in a thread,
its Python work would hold the interpreter lock the GUI thread needs for every paint. What the workers
cannot read (the pool broke) is read here, in the loading thread, as a small file is.
"""
from __future__ import annotations

import gc
import logging
import pickle
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QThread, Signal

import core

from ..document import Row, invalid_row, pending_row, read_pending, unreadable_line
from ..document.listing import listing
from ..document.reading import index_part_rows
from .counters import CounterCache
from .failures import failure_text
from .readpool import ReadPool, discard_pool, read_pool, ready_read_pool

log = logging.getLogger("inspector")

BATCH_ROWS = 100
BATCH_SECONDS = 0.05
LISTED_BATCH = 1000  # rows listed from a JSONL index per batch (each batch is one insert on the GUI thread)
MAX_ENTRY_MESSAGES = 5  # per file; the rest are summarised so a bad JSONL does not flood the log
POOL_ROWS = 200  # more pending rows than this: read in worker processes
CHUNK_ROWS = 20  # rows per worker job (small: a row the person selects waits behind few others)
JOBS_PER_WORKER = 2  # jobs queued per worker, so none waits for the next
PARALLEL_INDEX_BYTES = 8 << 20  # a larger file is indexed in parts in the worker processes, when they are ready


@dataclass
class Tally:
    """What one file's reading has given so far, and the rows read but not yet sent to the window."""

    total: int
    count: int = 0
    bad: int = 0
    uncounted: int = 0
    done: list[tuple[Row, Row]] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)


class JsonlReading:
    """The JSONL part of ``LoadThread`` (its signals, cancel flag and priority queue)."""

    def _load_jsonl(self, path: str, counter: core.TokenCounter | None, counter_error: str | None) -> None:
        gen = self.job.generation
        name = Path(path).name

        def indexed(done: int, total: int) -> None:
            self.progress.emit(gen, done, max(total, 1), f"Indexing {name}: %p%")

        gc.collect(1)  # the young garbage from before, while it is little (``gc.freeze`` below keeps whatever garbage
        # is left then: the older generation's, and any made while this file is indexed and listed)
        try:
            index = self._index(path, indexed)
        except Exception as exc:
            self.problem.emit(gen, "error", failure_text(exc, f"{path}: cannot be read", "indexing %s", path))
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
            listing(row)  # here, not on the GUI thread
            listed.append(row)
            if len(listed) >= LISTED_BATCH:
                self.batchReady.emit(gen, listed)
                listed = []
        if listed:
            self.batchReady.emit(gen, listed)
        if bad_entries > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{path}: {bad_entries - MAX_ENTRY_MESSAGES} more lines could not be "
                                            "read; they are listed as unreadable rows")
        # the rows listed live as long as the file is open: out of the collector's sight now (as at the job's end,
        # ``LoadThread.run``), so the first young collection while rows are read does not scan every one of them
        # (10,000 rows: 22-34 ms holding the interpreter, the window's thread waiting)
        gc.freeze()
        self._read_rows(path, pending, counter, counter_error, name)

    def _index(self, path: str, indexed) -> core.JsonlIndex | None:
        """``core.index_jsonl`` of ``path`` (``None`` when cancelled): a large file in parts side by side, one here and
        one in each worker process where they are ready (the index is a JSON parse of every line: on two cores, the
        list is there in about half the time; with another program busy on one, in two thirds, as this thread's part
        is no larger than a worker's); a small file, or one met before the workers are ready, in one pass here. A part
        a worker cannot index is indexed here, which names the problem if there is one."""
        try:
            size = Path(path).stat().st_size
        except OSError:
            size = 0  # (``index_jsonl`` says why)
        pool = ready_read_pool(self.job.counter_spec) if size >= PARALLEL_INDEX_BYTES else None
        parts = core.plan_parts(path, pool.workers + 1) if pool is not None else []
        jobs: list[Future] = []
        try:
            try:
                jobs += [pool.submit_call(index_part_rows, path, part) for part in parts[1:]]
            except Exception as exc:  # noqa: BLE001 - the pool broke while idle: a new one reads the rows
                self._pool_stopped(pool, "indexing", path, exc, "new ones are started")
                jobs, parts = [], []
            if len(parts) < 2:
                return core.index_jsonl(path, progress=indexed, should_stop=self._cancel.is_set)
            rows = [core.index_part(path, parts[0], progress=lambda done, _end: indexed(done, size),
                                    should_stop=self._cancel.is_set)]
            if rows[0] is None:
                return None
            for part, job in zip(parts[1:], jobs):
                answer = None
                while answer is None:
                    if self._cancel.is_set():
                        return None
                    try:
                        answer = job.result(timeout=BATCH_SECONDS) or b""
                    except TimeoutError:
                        continue
                    except Exception as exc:  # noqa: BLE001 - a worker died: this part is indexed here
                        self._pool_stopped(pool, "indexing", path, exc, "new ones are started")
                        answer = b""
                rows.append(pickle.loads(answer) if answer else core.index_part(path, part))
                indexed(part.end, size)
        finally:
            for job in jobs:
                job.cancel()
        return core.joined_index(path, rows)

    def _pool_stopped(self, pool: ReadPool, doing: str, path: str, exc: Exception, after: str) -> None:
        """The worker processes broke while ``doing`` (indexing, reading) ``path``: the pool is not used again (what is
        left is done by a new one, or here: ``after`` says which), and this is said once per pool."""
        if not pool.broken:
            pool.broken = True
            log.warning("%s %s in worker processes: %s: %s", doing, path, type(exc).__name__, exc)
            self.problem.emit(self.job.generation, "warning", f"{Path(path).name}: the worker processes stopped "
                                                                f"({type(exc).__name__}: {exc}); {after}")
        pool.ready = False
        discard_pool(pool)

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

    def _read_rows(self, path: str, rows: list[Row], counter: core.TokenCounter | None, counter_error: str | None,
                   name: str) -> None:
        gen = self.job.generation
        queue = deque(rows)
        tally = Tally(total=len(rows))
        self.progress.emit(gen, 0, tally.total, f"Reading {name}: %v of %m")
        if len(rows) > POOL_ROWS:
            self._read_in_workers(path, queue, tally, name)
        while not self._cancel.is_set():
            with self._priority_lock:
                urgent = bool(self._priority)
            row = self._next_row(queue)
            if row is None:
                break
            try:
                with self._cache.lock:
                    full = read_pending(row, counter, counter_error)
                listing(full)
                time.sleep(0)  # let a GUI thread waiting for the counter's lock take it between rows
            except Exception as exc:  # a bug must not stop the other rows
                log.exception("reading %s", row.where)
                full = invalid_row(row.source, row.index, row.line, f"{row.where}: cannot be read "
                                                                     f"({type(exc).__name__}: {exc})", None)
            self._took(row, full, tally, name, urgent)
        self._flush(tally, name)
        if tally.bad > MAX_ENTRY_MESSAGES:
            self.problem.emit(gen, "error", f"{tally.bad - MAX_ENTRY_MESSAGES} more entries of {name} could not be "
                                            "read; they are listed as unreadable rows")
        self._more_uncounted(tally.uncounted, name, counter)
        self.unread += len({id(r) for r in queue if r.pending})
        self.progress.emit(gen, tally.count, max(tally.total, 1), f"Reading {name}: %v of %m")

    def _took(self, row: Row, full: Row, tally: Tally, name: str, urgent: bool) -> None:
        gen = self.job.generation
        if full.kind == "invalid":
            tally.bad += 1
            if tally.bad <= MAX_ENTRY_MESSAGES:
                self.problem.emit(gen, "error", full.error or f"{row.where}: cannot be read")
        elif full.kind == "uncounted":
            tally.uncounted += 1
            if tally.uncounted <= MAX_ENTRY_MESSAGES:
                self.problem.emit(gen, "error", full.error or f"{row.where}: not counted")
        tally.done.append((row, full))
        tally.count += 1
        if urgent or len(tally.done) >= BATCH_ROWS or time.monotonic() - tally.last_flush >= BATCH_SECONDS:
            self._flush(tally, name)

    def _flush(self, tally: Tally, name: str) -> None:
        if tally.done:
            self.rowsRead.emit(self.job.generation, tally.done)
            tally.done = []
            gc.collect(1)
            self.progress.emit(self.job.generation, tally.count, tally.total, f"Reading {name}: %v of %m")
        tally.last_flush = time.monotonic()

    def _read_in_workers(self, path: str, queue: deque[Row], tally: Tally, name: str) -> None:
        """Read ``queue`` in the pool, a selected row first; what is left in it (cancelled, or the pool broke)
        is read by the caller."""
        try:
            pool = read_pool(self.job.counter_spec)
        except Exception as exc:  # no processes here (a sandbox): read in this thread
            log.warning("no worker processes (%s); reading %s in the loading thread", exc, name)
            return
        jobs: dict[Future, tuple[list[Row], bool]] = {}
        sent: set[int] = set()  # rows given to a worker (a selected row is in the queue too)
        while not self._cancel.is_set():
            with self._priority_lock:
                urgent = [r for r in self._priority if r.pending and id(r) not in sent]
                self._priority.clear()
            sent.update(id(r) for r in urgent)
            if urgent:
                jobs[pool.submit(path, [r.summary_line for r in urgent], self.job.demo)] = (urgent, True)
            while len(jobs) < pool.workers * JOBS_PER_WORKER:
                chunk = []
                while queue and len(chunk) < CHUNK_ROWS:
                    row = queue.popleft()
                    if row.pending and id(row) not in sent:
                        sent.add(id(row))
                        chunk.append(row)
                if not chunk:
                    break
                jobs[pool.submit(path, [r.summary_line for r in chunk], self.job.demo)] = (chunk, False)
            if not jobs:
                return
            finished, _ = wait_for(list(jobs), timeout=BATCH_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                rows, was_urgent = jobs.pop(future)
                try:
                    fulls = ReadPool.rows(future)
                except Exception as exc:  # a worker died: say so once, read the rest here
                    if self._cancel.is_set():  # the pool was ended for a newer job: nothing to say
                        queue.extendleft(reversed(rows))
                        break
                    self._pool_stopped(pool, "reading", path, exc, "the rest is read in the window's process")
                    for other, _ in [(rows, was_urgent), *jobs.values()]:
                        queue.extendleft(reversed(other))
                    return
                for row, full in zip(rows, fulls):
                    if row.pending:  # not read meanwhile (a row selected after a cancel reads itself)
                        self._took(row, full, tally, name, was_urgent)
        for future, (rows, _) in jobs.items():  # cancelled: what was not read stays pending, in the queue
            future.cancel()
            queue.extendleft(reversed(rows))


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
            listing(full)
        except Exception as exc:
            log.exception("reading %s", self.row.where)
            full = invalid_row(self.row.source, self.row.index, self.row.line,
                               f"{self.row.where}: cannot be read ({type(exc).__name__}: {exc})", None)
        self.rowsRead.emit(0, [(self.row, full)])
