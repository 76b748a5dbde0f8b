"""A JSONL file's index made in parts, each from a line's start, so that worker processes can index them side by side
(``index_part`` in each, ``joined_index`` of what they give): the rows, line numbers, offsets and labels
``index_jsonl`` gives in one pass. Where the parts begin, and the line number and row index each starts with, come
from one read of the file that counts its newlines and finds its blank lines (no JSON is parsed there)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .inputs import MAX_FILE_BYTES, sized_file
from .loading import JsonlIndex, RowSummary, index_range

BLOCK = 8 << 20  # bytes read at a time while counting lines
# a newline followed by whitespace: where a blank line (whitespace only, as ``bytes.isspace`` has it) may start
_MAY_BE_BLANK = re.compile(rb"\n(?=[ \t\r\x0b\x0c\n])")
_SPACE = b" \t\n\r\x0b\x0c"


@dataclass(frozen=True)
class JsonlPart:
    """Bytes ``start`` to ``end`` of a JSONL file, whole lines; its first line is line ``first_line`` and the first
    row it indexes is row ``first_index`` (rows are the lines that are not blank)."""

    start: int
    end: int
    first_line: int
    first_index: int


def plan_parts(path: str | Path, count: int, *, max_bytes: int = MAX_FILE_BYTES) -> list[JsonlPart]:
    """``path`` cut into at most ``count`` parts of about equal size, each from a line's start (fewer where a line is
    longer than a part). The file is refused as ``index_jsonl`` refuses it (not a regular file, over ``max_bytes``)."""
    path = Path(path)
    total = sized_file(path, max_bytes).st_size
    cuts = [0]
    with open(path, "rb") as handle:
        for k in range(1, max(1, count)):
            at = total * k // count
            if at <= cuts[-1]:
                continue
            handle.seek(at - 1)
            handle.readline()  # up to the newline at or after ``at - 1``: the next line starts at or after ``at``
            where = handle.tell()
            if cuts[-1] < where < total:
                cuts.append(where)
        cuts.append(total)
        parts, line, index = [], 1, 0
        for start, end in zip(cuts, cuts[1:]):
            parts.append(JsonlPart(start, end, line, index))
            if end < total:  # (the last part's lines are counted by nobody)
                lines, blank = _line_counts(handle, start, end)
                line, index = line + lines, index + lines - blank
    return parts


def _line_counts(handle, start: int, end: int) -> tuple[int, int]:
    """The lines between bytes ``start`` (a line's start) and ``end`` (a line's end), and how many are blank, read a
    block at a time (each completed to its line's end)."""
    lines = blank = 0
    handle.seek(start)
    at = start
    while at < end:
        block = handle.read(min(BLOCK, end - at))
        if not block:
            break
        if not block.endswith(b"\n") and at + len(block) < end:
            block += handle.readline()  # (``end`` is a line's end: the line ends within the part)
        at += len(block)
        lines += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
        blank += _blank_lines(block)
    return lines, blank


def _blank_lines(block: bytes) -> int:
    """Lines of ``block`` (whole lines) that hold only whitespace, their newline included, as ``index_jsonl`` skips
    them (``bytes.isspace``)."""
    starts = [0] if block[:1] and block[:1] in _SPACE else []
    starts += [m.end() for m in _MAY_BE_BLANK.finditer(block)]
    count = 0
    for start in starts:
        stop = block.find(b"\n", start)
        line = block[start:] if stop < 0 else block[start:stop + 1]
        if line and line.isspace():
            count += 1
    return count


def index_part(path: str | Path, part: JsonlPart, *, progress=None, should_stop=None) -> list[RowSummary] | None:
    """The index rows of ``part`` (``index_jsonl``'s rows there); ``progress(done_bytes, part.end)`` now and then;
    ``None`` where ``should_stop()`` said so."""
    return index_range(path, part.start, part.end, part.first_line, part.first_index, progress=progress,
                       should_stop=should_stop)


def joined_index(path: str | Path, rows: list[list[RowSummary]]) -> JsonlIndex:
    """The index of the whole file from its parts' rows, in order."""
    return JsonlIndex(Path(path), [row for part in rows for row in part])
