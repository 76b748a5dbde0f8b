"""Reading request and result files: one JSON object, a JSON array, or JSONL of many.

Every failure is an ``InputFileError`` (the file cannot be read as JSON) or a ``RequestError``
(an entry does not satisfy its contract) that names the file, the line or field and the problem.
Nothing here writes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .contracts import Request, parse_request
from .errors import InputFileError, RequestError
from .result import AssemblyResult, looks_like_request, looks_like_result, parse_result

MAX_FILE_BYTES = 1 << 30  # 1 GiB: beyond this a file is refused before it is read


@dataclass
class LoadedEntry:
    """One request or recorded result from a file, with where it came from."""

    index: int
    line: int | None
    kind: str  # "request" | "result" | "rejected"
    request: Request | None = None
    result: AssemblyResult | None = None
    rejection: dict[str, Any] | None = None  # a recorded RequiredContextTooLarge record
    label: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def read_text(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputFileError(str(path), "no such file") from None
    except OSError as exc:
        raise InputFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if path.is_dir():
        raise InputFileError(str(path), "is a directory, not a file")
    if size > max_bytes:
        raise InputFileError(str(path), f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(str(path), f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                             line=line, column=column) from None


def _decode(text: str, path: str, line_offset: int = 0) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"malformed JSON: {exc.msg.removesuffix(' at')}", line=exc.lineno + line_offset,
                             column=exc.colno) from None
    except RecursionError:
        raise InputFileError(path, "JSON nested too deeply") from None


def read_json(path: str | Path) -> Any:
    return _decode(read_text(path), str(path))


def iter_json_records(path: str | Path) -> Iterator[tuple[int | None, Any]]:
    """Yield ``(line, value)`` for each record: the objects of a JSONL file, the items of a
    JSON array, or the single object of a JSON file (line ``None``)."""
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputFileError(str(path), "the file is empty")
    if _is_jsonl(stripped):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield number, _decode(line, str(path), line_offset=number - 1)
        return
    value = _decode(text, str(path))
    if isinstance(value, list):
        for item in value:
            yield None, item
    else:
        yield None, value


def _is_jsonl(stripped: str) -> bool:
    if not stripped.startswith("{"):
        return False
    first, _, rest = stripped.partition("\n")
    if not rest.strip():
        return False
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def entry_from(value: Any, index: int, line: int | None, source: str, *, in_array: bool = False) -> LoadedEntry:
    """Turn one decoded record into a request, a recorded result or a recorded rejection."""
    where = f"{source}:{line}" if line is not None else (f"{source}[{index}]" if in_array or index else source)
    if looks_like_result(value):
        result = parse_result(value, source=where)
        label = result.request_id or (result.request.id if result.request else None) or f"#{index + 1}"
        return LoadedEntry(index, line, "result", request=result.request, result=result, label=label)
    if looks_like_request(value):
        request = parse_request(value, source=where)
        return LoadedEntry(index, line, "request", request=request, label=request.id or f"#{index + 1}")
    if isinstance(value, dict) and value.get("error") == "RequiredContextTooLarge":
        return LoadedEntry(index, line, "rejected", rejection=value, label=f"#{index + 1}")
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:6])
        raise RequestError([("", f"neither a request (instructions, current, ...) nor a result (messages, trace, ...); "
                                 f"keys found: {keys}")], source=where)
    raise RequestError([("", f"expected a request or result object, found a JSON {type(value).__name__}")],
                       source=where)


def load_entries(path: str | Path) -> list[LoadedEntry]:
    """All entries of a request/result file; the first bad entry raises with its place."""
    source = str(path)
    records = list(iter_json_records(path))
    in_array = len(records) > 1 or (bool(records) and records[0][0] is None
                                    and read_text(path).lstrip().startswith("["))
    return [entry_from(value, i, line, source, in_array=in_array) for i, (line, value) in enumerate(records)]


def load_request(path: str | Path) -> Request:
    entries = load_entries(path)
    if len(entries) != 1 or entries[0].kind != "request":
        kinds = ", ".join(e.kind for e in entries[:3])
        raise RequestError([("", f"expected one request, found {len(entries)} entries ({kinds})")], source=str(path))
    return entries[0].request  # type: ignore[return-value]


def load_result(path: str | Path) -> AssemblyResult:
    entries = load_entries(path)
    if len(entries) != 1 or entries[0].kind != "result":
        kinds = ", ".join(e.kind for e in entries[:3])
        raise RequestError([("", f"expected one result, found {len(entries)} entries ({kinds})")], source=str(path))
    return entries[0].result  # type: ignore[return-value]
