"""Provider request bodies and trace exports as rows of the requests list (Qt-free).

A file that is not one of our own (request, result, plan, RAG windows) is read by
``core.formats``: the format is told by content (``core.formats.detect``), each model call becomes
one row, counted with the chosen counter through ``core.formats.count_imported`` (there is no
assembly trace in a provider body, so core makes one) and audited by ``core.audit``. "Re-assemble"
turns the imported request into a core request (``core.formats.to_core_request``) and assembles it.

Every figure and rule is core's; this module only decides which context limit and output reserve
the core is asked to use: the limit the person set for the model (remembered per model name), and
the recorded ``max_tokens`` or, when the file records none, ``DEFAULT_OUTPUT_RESERVE``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import core
from core.formats import FORMATS

from .building import audit_result
from .figures import figure, signed
from .row import Row


# The output reserve when the file records no max_tokens: what a re-assembly needs (a core request
# always reserves room for the answer), used for the count too so the bar and a re-assembly agree.
DEFAULT_OUTPUT_RESERVE = 1024
UNNAMED_MODEL = "(unnamed model)"
# ``detect`` names these for files that are ours (or nothing core imports): our loader reads them and
# names the problem in its own terms.
OWN_FORMATS = frozenset({"context-inspector", "unknown"})
SNIFF_BYTES = 4096


def format_title(name: str) -> str:
    """What a format name stands for (``otlp-json`` -> "OTLP JSON trace export")."""
    return FORMATS.get(name.split("/", 1)[0], name)


def _first_jsonl_value(path: str) -> Any:
    """The first line of a JSON Lines file, decoded; ``None`` when it is not a JSON value."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
    except OSError:
        return None
    try:
        return json.loads(first.removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return None


def _mentions_our_format(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return b'"context-inspector/' in handle.read(SNIFF_BYTES)
    except OSError:
        return False


def provider_format(path: str, *, jsonl: bool) -> core.FormatInfo | None:
    """The provider format of ``path`` by content, or ``None`` when our own loader should read it
    (our request/result/plan/RAG files, and whatever core does not import: the loader names why).

    A JSON Lines file is told by its first line first, so a large JSONL of our own is never decoded
    whole just to be told apart. Raises ``core.FormatError`` when the file looks like a provider
    format but cannot be decoded (a truncated OTLP export): core's message names format and place."""
    first_format = None
    if jsonl:
        first = _first_jsonl_value(path)
        if first is None:
            return None
        first_format = core.detect(first).name
        if first_format == "context-inspector":
            return None
    try:
        info = core.detect(path)
    except core.FormatError as exc:
        if jsonl:  # a JSON Lines file is a provider's when its first line is
            provider = first_format not in OWN_FORMATS
        else:  # core guesses the format of a broken file from its key names; ours say what they are
            provider = exc.format_name in FORMATS and exc.format_name not in OWN_FORMATS \
                and not _mentions_our_format(path)
        if provider:
            raise
        return None
    except core.InputFileError:
        return None  # unreadable: our loader says so in its own words
    return None if info.name in OWN_FORMATS else info


def model_key(request: core.ImportedRequest) -> str:
    """The name a context limit is remembered under: the recorded model."""
    return request.recorded.model or UNNAMED_MODEL


def output_reserve(request: core.ImportedRequest) -> int | None:
    """``max_new_tokens`` to count with: ``None`` lets core take the recorded ``max_tokens``."""
    return None if request.recorded.max_output_tokens is not None else DEFAULT_OUTPUT_RESERVE


@dataclass(frozen=True)
class ImportedSource:
    """What a provider row keeps of its file: the format found and the file's own warnings."""

    info: core.FormatInfo
    file_notes: tuple[str, ...] = ()  # warnings about the file, not about one request


def imported_source(imported: core.ImportedFile) -> ImportedSource:
    """The format of ``imported`` and its warnings that are not any one request's (each request keeps
    its own, shown with it)."""
    per_request = {str(w) for r in imported.requests for w in r.warnings}
    return ImportedSource(imported.format, tuple(str(w) for w in imported.warnings if str(w) not in per_request))


def failed_row(failure: core.FailedCall, index: int, path: str, source: ImportedSource) -> Row:
    """A model call of the file that could not be read: a row of its own, with its place and reason."""
    return Row(source=path, index=index, line=None, kind="invalid", label=failure.label, entry_kind="imported",
               error=f"not read: {failure.place + ': ' if failure.place else ''}{failure.reason}", import_source=source)


def imported_row(request: core.ImportedRequest, index: int, path: str, source: ImportedSource,
                 counter: core.TokenCounter | None, limits: dict[str, int], counter_error: str | None = None, *,
                 auto: core.AutoCounter | None = None) -> Row:
    """One model call as a row: counted (kind "imported") or not (kind "uncounted", ``error`` says why).
    With ``auto`` (the Counter picker's "auto"), counted with the counter the model registry names for the
    request's model; where that cannot be built here, with ``counter``, and the row's notes say why."""
    limit = limits.get(model_key(request))
    base = dict(source=path, index=index, line=None, label=request.label, entry_kind="imported",
                imported=request, import_source=source, counted_under=limit)
    picked: list[str] = []
    if auto is not None:
        try:
            counter, why = auto.pick(request.recorded.model)
        except core.CounterError as exc:
            why = f"auto: {exc}"
        if why:
            picked.append(why)
    if counter is None:
        return Row(kind="uncounted", error=f"{request.label}: not counted: no token counter "
                                           f"({counter_error or 'none chosen'})", **base)
    try:
        result = core.count_imported(request, counter, context_limit=limit, max_new_tokens=output_reserve(request))
    except core.CountRefused as exc:
        return Row(kind="uncounted", error=str(exc), counter_name=counter.name, **base)
    except core.RequestError as exc:  # the limit set for the model leaves no room for the output reserve
        return Row(kind="uncounted", error=f"{request.label}: not counted under the context limit set for "
                                           f"{model_key(request)}: {exc}", counter_name=counter.name, **base)
    except core.ContextInspectorError as exc:  # the counter failing in its own way: one line, on this row
        return Row(kind="uncounted", error=f"{request.label}: not counted: {exc}", counter_name=counter.name, **base)
    notes: list[str] = list(picked)
    note = (result.model_extra or {}).get("authority_note")
    if note:
        notes.append(note)
    findings = audit_result(result, counter, notes)
    return Row(kind="imported", result=result, findings=findings, counter_name=counter.name, notes=notes, **base)


def recount(row: Row, counter: core.TokenCounter, limits: dict[str, int], *,
            auto: core.AutoCounter | None = None) -> Row:
    """``row`` counted again (a new context limit for its model, or another counter)."""
    assert row.imported is not None
    return imported_row(row.imported, row.index, row.source, row.import_source, counter, limits, auto=auto)


def counter_text(row: Row) -> str:
    """The Counter column: which counter counted the row, and "estimate" in words where it is one."""
    identity = row.result.counter if row.result is not None else None
    if identity is None:
        return row.counter_name or ""
    return f"{identity.name} (estimate)" if identity.kind == "estimate" else identity.name


def needs_recount(row: Row, limits: dict[str, int]) -> bool:
    """The row was counted (or tried) under another limit than the one now set for its model."""
    return row.imported is not None and row.counted_under != limits.get(model_key(row.imported))


# ---- re-assembly


class ReassemblyRefused(core.ContextInspectorError):
    """The imported request cannot become a core request (core's ``RequestError`` names what)."""


def reassembly_budget(row: Row) -> tuple[int, int]:
    """(context limit, max_new_tokens) a re-assembly uses: the budget the imported row was counted
    under, so the re-assembled bar is comparable with the imported one."""
    assert row.result is not None
    return row.result.context_limit, row.result.max_new_tokens


def reassemble(row: Row, counter: core.TokenCounter) -> Row:
    """The imported ``row`` as a core request assembled by the core assembler: a new row.

    Raises ``ReassemblyRefused`` naming what cannot be represented."""
    request = row.imported
    if request is None or row.result is None:
        raise ReassemblyRefused(f"{row.label}: only a counted provider request can be re-assembled")
    limit, max_new = reassembly_budget(row)
    try:
        core_request = core.to_core_request(request, context_limit=limit, max_new_tokens=max_new)
    except core.RequestError as exc:
        raise ReassemblyRefused(f"Cannot re-assemble {row.label}: {exc}") from None
    label = f"{row.label} (re-assembled)"
    base = dict(source=row.source, index=row.index, line=row.line, label=label, request=core_request,
                counter_name=counter.name, entry_kind="request", derived_from=row, import_source=row.import_source)
    note = (f"Re-assembled by the core assembler from the imported request under its context limit {limit} "
            f"and output reserve {max_new}; change the limit for {model_key(request)} and re-assemble again, "
            "or edit the limits in the replay panel.")
    try:
        result = core.assemble(core_request, counter)
    except core.RequiredContextTooLarge as exc:  # a row of its own: what the required content needs
        return Row(kind="rejected", rejection=exc.record(), notes=[note], **base)
    except core.ContextInspectorError as exc:  # the counter's template refuses the assembled request
        raise ReassemblyRefused(f"Cannot re-assemble {row.label}: the core assembler could not assemble it "
                                f"with {counter.name}: {exc}") from None
    notes = [note]
    return Row(kind="assembled", result=result, findings=audit_result(result, counter, notes), notes=notes, **base)


# ---- what the panes say about an imported row


def drift_text(row: Row) -> str:
    """"ours 150 · provider 240 · drift −90 (−37.5%)", or why there is no drift."""
    result = row.result
    if result is None:
        return ""
    extra = result.model_extra or {}
    theirs, drift = extra.get("provider_input_tokens"), extra.get("count_drift")
    if theirs is None or drift is None:
        return f"ours {result.input_tokens} input tokens · the file records no provider input-token figure"
    share = f" ({100.0 * drift / theirs:+.1f}%)" if theirs else ""
    return f"ours {result.input_tokens} · provider {theirs} · drift {drift:+d} tokens{share}"


def imported_fields(row: Row) -> list[tuple[str, str]]:
    """The Item tab's facts about an imported request: format, model, trace and span, the counts."""
    request = row.imported
    assert request is not None
    recorded = request.recorded
    extra = (row.result.model_extra or {}) if row.result is not None else {}
    fields: list[tuple[str, str]] = []
    if row.import_source is not None:
        fields.append(("File format", f"{format_title(row.import_source.info.name)} ({row.import_source.info.name})"))
    fields.append(("Read as", recorded.format))
    for key, value in (("Model", recorded.model), ("Provider", recorded.provider), ("Span name", recorded.name),
                       ("Trace id", recorded.trace_id), ("Span id", recorded.span_id),
                       ("Place in the file", recorded.source_place)):
        if value:
            fields.append((key, str(value)))
    if row.result is not None:
        r = row.result
        basis = extra.get("count_basis", "as recorded")
        fields.append(("Our count", f"{figure(r.input_tokens)} input tokens ({basis})"))
    if recorded.input_tokens is not None:
        out = f", {figure(recorded.output_tokens)} output" if recorded.output_tokens is not None else ""
        fields.append(("Provider reported", f"{figure(recorded.input_tokens)} input tokens{out}"))
        if extra.get("count_drift") is not None:
            drift = extra["count_drift"]
            share = f", {100.0 * drift / recorded.input_tokens:+.1f}%" if recorded.input_tokens else ""
            fields.append(("Drift (ours − theirs)", f"{signed(drift)} tokens{share}"))
    else:
        fields.append(("Provider reported", "not recorded in the file"))
    if recorded.finish_reason:
        fields.append(("Finish reason", recorded.finish_reason))
    if row.result is not None:
        source = extra.get("context_limit_source", "")
        fields.append(("Context limit", f"{figure(row.result.context_limit)} ({source})"))
        reserve_source = extra.get("max_new_tokens_source", "")
        if reserve_source == "given" and output_reserve(request) == DEFAULT_OUTPUT_RESERVE:
            reserve_source = f"not recorded in the file: the inspector's default of {DEFAULT_OUTPUT_RESERVE}"
        fields.append(("Output reserve", f"{row.result.max_new_tokens} ({reserve_source})"))
    return fields


def imported_notes(row: Row) -> list[tuple[str, str]]:
    """Text blocks for the Item tab: what could not be mapped (this request's and the file's), how the
    count was adapted, why the request was not counted."""
    blocks: list[tuple[str, str]] = []
    request = row.imported
    assert request is not None
    if row.kind == "uncounted":
        blocks.append(("Not counted", row.error or "the counter could not count this request"))
    if request.warnings:
        blocks.append((f"Import warnings for this request ({len(request.warnings)})",
                       "\n".join(f"• {w}" for w in request.warnings)))
    if row.import_source is not None and row.import_source.file_notes:
        notes = row.import_source.file_notes
        blocks.append((f"Import warnings for the file ({len(notes)})", "\n".join(f"• {n}" for n in notes)))
    adaptations = ((row.result.model_extra or {}).get("count_adaptations") if row.result is not None else None) or []
    if adaptations:
        blocks.append(("How the count was adapted", "\n".join(f"• {a}" for a in adaptations)))
    return blocks
