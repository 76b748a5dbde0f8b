"""Worker processes that read a large JSONL's pending rows, so the GUI thread never waits on the
interpreter lock while thousands of rows are assembled and audited (a thread would hold it).

One pool per counter spec, spawned on first use and kept for the next file (a worker builds its
counter once: seconds for tekken); ``shutdown_read_pools`` ends them (at exit at the latest).
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import threading
from concurrent.futures import Future, ProcessPoolExecutor

import core

from ..document import Row
from ..document.reading import read_rows, start_worker

_pools: dict[str, "ReadPool"] = {}
_lock = threading.Lock()


def worker_count() -> int:
    """One core is the GUI's: the others read (at least one worker)."""
    return max(1, (os.cpu_count() or 2) - 1)


class ReadPool:
    def __init__(self, spec: str, workers: int | None = None) -> None:
        self.spec = spec
        self.workers = workers or worker_count()
        self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=start_worker, initargs=(spec,))

    def submit(self, source: str, summaries: list[core.RowSummary], demo: bool) -> Future:
        return self._executor.submit(read_rows, source, summaries, demo)

    @staticmethod
    def rows(future: Future) -> list[Row]:
        """The rows a finished job read (raises what broke the pool: ``BrokenProcessPool``...)."""
        return pickle.loads(future.result())

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def read_pool(spec: str) -> ReadPool:
    """The shared pool for ``spec`` (a pool for another spec is ended: one counter is in use at a time)."""
    spec = spec or core.DEFAULT_COUNTER
    with _lock:
        pool = _pools.get(spec)
        if pool is None:
            for other in list(_pools):
                _pools.pop(other).shutdown()
            pool = _pools[spec] = ReadPool(spec)
        return pool


def discard_pool(pool: ReadPool) -> None:
    """A pool that broke (a worker died) is not used again."""
    with _lock:
        if _pools.get(pool.spec) is pool:
            del _pools[pool.spec]
    pool.shutdown()


def shutdown_read_pools() -> None:
    with _lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown()


atexit.register(shutdown_read_pools)
