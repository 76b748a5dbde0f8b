"""Worker processes that read a large JSONL's pending rows and run replays, so the GUI thread never
waits on the interpreter lock while thousands of rows are assembled and audited or a request is
assembled again (a thread would hold it).

One pool per counter spec and use (reading, replaying: one pool when the spec is the same), spawned on
first use and kept (a worker builds its counter once: seconds for tekken); ``shutdown_read_pools`` ends
them (at exit at the latest).
"""
from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
import pickle
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable

import core

from ..document import Row
from ..document.reading import read_rows, start_worker, worker_ready
from .counters import CounterCache

log = logging.getLogger("inspector")

_pools: dict[str, "ReadPool"] = {}  # the reading pool, by spec (one at a time)
_replay_pools: dict[str, "ReadPool"] = {}  # the replaying pool when its spec is not the reading pool's
_lock = threading.Lock()
WARM_SECONDS = 120.0  # the longest ``warm_pool`` waits for every worker to answer


def worker_count() -> int:
    """One worker a core (the GUI thread mostly waits: rows are read beside it). At the window's own
    priority: a lower one starved them on a loaded machine without shortening the GUI thread's gaps."""
    return max(1, os.cpu_count() or 1)


class ReadPool:
    def __init__(self, spec: str, workers: int | None = None) -> None:
        self.spec = spec
        self.workers = workers or worker_count()
        self.ready = False  # every worker has answered (``warm_pool``, or a job of each done)
        self.broken = False  # a job found the pool broken (said once: ``JsonlReading._pool_stopped``)
        self.closed = False  # shut down (the window closing, or the pool given up): its jobs fail, nothing to say
        self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=start_worker, initargs=(spec,))

    def submit(self, source: str, summaries: list[core.RowSummary], demo: bool) -> Future:
        return self._executor.submit(read_rows, source, summaries, demo)

    def submit_call(self, fn: Callable, *args: Any) -> Future:
        return self._executor.submit(fn, *args)

    @staticmethod
    def rows(future: Future) -> list[Row]:
        """The rows a finished job read (raises what broke the pool: ``BrokenProcessPool``...)."""
        return pickle.loads(future.result())

    def shutdown(self) -> None:
        self.closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)


def read_pool(spec: str) -> ReadPool:
    """The shared pool for ``spec`` (a pool for another spec is ended: one counter is in use at a time).
    Keyed by the spec its counter is built from: reading with ``auto`` and replaying with the embedded
    counter share one pool (two would put twice the processes, each building the counter, on the cores)."""
    spec = CounterCache.built_as(spec)
    with _lock:
        pool = _pools.get(spec)
        if pool is None:
            for other in list(_pools):
                _pools.pop(other).shutdown()
            pool = _pools[spec] = ReadPool(spec)
        return pool


def ready_read_pool(spec: str) -> ReadPool | None:
    """The reading pool for ``spec`` if it is there and every worker has answered (its counters are built), else
    None: work that is quick in this process (indexing a file) is not made to wait for workers that are starting."""
    spec = CounterCache.built_as(spec)
    with _lock:
        pool = _pools.get(spec)
    return pool if pool is not None and pool.ready else None


def replay_pool(spec: str) -> ReadPool:
    """The pool replays of ``spec`` run in: the reading pool when it counts with the same counter."""
    spec = CounterCache.built_as(spec)
    with _lock:
        pool = _pools.get(spec) or _replay_pools.get(spec)
        if pool is None:
            for other in list(_replay_pools):
                _replay_pools.pop(other).shutdown()
            pool = _replay_pools[spec] = ReadPool(spec)
        return pool


def in_worker(spec: str | None, counter: core.TokenCounter, fn: Callable, payload: Any, *args: Any,
              fallback: Callable[[], Any]) -> Any:
    """``fn(pickled payload, *args)`` in a worker process counting with ``spec``; ``fallback()`` here when
    there is no spec, no pool, the worker has no counter, or its counter is not ``counter`` (same identity)."""
    if spec is None:
        return fallback()
    pool = None
    try:
        pool = replay_pool(spec)
        answer = pool.submit_call(fn, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), *args).result()
    except Exception as exc:  # no processes here, or a worker died: the work is done in this process
        log.warning("a worker process could not run %s (%s: %s); running it here", fn.__name__,
                    type(exc).__name__, exc)
        if pool is not None:
            discard_pool(pool)
        return fallback()
    if answer is None:
        return fallback()
    identity, value = pickle.loads(answer)
    if identity != counter.identity.model_dump(mode="json"):
        return fallback()
    return value


def warm_pool(spec: str) -> threading.Thread:
    """Start the worker processes for ``spec`` now, off the GUI thread, so the first replay, what-if sweep or
    large file does not wait for them (each builds its counter as it starts: two to three seconds here). Started
    by the app once its counter is built; the thread ends when every worker has answered (each answers once its
    counter is built: until then the machine's cores are busy building counters, which a file opened meanwhile
    would wait behind), or after ``WARM_SECONDS``. Under ``auto`` only the embedded counter's pool is started: an imported request's
    replays count with its model's counter, whose pool starts at its first use. A pool whose processes cannot start is discarded with a warning (the work then
    runs in this process, as when a worker dies); a worker whose counter cannot be built says so per job."""
    def start() -> None:
        pool = None
        try:
            pool = read_pool(spec)
            answered: set[int] = set()
            deadline = time.monotonic() + WARM_SECONDS
            while len(answered) < pool.workers and time.monotonic() < deadline:  # a short wait in each job, so
                # one worker, started first, does not answer every job while another still builds its counter
                answered.update(f.result() for f in [pool.submit_call(worker_ready, 0.05) for _ in range(pool.workers)])
            pool.ready = len(answered) >= pool.workers
        except Exception as exc:  # noqa: BLE001 - no processes here: the work runs in this process later
            if pool is not None and pool.closed:
                return  # shut down while it started (the window closed): nothing went wrong
            log.warning("worker processes for %s did not start (%s: %s)", spec, type(exc).__name__, exc)
            if pool is not None:
                discard_pool(pool)

    thread = threading.Thread(target=start, name="warm-workers", daemon=True)
    thread.start()
    return thread


def discard_pool(pool: ReadPool) -> None:
    """A pool that broke (a worker died) is not used again."""
    with _lock:
        for pools in (_pools, _replay_pools):
            if pools.get(pool.spec) is pool:
                del pools[pool.spec]
    pool.shutdown()


def shutdown_read_pools() -> None:
    with _lock:
        pools = list(_pools.values()) + list(_replay_pools.values())
        _pools.clear()
        _replay_pools.clear()
    for pool in pools:
        pool.shutdown()


atexit.register(shutdown_read_pools)
