"""A corpus: files and folders of recorded results, requests, JSONL shards and trace exports,
split into shards and read one request at a time.

A shard is a whole file, or a byte range of a large JSONL file of our own records (cut at line
starts, the way Hadoop splits text: a range owns every line that *starts* inside it). Listing the
shards only stats files (and peeks at the first line of a large one), so a corpus of many
gigabytes is planned without reading it; reading a shard streams its lines.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputFileError

SHARD_BYTES = 4 << 20  # a JSONL file of our records over this is split into ranges of about this size
SUFFIXES = (".json", ".jsonl", ".ndjson", ".yaml", ".yml")
SWEEP_FORMAT = "context-inspector/sweep@1"
WORK_SUFFIX = ".work"  # a sweep's work folder: never read as part of a corpus


@dataclass(frozen=True)
class Shard:
    """``path`` from byte ``start`` to ``end`` (``end`` is the file size for a whole file)."""

    path: str
    start: int
    end: int
    size: int
    mtime_ns: int
    split: bool = False  # a byte range of a JSONL file of our own records

    @property
    def key(self) -> str:
        """Names the shard's result file; changes when the file changes."""
        text = f"{self.path}\0{self.start}\0{self.end}\0{self.size}\0{self.mtime_ns}"
        return hashlib.sha1(text.encode()).hexdigest()[:20]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Shard":
        return cls(**data)


@dataclass(frozen=True)
class Record:
    """One request of a shard: where it is, and the decoded value (``imported`` for a model call
    of a trace format, whose ``value`` is an ``ImportedRequest``)."""

    ref: str  # path:line for a JSONL line, path[index] for an item of a file
    value: Any
    imported: bool = False


def list_files(paths: list[str]) -> list[Path]:
    """The files of ``paths`` (folders walked in name order, hidden entries and work folders left out).
    A path that does not exist is bad input: ``InputFileError``."""
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputFileError(given, "no such file or folder")
        if path.is_file():
            files.append(path)
            continue
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.endswith(WORK_SUFFIX))
            files += [Path(root, n) for n in sorted(names)
                      if not n.startswith(".") and n.lower().endswith(SUFFIXES)]
    seen: set[str] = set()
    unique = []
    for f in files:
        resolved = str(f.resolve())
        if resolved not in seen:
            seen.add(resolved)
            unique.append(Path(resolved))
    return unique


def plan_shards(paths: list[str], *, shard_bytes: int = SHARD_BYTES) -> list[Shard]:
    """Every shard of the corpus, in file order."""
    shards: list[Shard] = []
    for path in list_files(paths):
        stat = path.stat()
        if stat.st_size > shard_bytes and _ours_jsonl(path):
            shards += [Shard(str(path), start, min(start + shard_bytes, stat.st_size), stat.st_size,
                             stat.st_mtime_ns, split=True)
                       for start in range(0, stat.st_size, shard_bytes)]
        else:
            shards.append(Shard(str(path), 0, stat.st_size, stat.st_size, stat.st_mtime_ns))
    return shards


def is_ours(value: Any) -> bool:
    """A request, plan request, RAG request, recorded result or recorded rejection of our own."""
    from ..plans import looks_like_plan_request
    from ..rag import is_rag_request
    from ..result import looks_like_request, looks_like_result

    return (looks_like_result(value) or looks_like_request(value) or looks_like_plan_request(value)
            or is_rag_request(value) or (isinstance(value, dict) and value.get("error") == "RequiredContextTooLarge"))


def _ours_jsonl(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 << 20)
        value = json.loads(first)
        return is_ours(value) and not _provider_body(value)
    except (OSError, ValueError, RecursionError):
        return False


class BadFile(Exception):
    """A file of the corpus that cannot be read as requests: reported and skipped."""

    def __init__(self, path: str, problem: str, *, message: str | None = None):
        super().__init__(message or f"{path}: {problem}")
        self.path, self.problem = path, problem


def read_shard(shard: Shard, on_bad_record) -> Iterator[Record]:
    """The requests of ``shard``, one at a time. A line that is not JSON goes to
    ``on_bad_record(ref, problem)``; a file that cannot be read at all raises ``BadFile``."""
    if shard.split:
        yield from _lines(shard, on_bad_record)
        return
    try:
        with open(shard.path, "rb") as handle:
            head = handle.read(1 << 16).lstrip()
    except OSError as exc:
        raise BadFile(shard.path, f"cannot read: {exc.strerror or exc}") from None
    if not head:
        raise BadFile(shard.path, "the file is empty")
    if head.startswith(b"{") and _ours_jsonl_head(shard.path):
        yield from _lines(shard, on_bad_record)
        return
    yield from _whole_file(shard.path)


def _ours_jsonl_head(path: str) -> bool:
    with open(path, "rb") as handle:
        first = handle.readline(64 << 20)
        second = handle.readline(64 << 20)
        while second and not second.strip():
            second = handle.readline(64 << 20)
    try:
        return bool(second.strip()) and is_ours(json.loads(first)) and not _provider_body(json.loads(first))
    except (ValueError, RecursionError):
        return False


def _provider_body(value: Any) -> bool:
    from ..formats.detect import by_body

    return by_body(value) is not None


def _lines(shard: Shard, on_bad_record) -> Iterator[Record]:
    """Lines starting in [start, end): the one straddling ``start`` belongs to the previous range."""
    with open(shard.path, "rb") as handle:
        position = shard.start
        number = None
        if shard.start > 0:
            handle.seek(shard.start - 1)
            if handle.read(1) != b"\n":
                position += len(handle.readline())  # finish the line the previous range owns
        else:
            number = 1
        if number is None:  # line numbers of a range: count the newlines before it (a fast byte scan)
            number = _line_number(shard.path, position)
        handle.seek(position)
        while position < shard.end:
            raw = handle.readline()
            if not raw:
                break
            ref = f"{shard.path}:{number}"
            position += len(raw)
            number += 1
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, ValueError, RecursionError) as exc:
                on_bad_record(ref, "not valid UTF-8" if isinstance(exc, UnicodeDecodeError)
                              else f"malformed JSON: {getattr(exc, 'msg', exc)}")
                continue
            yield Record(ref, value)


def _line_number(path: str, offset: int) -> int:
    count = 1
    with open(path, "rb") as handle:
        remaining = offset
        while remaining > 0:
            block = handle.read(min(remaining, 1 << 20))
            if not block:
                break
            count += block.count(b"\n")
            remaining -= len(block)
    return count


def _whole_file(path: str) -> Iterator[Record]:
    """A JSON file or array of our records, or a trace format ``core.formats`` imports."""
    from ..formats.detect import sniff
    from ..formats.importing import import_parsed
    from ..formats.source import parse_file

    try:
        parsed = parse_file(path)
    except InputFileError as exc:
        raise BadFile(path, exc.problem, message=str(exc)) from None
    values = [v for _, v in parsed.records]
    if len(values) == 1 and isinstance(values[0], dict) and values[0].get("format") == SWEEP_FORMAT:
        raise BadFile(path, "a sweep's output, not requests")
    items = values[0] if parsed.kind != "jsonl" and len(values) == 1 and isinstance(values[0], list) else values
    # the formats' own verdict (a provider's body may look like our request), or recorded rejections of ours
    if sniff(parsed).name == "context-inspector" or (
            items and all(is_ours(v) and not _provider_body(v) for v in items)):
        for index, value in enumerate(items):
            yield Record(f"{path}[{index}]" if len(items) > 1 else path, value)
        return
    try:
        imported = import_parsed(parsed)
    except InputFileError as exc:
        raise BadFile(path, exc.problem, message=str(exc)) from None
    for index, request in enumerate(imported.requests):
        yield Record(f"{path}[{index}]", request, imported=True)
