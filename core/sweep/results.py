"""Reading a SWEEP.json back: its figures as text, the requests in a histogram bucket, one request again."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputFileError
from .corpus import SWEEP_FORMAT, Record, Shard, read_shard
from .settings import Setting
from .work import MANIFEST


def is_sweep(value: Any) -> bool:
    return isinstance(value, dict) and value.get("format") == SWEEP_FORMAT and isinstance(value.get("settings"), list)


def is_sweep_file(path: str | Path) -> bool:
    """A SWEEP.json, told by content (its ``format`` comes first), reading only its first bytes."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and f'"format": "{SWEEP_FORMAT}"'.encode() in head


def member_location(ref: str) -> tuple[str, int | None, int]:
    """Where a row's ``ref`` points: (file, line of a JSONL file or None, index of the request in the file)."""
    match = _LINE_REF.match(ref)
    if match and Path(match["path"]).is_file():
        return match["path"], int(match["line"]), 0
    match = _ITEM_REF.match(ref)
    return (match["path"], None, int(match["index"])) if match else (ref, None, 0)


def load_sweep(path: str | Path) -> dict[str, Any]:
    from ..loading import read_json

    value = read_json(path)
    if not is_sweep(value):
        raise InputFileError(str(path), f"not a sweep (expected \"format\": \"{SWEEP_FORMAT}\")")
    return value


@dataclass(frozen=True)
class BucketMember:
    ref: str
    label: str
    value: int  # input tokens, or kept items lost
    figures: dict[str, Any]  # the request's row for that setting


def _work_folder(sweep_path: str | Path, sweep: dict[str, Any]) -> Path:
    name = sweep.get("work_folder")
    if not name:
        raise InputFileError(str(sweep_path), "this sweep was run without -o, so its per-request rows were not kept")
    folder = Path(sweep_path).parent / name
    if not (folder / MANIFEST).exists():
        raise InputFileError(str(folder), "the sweep's work folder is missing: its requests cannot be listed")
    return folder


def _rows(folder: Path) -> Iterator[dict[str, Any]]:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    for data in manifest["shards"]:
        rows = folder / f"{Shard.from_json(data).key}.rows.jsonl"
        if rows.exists():
            with open(rows, encoding="utf-8") as handle:
                for line in handle:
                    yield json.loads(line)


def bucket_members(sweep_path: str | Path, sweep: dict[str, Any], setting: int, histogram: str, bucket: int,
                   *, limit: int = 1000) -> list[BucketMember]:
    """The requests (at most ``limit``) whose ``histogram`` value (``input_tokens`` or
    ``kept_items_lost``) under setting ``setting`` falls in bucket ``bucket``."""
    buckets = sweep["settings"][setting]["histograms"][histogram]
    lo, hi, last = buckets[bucket]["lo"], buckets[bucket]["hi"], bucket == len(buckets) - 1
    key = "in" if histogram == "input_tokens" else "lost"
    members = []
    for row in _rows(_work_folder(sweep_path, sweep)):
        figures = row["settings"][setting]
        value = figures.get(key)
        if value is None or figures.get("over") or "err" in figures:
            continue
        if lo <= value < hi or (last and value == hi):
            members.append(BucketMember(row["ref"], row["label"], value, figures))
            if len(members) >= limit:
                break
    return members


_LINE_REF = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
_ITEM_REF = re.compile(r"^(?P<path>.+)\[(?P<index>\d+)\]$")


def read_member(ref: str) -> Record:
    """The request a row's ``ref`` names, read again from its file."""
    match = _LINE_REF.match(ref)
    if match and Path(match["path"]).is_file():
        path, line = match["path"], int(match["line"])
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number == line:
                    return Record(ref, json.loads(raw))
        raise InputFileError(path, f"has no line {line}")
    match = _ITEM_REF.match(ref)
    path, index = (match["path"], int(match["index"])) if match else (ref, 0)
    size = Path(path).stat().st_size
    for number, record in enumerate(read_shard(Shard(path, 0, size, size, 0), lambda *_: None)):
        if number == index:
            return record
    raise InputFileError(path, f"has no request {index}")


def setting_of(sweep: dict[str, Any], index: int, plan: dict[str, Any] | None = None) -> Setting:
    data = dict(sweep["settings"][index]["setting"])
    return Setting.from_json(dict(data, plan_data=plan))


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def sweep_text(sweep: dict[str, Any]) -> str:
    """The figures as a table, one row per setting, then what could not be read."""
    corpus = sweep["corpus"]
    lines = [f"{corpus['requests']:,} requests in {corpus['files']} files ({corpus['shards']} shards), "
             f"counter {sweep['counter']}, engine {sweep['engine']}"]
    header = (f"{'setting':34} {'overflow':>8} {'errors':>6} {'losing':>7} {'lost':>6} {'audit':>5} "
              f"{'in p50':>7} {'in p95':>7} {'free p50':>8} {'input tokens':>13} {'cost $':>9}  drop rates")
    lines.append(header)
    for entry in sweep["settings"]:
        tokens, free = entry["input_tokens"], entry["free_tokens"]
        drops = ", ".join(f"{name} {_pct(s['drop_rate'])}" for name, s in entry["sections"].items() if s["dropped"])
        cost = f"{entry['input_cost_usd']:.4f}" if entry["input_cost_usd"] is not None else "-"
        lines.append(f"{entry['setting']['label'][:34]:34} {entry['overflows']:>8} {entry['errors']:>6} "
                     f"{entry['requests_losing_kept_items']:>7} {entry['kept_items_lost']:>6} "
                     f"{entry['audit_errors']:>5} {tokens['p50'] if tokens['p50'] is not None else '-':>7} "
                     f"{tokens['p95'] if tokens['p95'] is not None else '-':>7} "
                     f"{free['p50'] if free['p50'] is not None else '-':>8} {entry['input_tokens_total']:>13,} "
                     f"{cost:>9}  {drops or 'nothing dropped'}")
    for bad in sweep["bad_files"]:
        lines.append(f"skipped: {bad['problem'].split('; supported:')[0]}")
    if sweep["bad_records"]:
        lines.append(f"skipped {sweep['bad_records']} unreadable records, e.g.:")
        lines += [f"  {s['problem']}" for s in sweep["bad_record_samples"][:5]]
    errors = sorted({m for e in sweep["settings"] for _, m in e["error_samples"]})
    if errors:
        lines.append("requests that cannot be re-assembled, e.g.:")
        lines += [f"  {m}" for m in errors[:5]]
    lines += [f"note: {n}" for n in sweep["notes"]]
    return "\n".join(lines) + "\n"
