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
from .jsonl_fast import listed_keys, result_from_line
from .inputs import MAX_DOCUMENT_BYTES, MAX_FILE_BYTES, decode_json, read_bytes, regular_file, sized_file
from .result import AssemblyResult, looks_like_request, looks_like_result, parse_result



@dataclass
class LoadedEntry:
    """One request or recorded result from a file, with where it came from."""

    index: int
    line: int | None
    kind: str  # "request" | "rag" | "plan" | "result" | "rejected"
    request: Request | None = None
    result: AssemblyResult | None = None
    rejection: dict[str, Any] | None = None  # a recorded RequiredContextTooLarge record
    label: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def read_text(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """A regular file's text (UTF-8, a BOM allowed), through the input layer's checks (core.inputs)."""
    data = read_bytes(path, max_bytes=max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(str(path), f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                             line=line, column=column) from None


def _decode(text: str, path: str, line_offset: int = 0) -> Any:
    try:
        return decode_json(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"malformed JSON: {exc.msg.removesuffix(' at')}", line=exc.lineno + line_offset,
                             column=exc.colno) from None
    except ValueError as exc:  # a limit of the input layer: depth, number size, surrogates, size
        raise InputFileError(path, str(exc), line=line_offset + 1 if line_offset else None) from None


def read_json(path: str | Path) -> Any:
    _refuse_big_document(path)
    return _decode(read_text(path), str(path))


def _refuse_big_document(path: str | Path) -> None:
    """A file over the one-document limit that is not JSON Lines is refused before it is read whole."""
    size = regular_file(path).st_size
    if size <= MAX_DOCUMENT_BYTES:
        return
    with open(path, "rb") as handle:
        head = handle.read(1 << 20).decode("utf-8", "replace")
    if not looks_like_jsonl(head):
        raise InputFileError(str(path), f"one JSON document of {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte "
                                        "limit (JSON Lines may be larger: one record per line)")


def iter_json_records(path: str | Path) -> Iterator[tuple[int | None, Any]]:
    """Yield ``(line, value)`` for each record: the objects of a JSONL file, the items of a
    JSON array, or the single object of a JSON file (line ``None``)."""
    _refuse_big_document(path)
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise InputFileError(str(path), "the file is empty")
    if looks_like_jsonl(stripped):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield number, _decode(line, str(path), line_offset=number - 1)
        return
    try:
        value = _decode(text, str(path))
    except InputFileError:
        broken = _broken_jsonl_line(text)
        if broken is None:
            raise
        number, line = broken  # JSON Lines whose first line is broken: name that line, not where the parse gave up
        _decode(line, str(path), line_offset=number - 1)
        raise
    if isinstance(value, list):
        for item in value:
            yield None, item
    else:
        yield None, value


def _broken_jsonl_line(text: str) -> tuple[int, str] | None:
    """For a text that is not one JSON document: when its other lines are whole JSON objects (so it is
    JSON Lines with a broken line), the first broken line and its number; otherwise ``None``."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) < 2:
        return None
    whole = 0
    first_bad = None
    for number, line in lines[:50]:
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, ValueError, RecursionError):
            first_bad = first_bad or (number, line)
            continue
        whole += isinstance(value, dict)
    return first_bad if first_bad is not None and whole else None


def looks_like_jsonl(text: str) -> bool:
    """Several JSON objects, one per line (the first line is a whole object and more follow)."""
    stripped = text.lstrip()
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
    from .plans import looks_like_plan_request, parse_plan_request
    from .rag import is_rag_request, rag_request_from

    if is_rag_request(value):  # verified windows -> a request whose passages are whole windows
        loaded = rag_request_from(value, base_dir=Path(source).parent, source=where)
        return LoadedEntry(index, line, "rag", request=loaded.request,
                           label=loaded.request.id or f"#{index + 1}", extra={"rag": loaded})
    if looks_like_plan_request(value):
        plan_request = parse_plan_request(value, source=where)
        return LoadedEntry(index, line, "plan", label=plan_request.id or f"#{index + 1}",
                           extra={"plan_request": plan_request})
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


@dataclass(frozen=True)
class RowSummary:
    """What a requests list shows for one row, read without validating the whole entry."""

    index: int
    line: int
    offset: int
    length: int
    kind: str  # "request" | "rag" | "plan" | "result" | "rejected" | "error"
    label: str
    strategy: str | None = None
    input_tokens: int | None = None
    input_budget: int | None = None
    kept: int | None = None
    dropped: int | None = None
    problem: str | None = None


def _summary(value: Any, index: int, line: int, offset: int, length: int) -> RowSummary:
    base = dict(index=index, line=line, offset=offset, length=length)
    if looks_like_result(value):
        trace = value.get("trace") if isinstance(value.get("trace"), list) else []
        kept = dropped = 0
        for e in trace:
            if isinstance(e, dict):
                decision = e.get("decision")
                if decision in ("kept", "summarised"):
                    kept += 1
                elif decision == "dropped":
                    dropped += 1
        request = value.get("request") if isinstance(value.get("request"), dict) else {}
        label = value.get("request_id") or request.get("id") or f"#{index + 1}"
        tokens, budget = value.get("input_tokens"), value.get("input_budget")
        strategy = value.get("strategy")  # a hand-edited file may hold any JSON here: the list shows its text
        strategy = strategy if strategy is None or isinstance(strategy, str) else json.dumps(strategy)
        return RowSummary(**base, kind="result", label=str(label), strategy=strategy,
                          input_tokens=tokens if isinstance(tokens, int) else None,
                          input_budget=budget if isinstance(budget, int) else None, kept=kept, dropped=dropped)
    if looks_like_request(value):
        return RowSummary(**base, kind="request", label=str(value.get("id") or f"#{index + 1}"))
    if isinstance(value, dict) and value.get("kind") in ("plan", "rag-windows"):
        kind = "plan" if value["kind"] == "plan" else "rag"
        return RowSummary(**base, kind=kind, label=str(value.get("id") or f"#{index + 1}"))
    if isinstance(value, dict) and value.get("error") == "RequiredContextTooLarge":
        return RowSummary(**base, kind="rejected", label=f"#{index + 1}")
    return RowSummary(**base, kind="error", label=f"#{index + 1}",
                      problem="neither a request nor a result" if isinstance(value, dict)
                      else f"expected a JSON object, found {type(value).__name__}")


class JsonlIndex:
    """A JSONL file of many requests or results, opened lazily.

    Opening reads each line once (to find where it is and what a list row shows) and keeps only
    those summaries; an entry is validated when it is asked for. A bad line becomes an ``error``
    row naming its line and problem, so one broken record does not hide ten thousand good ones.
    """

    def __init__(self, path: str | Path, rows: list[RowSummary]):
        self.path = Path(path)
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def entry(self, index: int) -> LoadedEntry:
        return read_entry(self.path, self.rows[index])


def read_entry(path: str | Path, row: RowSummary) -> LoadedEntry:
    """The entry one index row summarises, read from the file and validated (another process can read it
    from the summary alone: the index itself need not travel)."""
    if row.kind == "error":
        raise InputFileError(str(path), row.problem or "unreadable record", line=row.line)
    with open(path, "rb") as handle:
        handle.seek(row.offset)
        raw = handle.read(row.length)
    return entry_from_line(path, row, raw)


def entry_from_line(path: str | Path, row: RowSummary, raw: bytes) -> LoadedEntry:
    """``read_entry`` of the line's bytes ``raw``, already read from ``path`` (a worker reads a chunk's lines
    through one open file; the window validates a row again from the bytes it was read from)."""
    if row.kind == "error":
        raise InputFileError(str(path), row.problem or "unreadable record", line=row.line)
    if row.kind == "result":  # validated from the bytes (core.jsonl_fast), or by the reference path below
        result = result_from_line(raw)
        if result is not None and "trace" in result.model_fields_set:
            label = result.request_id or (result.request.id if result.request else None) or f"#{row.index + 1}"
            return LoadedEntry(row.index, row.line, "result", request=result.request, result=result, label=label)
    value = _decode(raw.decode("utf-8"), str(path), line_offset=row.line - 1)
    return entry_from(value, row.index, row.line, str(path))


def index_jsonl(path: str | Path, *, progress=None, should_stop=None, max_bytes: int = MAX_FILE_BYTES) -> JsonlIndex:
    """Index a JSONL file; ``progress(done_bytes, total_bytes)`` is called now and then and
    ``should_stop()`` is polled, so a GUI can show progress and cancel (``None`` is returned).
    ``core.jsonl_parts`` makes the same index in parts, side by side."""
    path = Path(path)
    total = sized_file(path, max_bytes).st_size
    rows = index_range(path, 0, total, 1, 0, progress=progress, should_stop=should_stop)
    if rows is None:
        return None  # type: ignore[return-value]
    if progress is not None:
        progress(total, total)
    return JsonlIndex(path, rows)


def index_range(path: str | Path, start: int, end: int, first_line: int, first_index: int, *, progress=None,
                should_stop=None) -> list[RowSummary] | None:
    """The index rows of the lines from byte ``start`` (a line's start) to ``end`` (a line's end, or the file's),
    the first of them line ``first_line`` and, if not blank, row ``first_index``: ``index_jsonl``'s rows there.
    ``None`` where ``should_stop()`` said so."""
    rows: list[RowSummary] = []
    offset, number = start, first_line - 1
    with open(path, "rb") as handle:
        handle.seek(start)
        while offset < end:  # (checked before a line is read: a part stops short of the next part's first line)
            raw = handle.readline()
            if not raw:
                break
            number += 1
            length = len(raw)
            if raw and not raw.isspace():  # not blank (what strip() would empty), without copying the line
                try:
                    if length > MAX_DOCUMENT_BYTES:
                        raise ValueError(f"a line of {length:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit")
                    value = listed_keys(raw)  # core.jsonl_fast; None: the reference path decides
                    if value is None:
                        value = decode_json(raw.decode("utf-8"))
                    rows.append(_summary(value, first_index + len(rows), number, offset, length))
                except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
                    problem = ("not valid UTF-8" if isinstance(exc, UnicodeDecodeError)
                               else f"malformed JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError)
                               else str(exc))
                    rows.append(RowSummary(first_index + len(rows), number, offset, length, "error",
                                           f"line {number}", problem=problem))
            offset += length
            if number % 256 == 0:
                if progress is not None:
                    progress(offset, end)
                if should_stop is not None and should_stop():
                    return None
    return rows
