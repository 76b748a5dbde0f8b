"""The input layer every reader goes through: what a file may be, how big, how deep.

- Only regular files are read: a directory, device, FIFO or socket is refused by name before it is
  opened (opening a FIFO would block; reading ``/dev/zero`` would never end).
- Sizes are limited before reading and again after decompression (a gzip bomb is refused while it
  inflates, never held whole in memory).
- Decoded values are bounded: nesting depth, integer size (CPython's own 4,300-digit limit, turned into
  a clean error), and lone UTF-16 surrogates (``"\\ud800"`` in JSON decodes to a string no file can be
  written with) are refused with the field named.

Every refusal is an ``InputFileError`` naming the file (and the field or line where there is one).
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any, Iterator

from .errors import InputFileError

MAX_FILE_BYTES = 1 << 30        # a file on disk (JSON Lines are read a line at a time below this)
MAX_DOCUMENT_BYTES = 128 << 20  # one JSON document, one JSON Lines line
MAX_YAML_BYTES = 32 << 20       # YAML is slower and bigger in memory than JSON: a lower limit
MAX_INFLATED_BYTES = 64 << 20   # a compressed body once inflated
MAX_NESTING = 128               # arrays and objects inside each other (real tool schemas stay under 20)

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


_READ: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("files_read", default=None)


@contextlib.contextmanager
def tracking_reads() -> Iterator[set[str]]:
    """Collect the path of every file read through this layer inside the block (a run's inputs, so that
    its output is never written over one of them)."""
    seen: set[str] = set()
    token = _READ.set(seen)
    try:
        yield seen
    finally:
        _READ.reset(token)


def regular_file(path: str | Path) -> os.stat_result:
    """The file's status, or a clear refusal when it is missing or not a regular file."""
    name = str(path)
    if "\x00" in name:
        raise InputFileError(name.replace("\x00", "\\0"), "the path holds a NUL character")
    if not name:
        raise InputFileError("''", "an empty path names no file")
    try:
        status = os.stat(name)
    except FileNotFoundError:
        raise InputFileError(name, "no such file") from None
    except OSError as exc:
        raise InputFileError(name, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(status.st_mode):
        raise InputFileError(name, "is a directory, not a file")
    if not stat.S_ISREG(status.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(status.st_mode) else "a device" if stat.S_ISCHR(status.st_mode)
                or stat.S_ISBLK(status.st_mode) else "a socket" if stat.S_ISSOCK(status.st_mode) else "not a file")
        raise InputFileError(name, f"is {kind}, not a regular file")
    return status


def sized_file(path: str | Path, max_bytes: int = MAX_FILE_BYTES, *, track: bool = False) -> os.stat_result:
    """``regular_file``'s status, the file refused when over ``max_bytes``; ``track``: told to ``tracking_reads``
    (a file about to be read whole)."""
    status = regular_file(path)
    seen = _READ.get() if track else None
    if seen is not None:
        seen.add(str(path))
    if status.st_size > max_bytes:
        raise InputFileError(str(path), f"file is {status.st_size:,} bytes, over the {max_bytes:,}-byte limit")
    return status


def read_bytes(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, refused when over ``max_bytes`` (checked before and while reading)."""
    sized_file(path, max_bytes, track=True)
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # the file grew after it was measured
        raise InputFileError(str(path), f"file is over the {max_bytes:,}-byte limit")
    return data


def inflate(data: bytes, *, kind: str = "gzip", limit: int = MAX_INFLATED_BYTES) -> bytes:
    """Decompress gzip or deflate data, refusing (``ValueError`` with the reason) past ``limit`` bytes.

    Never holds more than ``limit + 1`` inflated bytes, so a bomb costs no more memory than the limit."""
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS, "raw": -zlib.MAX_WBITS}[kind]
    out = bytearray()
    pending = data
    while pending:
        engine = zlib.decompressobj(wbits)
        try:
            out += engine.decompress(pending, limit + 1 - len(out))
        except zlib.error as exc:
            raise ValueError(f"{kind}-compressed data cannot be decompressed: {exc}") from None
        if len(out) > limit or engine.unconsumed_tail:
            raise ValueError(f"{kind}-compressed data inflates past the {limit:,}-byte limit")
        if not engine.eof:
            raise ValueError(f"{kind}-compressed data ends early (truncated)")
        pending = engine.unused_data if kind == "gzip" else b""  # gzip may hold several members
    return bytes(out)


def decode_json(text: str) -> Any:
    """``json.loads`` with the limits above; ``ValueError`` (with the reason) for what it refuses.

    ``json.JSONDecodeError`` passes through unchanged so callers keep reporting its line and column."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"one JSON document of {len(text):,} characters, over the {MAX_DOCUMENT_BYTES:,} limit")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError(f"JSON nested more than {MAX_NESTING} levels deep") from None
    except ValueError as exc:  # CPython's integer string limit: "Exceeds the limit (4300 digits) ..."
        raise ValueError(f"a number too long to read ({str(exc).split(';')[0]})") from None
    check_value(value, surrogates=_SURROGATE_ESCAPE.search(text) is not None,
                deep=text.count("[") + text.count("{") > MAX_NESTING)
    return value


def check_value(value: Any, *, surrogates: bool = True, deep: bool = True, max_nodes: int | None = None) -> None:
    """Refuse (``ValueError`` naming the field) nesting past ``MAX_NESTING`` and lone surrogates, and
    (with ``max_nodes``) a value that expands to more nodes than that: YAML aliases make a small text a
    graph whose walk never ends (the "billion laughs").

    ``surrogates``/``deep`` False skip a check the caller knows cannot fail (cheap pre-checks on the text)."""
    if not (surrogates or deep) or not isinstance(value, (dict, list)):
        if surrogates and isinstance(value, str) and _LONE_SURROGATE.search(value):
            raise ValueError("a string holds a lone UTF-16 surrogate, which is not text")
        return
    stack: list[tuple[Any, tuple, int]] = [(value, (), 0)]
    walked = 0
    while stack:
        node, path, depth = stack.pop()
        walked += len(node)
        if max_nodes is not None and walked > max_nodes:
            raise ValueError(f"the document expands to more than {max_nodes:,} values (a YAML alias bomb?)")
        if depth > MAX_NESTING:
            raise ValueError(f"{_path(path)}: nested more than {MAX_NESTING} levels deep")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if surrogates and isinstance(key, str) and _LONE_SURROGATE.search(key):
                raise ValueError(f"{_path(path + (key,))}: a key holds a lone UTF-16 surrogate, which is not text")
            if isinstance(child, (dict, list)):
                stack.append((child, path + (key,), depth + 1))
            elif surrogates and isinstance(child, str) and _LONE_SURROGATE.search(child):
                raise ValueError(f"{_path(path + (key,))}: a lone UTF-16 surrogate, which is not text")


def _path(parts: tuple) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown = part.encode("utf-8", "backslashreplace").decode("utf-8")
            text += f".{shown}" if text else shown
    return text or "the document"
