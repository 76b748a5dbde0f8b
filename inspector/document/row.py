"""One row of the requests list: a request or recorded result of an open file, with its findings or error.

Qt-free. Every figure and rule comes from ``core``; a row only holds what was loaded and says it in words.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import core


log = logging.getLogger("inspector")

_basename = lru_cache(maxsize=64)(os.path.basename)  # a file's rows share one source: named once


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def rejection_text(record: dict[str, Any]) -> str:
    need = _int(record.get("required_input_tokens"))
    have = _int(record.get("available_input_tokens"))
    if need is None or have is None:
        message = record.get("message")
        return f"rejected: {message}" if isinstance(message, str) and message else \
            "rejected: the required context does not fit"
    return (f"rejected: the required context needs {need} input tokens but only {have} are available; "
            f"short by {need - have}")


class _Unread:
    """What a row read in a worker process holds for its result and request until they are asked for: the
    worker sends the window the list values and the audit's findings, and the line's bytes, not the validated
    objects (pickling them across and back cost more than validating them again from the bytes)."""

    def __reduce__(self) -> str:
        return "UNREAD"  # one object in every process

    def __repr__(self) -> str:
        return "UNREAD"


UNREAD = _Unread()
_reading = threading.Lock()  # a row's line validated by one thread at a time (the GUI thread or a worker thread)


class _FromLine:
    """A field of a read row validated from its line's bytes the first time it is asked for (``Row.from_line``);
    otherwise an ordinary attribute."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, row, owner=None):
        if row is None:
            return None  # the field's default (dataclasses asks the class)
        value = row.__dict__.get(self.slot)
        if value is UNREAD:
            row._read_line()
            value = row.__dict__.get(self.slot)
        return value

    def __set__(self, row, value) -> None:
        row.__dict__[self.slot] = value


@dataclass(eq=False)
class Row:
    """One line of the requests list.

    ``kind``: "assembled" (a request assembled here with ``counter_name``), "result" (a recorded
    result, shown as recorded), "rejected" (required content does not fit; ``rejection`` is core's
    record), "invalid" (the entry could not be read; ``error`` says why, ``raw`` is what was read),
    "pending" (a JSONL line listed from its ``summary`` and read later through ``lazy``),
    "imported" (a provider's model call counted here through ``core.formats.count_imported``),
    "uncounted" (a provider's model call the counter could not count; ``error`` says why) or
    "replayed" (a result assembled again under edits; never in the requests list).
    ``entry_kind`` is what the file held: "request", "rag", "plan", "result", "rejected" or "imported".
    A row re-assembled from an imported one names it in ``derived_from``.
    """

    source: str
    index: int
    line: int | None
    kind: str
    label: str
    request: core.Request | None = _FromLine()  # type: ignore[assignment]
    result: core.AssemblyResult | None = _FromLine()  # type: ignore[assignment]
    findings: list[core.Finding] = field(default_factory=list)
    rejection: dict[str, Any] | None = None
    error: str | None = None
    raw: Any = None
    counter_name: str | None = None
    notes: list[str] = field(default_factory=list)
    demo: bool = False
    entry_kind: str | None = None
    plan_request: Any = None  # core.PlanRequest of a plan entry
    rag: Any = None  # core.LoadedRag of a RAG windows entry (its receipts go on every assembly)
    summary_line: Any = None  # core.RowSummary while the row is pending
    lazy: Any = None  # (core.JsonlIndex, index) to read the entry from
    imported: Any = None  # core.ImportedRequest of a provider's model call
    import_source: Any = None  # providers.ImportedSource: the file's format and its own warnings
    derived_from: "Row | None" = None  # the imported row a re-assembled row was made from
    counted_under: int | None = None  # the context limit an imported row was counted under (None: core's assumed)

    def from_line(self, raw: bytes) -> None:
        """A recorded result row whose result and request are validated again, when first asked for, from
        ``raw``, the bytes of its line the worker read it from (``core.entry_from_line``: the same bytes and the
        same validation give the same objects)."""
        self.__dict__.update(_result=UNREAD, _request=UNREAD, _line=raw)

    def _read_line(self) -> None:
        with _reading:
            raw = self.__dict__.get("_line")
            if raw is None:  # another thread read it meanwhile
                return
            summary = core.RowSummary(index=self.index, line=self.line or 0, offset=0, length=len(raw),
                                      kind="result", label=self.label)
            try:
                entry = core.entry_from_line(self.source, summary, raw)
                if entry.result is None:
                    raise core.InputFileError(self.source, "not a recorded result", line=self.line)
            except Exception as exc:  # never: the worker validated these bytes with the same code
                log.exception("reading %s again", self.where)
                self.__dict__.update(_result=None, _request=None, kind="invalid",
                                     error=f"{self.where}: cannot be read again ({type(exc).__name__}: {exc})")
                self.__dict__.pop("_listing", None)
            else:
                self.__dict__.update(_result=entry.result, _request=entry.request)
            del self.__dict__["_line"]

    def absorb(self, other: "Row") -> None:
        """Take everything ``other`` holds (a pending row once read): the list keeps this object."""
        self.__dict__.pop("_listing", None)  # what the list showed of it (document.listing) is stale
        self.__dict__.update(other.__dict__)

    @property
    def pending(self) -> bool:
        return self.kind == "pending"

    @property
    def where(self) -> str:
        if self.line is not None:
            return f"{self.source}:{self.line}"
        return f"{self.source}[{self.index}]" if self.index else self.source

    @property
    def file_name(self) -> str:
        return _basename(self.source)  # Path(...).name, without building a Path for every list cell

    @property
    def strategy(self) -> str:
        if self.result is not None:
            return self.result.strategy
        if self.summary_line is not None:
            return self.summary_line.strategy or self.summary_line.kind
        if self.imported is not None:
            return "imported"
        return {"rejected": "rejected", "invalid": "unreadable"}.get(self.kind, self.kind)

    @property
    def format_name(self) -> str:
        """The provider format a model call was read as (``otlp-json/gen_ai``); empty for our own files."""
        if self.imported is not None:
            return self.imported.recorded.format
        if self.derived_from is not None:
            return self.derived_from.format_name
        return ""

    @property
    def count_drift(self) -> int | None:
        """Our count minus the provider's reported input tokens (core's ``count_drift``), where known."""
        if self.result is None or self.imported is None:
            return None
        drift = (self.result.model_extra or {}).get("count_drift")
        return drift if isinstance(drift, int) else None

    @property
    def input_tokens(self) -> int | None:
        if self.result is not None:
            return self.result.input_tokens
        if self.rejection is not None:
            return _int(self.rejection.get("required_input_tokens"))
        if self.summary_line is not None:
            return self.summary_line.input_tokens
        return None

    @property
    def allowance(self) -> int | None:
        if self.result is not None:
            return self.result.input_budget
        if self.rejection is not None:
            return _int(self.rejection.get("available_input_tokens"))
        if self.summary_line is not None:
            return self.summary_line.input_budget
        return None

    @property
    def short_by(self) -> int | None:
        if self.kind != "rejected":
            return None
        need, have = self.input_tokens, self.allowance
        return need - have if need is not None and have is not None else None

    def items(self) -> list[core.TraceEntry]:
        """Trace entries that are items (the template overhead is a cost, not an item)."""
        if self.result is None:
            return []
        return [e for e in self.result.trace if e.section != "template"]

    @property
    def kept_count(self) -> int:
        return sum(1 for e in self.items() if e.decision not in core.NOT_SENT)

    @property
    def dropped_count(self) -> int:
        if self.summary_line is not None and self.result is None:
            return self.summary_line.dropped or 0
        return sum(1 for e in self.items() if e.decision == "dropped")

    @property
    def error_count(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warning_count(self) -> int:
        return sum(1 for f in self.findings if f.severity != "error")

    @property
    def status(self) -> str:
        """"invalid", "rejected", "pending", "error", "warning" or "ok": what the audit column shows."""
        if self.kind in ("invalid", "rejected", "pending"):
            return self.kind
        if self.kind == "uncounted":
            return "invalid"
        if self.error_count:
            return "error"
        if self.warning_count:
            return "warning"
        return "ok"

    def status_text(self) -> str:
        if self.kind == "invalid":
            return "unreadable"
        if self.kind == "uncounted":
            return "not counted"
        if self.kind == "pending":
            return "not read yet"
        if self.kind == "rejected":
            short = self.short_by
            return f"rejected: short by {short} tokens" if short is not None else "rejected"
        if not self.findings:
            return "no findings"
        parts = []
        if self.error_count:
            parts.append(f"{self.error_count} error{'s' if self.error_count != 1 else ''}")
        if self.warning_count:
            parts.append(f"{self.warning_count} warning{'s' if self.warning_count != 1 else ''}")
        return ", ".join(parts)

    def summary(self) -> str:
        """One line for tooltips and the log."""
        if self.kind == "invalid":
            return self.error or "unreadable entry"
        if self.kind == "uncounted":
            return self.error or "not counted"
        if self.kind == "rejected":
            return rejection_text(self.rejection or {})
        if self.kind == "pending":
            return f"{self.label}: listed from the file, not read yet (it is read when selected)"
        assert self.result is not None
        r = self.result
        return (f"{self.label} ({r.strategy}): {r.input_tokens} of {r.input_budget} input tokens, "
                f"{self.kept_count} items sent, {self.dropped_count} dropped; {self.status_text()}")

    def display_json(self) -> str:
        """The raw record, pretty-printed, for the JSON tab."""
        if self.result is not None:
            return self.result.to_json()
        if self.rejection is not None:
            return json.dumps(self.rejection, indent=2, ensure_ascii=False) + "\n"
        if self.imported is not None:  # not counted: the request as the importer read it
            request = self.imported
            data = {"label": request.label, "format": request.recorded.format, "model": request.recorded.model,
                    "messages": [m.to_json() for m in request.messages],
                    "tools": [t.model_dump(mode="json") for t in request.tools],
                    "warnings": [str(w) for w in request.warnings]}
            return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        if self.raw is not None:
            try:
                return json.dumps(self.raw, indent=2, ensure_ascii=False) + "\n"
            except (TypeError, ValueError):
                return repr(self.raw)
        return ""
