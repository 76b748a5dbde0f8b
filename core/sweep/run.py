"""``run_sweep``: plan the shards, run an engine over those not done yet, merge every shard's totals."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from ..errors import RequestError
from .aggregate import merged, report
from .corpus import SHARD_BYTES, SWEEP_FORMAT, plan_shards
from .models import AUTO, input_price
from .progress import Progress
from .settings import Setting
from .work import WorkFolder, work_folder_for

ENGINES = ("local", "ray")


def run_sweep(paths: Sequence[str], settings: Sequence[Setting], *, counter: str | None = None,
              engine: str = "local", output: str | Path | None = None, resume: bool = False,
              workers: int | None = None, ray_address: str | None = None, shard_bytes: int = SHARD_BYTES,
              progress: bool = False) -> dict[str, Any]:
    """The sweep's JSON. With ``output``, the work folder ``<output>.work`` is kept (the inspector lists a
    bucket's requests from it) and ``resume`` goes on with an interrupted run; without, it is temporary."""
    if engine not in ENGINES:
        raise RequestError([("--engine", f"{engine!r} is not one of {', '.join(ENGINES)}")], source="command line")
    if resume and output is None:
        raise RequestError([("--resume", "needs -o SWEEP.json: the work folder lives next to it")],
                           source="command line")
    started = time.perf_counter()
    shards = plan_shards(list(paths), shard_bytes=shard_bytes)
    temporary = output is None
    folder = WorkFolder(Path(tempfile.mkdtemp(prefix="sweep-")) if temporary else work_folder_for(output))
    manifest = {"format": SWEEP_FORMAT + "/work", "settings": [s.to_json() for s in settings], "counter": counter,
                "shards": [s.to_json() for s in shards]}
    try:
        folder.open(manifest, resume=resume)
        todo = [s for s in shards if not folder.done(s)]
        bar = Progress(sum(s.end - s.start for s in todo), len(todo)) if progress else None
        planned = time.perf_counter()
        cluster_seconds = None
        try:
            if engine == "ray":
                from .ray_engine import run_ray

                cluster_seconds = run_ray(todo, settings, counter, folder, workers=workers, address=ray_address, progress=bar)
            else:
                from .local import run_local

                run_local(todo, settings, counter, folder, workers=workers, progress=bar)
        finally:
            if bar is not None:
                bar.close()
        ran = time.perf_counter()
        total = merged(folder.states(shards), len(settings))
        notes = []
        if counter == AUTO:
            notes.append("--counter auto: each request counted with its model's counter from the model registry "
                         "(the default counter where it names no model, or its counter cannot be built here)")
        if total.adapted:
            notes.append(f"{total.adapted} imported calls were re-assembled without the text of assistant messages "
                         "that also carry tool calls (the counter's template refuses both in one message; as count)")
        figures = report(total, input_price)
        if not any(f["priced_input_tokens"] for f in figures):
            notes.append("no input prices known for these requests' models: input cost left out")
        return {
            "format": SWEEP_FORMAT, "engine": engine,
            "corpus": {"paths": [str(p) for p in paths], "files": len({s.path for s in shards}),
                       "shards": len(shards), "requests": total.requests, "adapted": total.adapted},
            "counter": counter or "default", "notes": notes,
            "work_folder": None if temporary else folder.path.name,
            "settings": [dict(setting={k: v for k, v in s.to_json().items() if k != "plan_data"}, **f)
                         for s, f in zip(settings, figures)],
            "bad_files": [{"path": p, "problem": m} for p, m in total.bad_files],
            "bad_records": total.bad_records,
            "bad_record_samples": [{"ref": r, "problem": m} for r, m in total.bad_record_samples],
            "timings": {"seconds": round(ran - started, 3), "plan_seconds": round(planned - started, 3),
                        "run_seconds": round(ran - planned, 3), "shards_run": len(todo),
                        "shards_resumed": len(shards) - len(todo), "workers": workers,
                        **({"cluster_start_seconds": round(cluster_seconds, 3)} if cluster_seconds is not None
                           else {})},
        }
    finally:
        if temporary:
            shutil.rmtree(folder.path, ignore_errors=True)
