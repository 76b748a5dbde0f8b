"""Writing a command's output file: never over an input of the run, atomically, nothing left on failure.

An input is any file the run reads: the request, a RAG chunk index, a ``--windows`` file, a plan's
summary store, the files of an ``hf:`` tokenizer directory (a path inside an input directory is refused
too). The text goes to a uniquely named temporary beside the target (so it cannot collide with a file
of the person's, such as an input named ``OUT.tmp``) and is moved over the target only once it is
complete; any failure, an interrupt included, removes the temporary.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from .errors import RequestError


def check_output(output: str, inputs: Iterable[str | Path | None]) -> Path:
    """The target path, or a ``RequestError`` naming why it may not be written."""
    if output == "":
        raise RequestError([("--output", "an empty path names no file")], source="command line")
    if "\x00" in output:
        raise RequestError([("--output", "the path holds a NUL character")], source="command line")
    target = Path(output)
    if target.is_dir():
        raise RequestError([("--output", "is a directory; name a file")], source=output)
    resolved = _resolved(target)
    for given in inputs:
        if given is None or str(given) == "":
            continue
        source = Path(given)
        if not source.exists():
            continue
        if source.is_dir():
            inside = _resolved(source)
            if resolved == inside or inside in resolved.parents:
                raise RequestError([("--output", f"is inside {given}, an input directory of this run")], source=output)
        elif target.exists() and os.path.samefile(target, source) or resolved == _resolved(source):
            raise RequestError([("--output", f"refusing to overwrite {given}, an input of this run")], source=output)
    return target


def write_output(text: str, output: str, inputs: Iterable[str | Path | None]) -> None:
    target = check_output(output, inputs)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RequestError([("--output", f"the output holds text that is not UTF-8 ({exc.reason})")],
                           source=output) from None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                             dir=str(target.parent if str(target.parent) else "."))
    except OSError as exc:
        raise RequestError([("--output", f"cannot write: {exc.strerror or exc}")], source=output) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():  # keep the person's permissions on a file they asked to replace
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        else:
            os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise RequestError([("--output", f"cannot write: {exc.strerror or exc}")], source=output) from None
    except BaseException:
        _remove(temporary)
        raise


def printable(text: str) -> str:
    """``text`` with control characters (an ANSI escape, a NUL, a carriage return) and lone surrogates
    shown as escapes, so an error line that quotes the input cannot act on the terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in " " else ch.encode("unicode_escape", "backslashreplace")
                   .decode("ascii") for ch in text)


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
