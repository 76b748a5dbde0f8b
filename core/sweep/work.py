"""The work folder of a sweep: what it was asked, and one finished file per shard.

``SWEEP.json.work/`` next to the output holds ``manifest.json`` (settings, counter, the shard
plan) and, per shard, ``<key>.rows.jsonl`` (one line per request) and ``<key>.json`` (the
shard's totals). Each is written to a temporary name and moved into place with ``os.replace``;
the totals file is written last, so it exists only when the whole shard is done. A resumed run
skips every shard with a totals file and does the others from their start: no request is counted
twice, and a shard cut off half-way is simply done again.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..errors import RequestError
from .aggregate import Totals
from .corpus import BadFile, Shard, read_shard
from .measure import Counters, measure
from .settings import Setting

MANIFEST = "manifest.json"


def work_folder_for(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".work")


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class WorkFolder:
    def __init__(self, path: str | Path):
        self.path = Path(path)

    def open(self, manifest: dict[str, Any], *, resume: bool) -> None:
        """Start a new run, or check a resumed one asks the same as the one that started it."""
        existing = self.path / MANIFEST
        if existing.exists():
            if not resume:
                raise RequestError([("-o", f"{self.path} holds an earlier sweep: add --resume to go on with it, "
                                           "or remove the folder to start again")], source="command line")
            try:
                before = json.loads(existing.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise RequestError([("--resume", f"cannot read {existing}: {exc}")], source="command line") from None
            for key in ("settings", "counter", "shards"):
                if before.get(key) != manifest.get(key):
                    what = "corpus (a file was added, removed or changed)" if key == "shards" else key
                    raise RequestError([("--resume", f"the {what} differs from the run in {self.path}; "
                                                     "remove the folder to start again")], source="command line")
            for stale in self.path.glob("*.tmp"):  # a run cut off while writing
                stale.unlink(missing_ok=True)
            return
        self.path.mkdir(parents=True, exist_ok=True)
        write_atomic(existing, json.dumps(manifest, indent=1))

    def totals_path(self, shard: Shard) -> Path:
        return self.path / f"{shard.key}.json"

    def rows_path(self, shard: Shard) -> Path:
        return self.path / f"{shard.key}.rows.jsonl"

    def done(self, shard: Shard) -> bool:
        return self.totals_path(shard).exists()

    def states(self, shards: Sequence[Shard]) -> Iterator[dict[str, Any]]:
        for shard in shards:
            yield json.loads(self.totals_path(shard).read_text(encoding="utf-8"))


def process_shard(shard: Shard, settings: Sequence[Setting], counters: Counters, folder: WorkFolder,
                  tick: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Measure every request of ``shard``, write its rows and totals, return the totals' state."""
    totals = Totals(len(settings))
    rows = folder.rows_path(shard)
    tmp = rows.with_name(f"{rows.name}.{os.getpid()}.tmp")
    pending = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            try:
                for record in read_shard(shard, totals.bad_record):
                    try:
                        row = measure(record, settings, counters)
                    except RequestError as exc:  # not a valid request or result: a bad record
                        totals.bad_record(record.ref, str(exc).splitlines()[0][:300])
                        continue
                    except Exception as exc:  # a bug must not end a run of millions: named, counted, reported
                        totals.bad_record(record.ref, f"unexpected {type(exc).__name__} (please report): {exc}"[:300])
                        continue
                    totals.add_row(row)
                    out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
                    pending += 1
                    if tick is not None and pending >= 16:
                        tick(pending)
                        pending = 0
            except BadFile as exc:
                totals.bad_files.append([exc.path, str(exc)])
        os.replace(tmp, rows)
    finally:
        tmp.unlink(missing_ok=True)
    if tick is not None and pending:
        tick(pending)
    state = totals.state()
    state["shard"] = shard.to_json()
    write_atomic(folder.totals_path(shard), json.dumps(state, separators=(",", ":")))
    return state
