"""``--engine local``: every core of this machine through a process pool.

Each worker builds its counters once (the pool's initializer) and then takes whole shards. At most
two shards per worker are in flight, so the parent holds a bounded amount of work whatever the
corpus size; rows go to the work folder, only small totals come back. Workers ignore SIGINT: on
Ctrl-C the parent stops the pool and says how to resume.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any, Sequence

from ..errors import ContextInspectorError
from .corpus import Shard
from .models import counters as make_counters
from .progress import Progress
from .settings import Setting
from .work import WorkFolder, process_shard

_worker: dict[str, Any] = {}


class SweepInterrupted(Exception):
    def __init__(self, done: int, total: int):
        super().__init__(f"interrupted after {done} of {total} shards")
        self.done, self.total = done, total


class SweepFailed(ContextInspectorError):
    """A shard could not be processed at all (not one bad request: those are counted and reported)."""


def _init(settings: list[dict], spec: str | None, folder: str, requests) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    _worker.update(settings=[Setting.from_json(s) for s in settings], counters=make_counters(spec),
                   folder=WorkFolder(folder), requests=requests)


def _tick(n: int) -> None:
    with _worker["requests"].get_lock():
        _worker["requests"].value += n


def _task(shard: dict) -> dict:
    try:
        return process_shard(Shard.from_json(shard), _worker["settings"], _worker["counters"], _worker["folder"],
                             _tick)
    except Exception as exc:  # as text: an exception that cannot be unpickled would leave the pool waiting
        return {"failed": f"{shard['path']}: {type(exc).__name__}: {exc}"}


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_local(todo: Sequence[Shard], settings: Sequence[Setting], spec: str | None, folder: WorkFolder, *,
              workers: int | None = None, progress: Progress | None = None) -> None:
    workers = max(1, min(workers or cpu_count(), len(todo) or 1))
    if workers == 1:  # in this process: no pool to start (also the single-process figure of the benchmark)
        counters = make_counters(spec)
        done = 0
        try:
            for shard in todo:
                process_shard(shard, settings, counters, folder,
                              (lambda n: progress.update(requests=progress.requests + n)) if progress else None)
                done += 1
                if progress is not None:
                    progress.update(shard_bytes=shard.end - shard.start, shards=1)
        except KeyboardInterrupt:
            raise SweepInterrupted(done, len(todo)) from None
        return
    context = _context()
    requests = context.Value("q", 0)
    pool = context.Pool(workers, _init, ([s.to_json() for s in settings], spec, str(folder.path), requests))
    pending: dict[Any, Shard] = {}
    queue = list(reversed(todo))
    done = 0
    try:
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                shard = queue.pop()
                pending[pool.apply_async(_task, (shard.to_json(),))] = shard
            time.sleep(0.05)
            for result in [r for r in pending if r.ready()]:
                shard = pending.pop(result)
                failed = result.get().get("failed")
                if failed:  # a shard that could not be written (disk full...): stop, resumable
                    raise SweepFailed(failed)
                done += 1
                if progress is not None:
                    progress.update(shard_bytes=shard.end - shard.start, shards=1)
            if progress is not None:
                progress.update(requests=requests.value)
        pool.close()
    except KeyboardInterrupt:
        pool.terminate()
        raise SweepInterrupted(done, len(todo)) from None
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
