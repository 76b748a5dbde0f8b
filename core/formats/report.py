"""What ``context-assembler count FILE`` prints: for each request of an imported file, the format
found, each message's marginal tokens, the total, the audit's findings, and the provider's own
input-token figure with the drift (ours - theirs) where the file records it.

A request the counter cannot count (``CountRefused``) or a budget that leaves it no room is
reported under that request; the file itself was read, so the command still succeeds."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..audit import Finding, audit
from ..counting import TokenCounter
from ..counters.auto import AutoCounter, resolve
from ..errors import CounterError, RequestError, TemplateRefused
from ..result import AssemblyResult
from .count import count_imported
from .model import ImportedFile, ImportedRequest


@dataclass
class RequestCount:
    request: ImportedRequest
    result: AssemblyResult | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None


@dataclass
class FileCount:
    imported: ImportedFile
    counter_name: str
    requests: list[RequestCount]


def count_file(imported: ImportedFile, counter: "TokenCounter | AutoCounter", *,
               context_limit: int | None = None) -> FileCount:
    """Count every request; with an ``AutoCounter`` each request gets the counter its model calls for."""
    counted = []
    for request in imported.requests:
        try:
            chosen, fallback = resolve(counter, request.recorded.model)
            result = count_imported(request, chosen, context_limit=context_limit)
        except (TemplateRefused, RequestError, CounterError) as exc:
            counted.append(RequestCount(request, error=str(exc)))
            continue
        if fallback:
            result = result.model_copy(update={"counter_fallback": fallback})
        counted.append(RequestCount(request, result, audit(result, chosen)))
    return FileCount(imported, counter.name, counted)


def _where(indices: list[int]) -> str:
    if not indices:
        return "-"
    return str(indices[0]) if len(indices) == 1 else f"{indices[0]}-{indices[-1]}"


def _roles(request: ImportedRequest, indices: list[int], section: str) -> str:
    if not indices:
        return section
    roles = sorted({request.messages[i].role for i in indices}, key=["system", "user", "assistant", "tool"].index)
    return "+".join(roles)


def report_text(report: FileCount) -> str:
    imported = report.imported
    lines = [f"{imported.path}: {imported.format.name}: {imported.format.detail}",
             f"counter: {report.counter_name}; {len(imported.requests)} request(s)"]
    lines += [f"warning: {w}" for w in imported.warnings]
    lines += [f"not read: {f}" for f in imported.failed]
    if not imported.requests:
        lines.append("no model-call requests in this file")
    for n, rc in enumerate(report.requests, start=1):
        request, recorded = rc.request, rc.request.recorded
        lines.append("")
        lines.append(f"[{n}/{len(report.requests)}] {request.label}")
        about = [f"format {recorded.format}"]
        about += [f"{k} {v}" for k, v in (("model", recorded.model), ("provider", recorded.provider),
                                          ("trace", recorded.trace_id), ("span", recorded.span_id)) if v]
        lines.append("  " + "; ".join(about))
        if rc.error is not None:
            lines.append(f"  not counted: {rc.error}")
            continue
        result = rc.result
        assert result is not None
        lines.append(f"  {'msg':>5}  {'role':<15} {'section':<15} {'tokens':>7}  item: how")
        for e in result.trace:
            lines.append(f"  {_where(e.message_indices):>5}  {_roles(request, e.message_indices, e.section):<15} "
                         f"{e.section:<15} {e.tokens:>7}  {e.id}: {e.reason}")
        extra = result.model_extra or {}
        counted_with = result.counter.name if result.counter is not None else report.counter_name
        lines.append(f"  total: {result.input_tokens} input tokens ({counted_with}, {extra.get('count_basis')})")
        if extra.get("counter_fallback"):
            lines.append(f"  counter: {extra['counter_fallback']}; counted with {counted_with}")
        if extra.get("count_is_estimate"):
            lines.append(f"  estimate: {extra.get('authority_note')}")
        if extra.get("authoritative_source") == "provider":  # the figure to go by, and the bar's
            lines.append(f"  input: {extra['authoritative_input_tokens']} tokens, the provider's recorded figure "
                         f"(the one to go by; {result.input_budget - extra['authoritative_input_tokens']} of the "
                         f"{result.input_budget}-token allowance left); ours above is an estimate")
        lines.append(f"  context limit: {result.context_limit} ({extra.get('context_limit_source')})")
        lines += [f"  adapted: {note}" for note in extra.get("count_adaptations") or []]
        if recorded.input_tokens is not None:
            drift = result.input_tokens - recorded.input_tokens
            lines.append(f"  provider reported: {recorded.input_tokens} input tokens; drift {drift:+d} (ours - theirs)"
                         + (f"; {recorded.output_tokens} output tokens" if recorded.output_tokens is not None else "")
                         + (f"; finish_reason {recorded.finish_reason}" if recorded.finish_reason else ""))
        elif recorded.finish_reason:
            lines.append(f"  finish_reason {recorded.finish_reason} (no provider token figures recorded)")
        if rc.findings:
            lines.append(f"  findings ({len(rc.findings)}):")
            lines += [f"    {f.severity:7} {f.rule:27} {f.location():28} {f.message}" for f in rc.findings]
        else:
            lines.append("  findings: none")
    return "\n".join(lines) + "\n"


def report_json(report: FileCount) -> str:
    imported = report.imported
    out: dict[str, Any] = {"file": imported.path, "format": imported.format.name, "detail": imported.format.detail,
                           "counter": report.counter_name, "warnings": [str(w) for w in imported.warnings],
                           "requests": [], "failed": [{"label": f.label, "place": f.place, "reason": f.reason}
                                                      for f in imported.failed]}
    for rc in report.requests:
        recorded = rc.request.recorded
        item: dict[str, Any] = {"label": rc.request.label, "format": recorded.format, "model": recorded.model,
                                "provider": recorded.provider, "trace_id": recorded.trace_id,
                                "span_id": recorded.span_id, "finish_reason": recorded.finish_reason,
                                "provider_input_tokens": recorded.input_tokens,
                                "provider_output_tokens": recorded.output_tokens}
        if rc.error is not None:
            item["error"] = rc.error
        elif rc.result is not None:
            item["input_tokens"] = rc.result.input_tokens
            item["count_drift"] = (rc.result.input_tokens - recorded.input_tokens
                                   if recorded.input_tokens is not None else None)
            extra = rc.result.model_extra or {}
            item["count_basis"] = extra.get("count_basis")
            item["counted_with"] = rc.result.counter.name if rc.result.counter is not None else None
            item["counter_kind"] = rc.result.counter.kind if rc.result.counter is not None else None
            for key in ("count_is_estimate", "authoritative_input_tokens", "authoritative_source", "authority_note",
                        "counter_fallback", "context_limit_source"):
                item[key] = extra.get(key)
            item["context_limit"] = rc.result.context_limit
            item["entries"] = [{"section": e.section, "id": e.id, "tokens": e.tokens,
                                "message_indices": e.message_indices, "reason": e.reason} for e in rc.result.trace]
            item["findings"] = [f.to_json() for f in rc.findings]
        out["requests"].append({k: v for k, v in item.items() if v is not None})
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
