"""What a worker process does with a large JSONL's pending rows (Qt-free, spawn-safe): builds its own
counter once, reads, validates, assembles or audits each row from its index summary and computes its
list values, and sends the rows back pickled by itself, so nothing but plain data crosses the process
boundary: an error becomes an unreadable row or a message, never an exception object (on Python 3.11
an exception that cannot be pickled back deadlocks ``concurrent.futures``).
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import threading
import time
from typing import Any

import core

from .building import invalid_row, read_line, read_summary
from .listing import listing

log = logging.getLogger("inspector")

_counter: core.TokenCounter | None = None
_counter_error: str | None = None


def start_worker(spec: str) -> None:
    """The pool's initializer: the counter this worker reads every row with (or why there is none). The
    worker ends itself when the window's process is gone (``exit_with_parent``)."""
    global _counter, _counter_error
    exit_with_parent()
    try:
        _counter = core.make_counter(spec)
    except core.ContextInspectorError as exc:
        _counter, _counter_error = None, str(exc)
    except Exception as exc:  # never a traceback to the person
        _counter, _counter_error = None, f"{type(exc).__name__}: {exc}"


def worker_ready(pause: float) -> int:
    """This worker's process id, after ``pause`` seconds (``readpool.warm_pool``: a worker answers once its
    initializer has built its counter; the pause lets the other workers take the other jobs)."""
    time.sleep(pause)
    return os.getpid()


def exit_with_parent() -> None:
    """A thread that ends this worker process as soon as the process that started it is gone, however it ended
    (killed with SIGKILL, its pool never shut down): it waits on the parent's sentinel, a pipe that closes
    with the parent, so it costs nothing meanwhile. Without it a killed window's workers would sit waiting
    for jobs forever, each holding a counter's memory."""
    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing (the benchmark calls the initializer in its own process)
        return

    def watch() -> None:
        parent.join()  # returns when the parent's end of the pipe closes: the parent has ended
        os._exit(0)  # no clean-up to wait for: nothing of this process outlives it

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def replay_outcome(target: bytes, generation: int, edits) -> bytes | None:
    """``ReplayTarget.outcome`` here, with this worker's counter (None without one), and that counter's
    identity so the window can check it is the one it would have used."""
    return _answer(lambda: pickle.loads(target).outcome(generation, edits, _counter))


def what_if_points(target: bytes, edits) -> bytes | None:
    """``ReplayTarget.what_if`` here (a superseded sweep runs to its end; the window ignores it)."""
    return _answer(lambda: pickle.loads(target).what_if(edits, _counter))


def rendered_view(payload: bytes) -> bytes | None:
    """``core.render_view`` of a pickled (result, findings) here (the Request tab's text and spans)."""
    return _answer(lambda: _render(*pickle.loads(payload)))


def _render(result: core.AssemblyResult, findings: list[core.Finding]) -> core.RenderedView:
    return core.render_view(result, _counter, findings=findings)


def _answer(work) -> bytes | None:
    """(counter identity, value) pickled; None when this worker has no counter or anything goes wrong
    (the window then does the work itself and reports what it finds: no exception crosses over)."""
    if _counter is None:
        return None
    try:
        return pickle.dumps((_counter.identity.model_dump(mode="json"), work()), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        log.exception("a replay in a worker process")
        return None


def index_part_rows(source: str, part: core.JsonlPart) -> bytes | None:
    """``core.index_part`` of ``part`` of ``source`` here, pickled; None where it cannot be read here (the window
    then indexes that part itself, and says why where it cannot either)."""
    try:
        return pickle.dumps(core.index_part(source, part), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - nothing crosses back but plain data
        log.exception("indexing %s from byte %s", source, part.start)
        return None


def read_rows(source: str, summaries: list[core.RowSummary], demo: bool) -> bytes:
    """The full rows of ``summaries``, pickled (a row that cannot be pickled goes back as unreadable). A
    recorded result goes back as its list values, its findings and its line's bytes (``Row.from_line``): the
    window validates it again when it is shown, which costs less than pickling the objects across and back."""
    rows = []
    lines = _lines(source, summaries)
    for summary in summaries:
        try:
            raw = lines.get(summary.index)
            if raw is None:  # the file could not be read here: the reference path names the problem
                row = read_summary(source, summary, _counter, _counter_error, demo=demo)
            else:
                row = read_line(source, summary, raw, _counter, _counter_error, demo=demo)
        except Exception as exc:  # a bug must not stop the other rows
            log.exception("reading %s:%s", source, summary.line)
            row = invalid_row(source, summary.index, summary.line,
                              f"{source}:{summary.line}: cannot be read ({type(exc).__name__}: {exc})", None)
        try:
            listing(row)
        except Exception:  # the list computes it again when it shows the row
            row.__dict__.pop("_listing", None)
        else:
            if raw is not None and row.kind == "result" and row.entry_kind == "result" and "_listing" in row.__dict__:
                row.from_line(raw)
        rows.append(row)
    try:
        return pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return pickle.dumps([_picklable(row) for row in rows], protocol=pickle.HIGHEST_PROTOCOL)


def _lines(source: str, summaries: list[core.RowSummary]) -> dict[int, bytes]:
    """Each summary's line, by index, read through one open file (none where it cannot be read)."""
    lines: dict[int, bytes] = {}
    try:
        with open(source, "rb") as handle:
            for summary in summaries:
                if summary.kind != "error":
                    handle.seek(summary.offset)
                    lines[summary.index] = handle.read(summary.length)
    except OSError:
        return {}
    return lines


def _picklable(row: Any):
    try:
        pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)
        return row
    except Exception as exc:
        return invalid_row(row.source, row.index, row.line,
                           f"{row.where}: read, but it cannot be passed to the window ({type(exc).__name__}: {exc})",
                           None)
