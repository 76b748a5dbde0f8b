"""``--engine ray``: the same shard function on a Ray cluster, the shard list as a Ray Dataset.

``ray.init(address)`` joins a running cluster (``None``: start a local one with ``workers`` CPUs).
The dataset has one row per shard still to do; ``Dataset.map`` with a callable class runs
``process_shard`` in a pool of actors, each building its counters once. Rows and totals go to the
work folder, which every node must see at the same path (a shared file system); only the small
totals come back to the driver. Ray retries a task whose node died; a shard is written
atomically, so a retried or resumed shard is never counted twice.
"""
from __future__ import annotations

import json
import logging
import os
import time
from typing import Any, Sequence

from ..errors import RequestError
from .corpus import Shard
from .progress import Progress
from .settings import Setting
from .work import WorkFolder, process_shard

RAY_MISSING = "--engine ray needs Ray, an optional extra: pip install 'context-inspector[ray]'"


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


class ShardTask:
    """One actor of the pool: counters built once, then one shard per call."""

    def __init__(self, settings: list[dict], spec: str | None, folder: str):
        from .models import counters

        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.settings = [Setting.from_json(s) for s in settings]
        self.counters = counters(spec)
        self.folder = WorkFolder(folder)

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        shard = Shard.from_json(json.loads(row["shard"]))
        state = process_shard(shard, self.settings, self.counters, self.folder)
        return {"state": json.dumps(state), "bytes": shard.end - shard.start}


def run_ray(todo: Sequence[Shard], settings: Sequence[Setting], spec: str | None, folder: WorkFolder, *,
            workers: int | None = None, address: str | None = None, progress: Progress | None = None) -> float:
    """Runs the shards; returns the seconds ``ray.init`` took (0 when the cluster was already up)."""
    if not ray_available():
        raise RequestError([("--engine", RAY_MISSING)], source="command line")
    import ray

    if not todo:
        return 0.0
    started_here = not ray.is_initialized()
    init_started = time.perf_counter()
    if started_here:
        options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        if address is None and not os.environ.get("RAY_ADDRESS"):
            options["num_cpus"] = workers or os.cpu_count() or 1
        ray.init(address=address, **options)
    init_seconds = time.perf_counter() - init_started
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        concurrency = max(1, min(workers or int(ray.cluster_resources().get("CPU", 1)), len(todo)))
        dataset = ray.data.from_items([{"shard": json.dumps(s.to_json())} for s in todo],
                                      override_num_blocks=len(todo))
        done = dataset.map(ShardTask, fn_constructor_kwargs={
            "settings": [s.to_json() for s in settings], "spec": spec, "folder": str(folder.path)},
            compute=ray.data.ActorPoolStrategy(size=concurrency), num_cpus=1)
        finished = 0
        try:
            for row in done.iter_rows():
                finished += 1
                if progress is not None:
                    state = json.loads(row["state"])
                    progress.update(requests=progress.requests + state["requests"], shard_bytes=row["bytes"],
                                    shards=1)
        except KeyboardInterrupt:
            from .local import SweepInterrupted

            raise SweepInterrupted(finished, len(todo)) from None
    finally:
        if started_here:
            ray.shutdown()
    return init_seconds
