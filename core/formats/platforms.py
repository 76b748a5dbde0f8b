"""Exports of observability and eval platforms: a Phoenix span list, a promptfoo eval export (and,
in ``langfuse``, a Langfuse trace). Each model call they hold (a Phoenix LLM span, a promptfoo
result) becomes one request."""
from __future__ import annotations

import json
from typing import Any

from ..contracts import ChatMessage
from .genai import Event, SpanView, chat_message, is_model_call, request_from_span, span_node
from .langfuse import import_langfuse, is_langfuse
from .model import ImportedRequest, ImportNote, Recorded
from .normalise import Context, Draft, Malformed, Outcome, as_int, finish, parse_json_text, shown_names
from .timing import unix_seconds

__all__ = ["import_langfuse", "is_langfuse", "import_phoenix", "phoenix_spans", "import_promptfoo", "is_promptfoo"]

PHOENIX = "phoenix-spans"
PROMPTFOO = "promptfoo-export"


# ------------------------------------------------------------------------------------------
# Phoenix


def phoenix_spans(data: Any) -> list[Any] | None:
    """The span list of a Phoenix export (a list, ``{"data": [...]}``), or ``None`` if it is not one."""
    spans = data.get("data") if isinstance(data, dict) else data
    if isinstance(spans, list) and spans and all(isinstance(s, dict) for s in spans) and all(
            isinstance(s.get("context"), dict) and ("span_kind" in s or "attributes" in s) for s in spans):
        return spans
    return None


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    """Nested attribute objects to dotted keys; lists stay whole (the readers take both forms)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(inner, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value


def import_phoenix(spans: list[Any], lines: list[int | None] | None = None) -> Outcome:
    out = Outcome()
    skipped: list[str] = []
    for i, span in enumerate(spans):
        place = f"line {lines[i]}" if lines and lines[i] is not None else f"[{i}]"
        if not isinstance(span, dict) or not isinstance(span.get("context"), dict):
            raise Malformed(place, "a Phoenix span needs a 'context' with trace_id and span_id")
        attrs: dict[str, Any] = {}
        raw_attrs, raw_events = span.get("attributes") or {}, span.get("events") or []
        label = f"{span.get('name') or 'llm'} (span {span['context'].get('span_id')})"
        if not isinstance(raw_attrs, dict) or not isinstance(raw_events, list):
            bad = "attributes" if not isinstance(raw_attrs, dict) else "events"
            out.fail(Malformed(f"{place}.{bad}", f"expected {'an object' if bad == 'attributes' else 'a list'}, "
                                                 f"found {type(span[bad]).__name__}"), "span", label)
            continue
        _flatten(raw_attrs, "", attrs)
        events = [Event(str(e.get("name") or ""), e.get("attributes") if isinstance(e.get("attributes"), dict) else {},
                        place=f"{place}.events[{j}]")
                  for j, e in enumerate(raw_events) if isinstance(e, dict)]
        view = SpanView(attributes=attrs, place=place, name=span.get("name"),
                        trace_id=span["context"].get("trace_id"), span_id=span["context"].get("span_id"),
                        events=events, kind_hint=span.get("span_kind"), parent_id=span.get("parent_id"),
                        start_time=unix_seconds(span.get("start_time")), end_time=unix_seconds(span.get("end_time")))
        out.spans.append(span_node(view, is_model_call(view)))
        if not is_model_call(view):
            skipped.append(f"{view.name} ({span.get('span_kind') or 'no kind'})")
            continue
        label = f"{view.name or 'llm'} (span {view.span_id})"
        try:
            out.requests.append(request_from_span(view, label, PHOENIX))
        except Malformed as exc:
            out.fail(exc, "span", label)
    if skipped:
        out.warnings.append(ImportNote("", f"{len(skipped)} span(s) are not LLM spans and were skipped: "
                                              f"{shown_names(skipped)}"))
    return out


# ------------------------------------------------------------------------------------------
# promptfoo


def is_promptfoo(data: Any) -> bool:
    return isinstance(data, dict) and "evalId" in data and "results" in data


def import_promptfoo(data: dict[str, Any]) -> Outcome:
    """Each eval result is one call: its rendered prompt (a chat message list when the prompt is one,
    else a single user message), the provider, and the usage promptfoo recorded."""
    results = data.get("results")
    results = results.get("results") if isinstance(results, dict) else results
    if not isinstance(results, list):
        raise Malformed("results.results", "a promptfoo export needs a list of results")
    out = Outcome()
    for i, result in enumerate(results):
        place = f"results.results[{i}]"
        if not isinstance(result, dict):
            raise Malformed(place, f"a result must be an object, found {type(result).__name__}")
        try:
            out.requests.append(_promptfoo_result(result, place, i))
        except Malformed as exc:
            out.fail(exc, "result", f"result {i + 1}")
    return out


def _promptfoo_result(result: dict[str, Any], place: str, index: int) -> ImportedRequest:
    prompt = result.get("prompt") if isinstance(result.get("prompt"), dict) else {}
    raw = prompt.get("raw")
    if not isinstance(raw, str):
        raise Malformed(f"{place}.prompt.raw", "no rendered prompt")
    ctx = Context()
    decoded = parse_json_text(raw)
    drafts: list[Draft] = []
    if isinstance(decoded, list) and decoded and all(isinstance(m, dict) and "role" in m for m in decoded):
        for j, message in enumerate(decoded):  # a chat prompt is rendered as a JSON message list
            drafts += chat_message(message, f"{place}.prompt.raw[{j}]", ctx)
    else:
        drafts.append(Draft("user", raw, f"{place}.prompt.raw"))
    provider = result.get("provider")
    provider_id = provider.get("id") if isinstance(provider, dict) else provider
    vendor, _, model = str(provider_id or "").partition(":")
    response = result.get("response") if isinstance(result.get("response"), dict) else {}
    usage = response.get("tokenUsage") if isinstance(response.get("tokenUsage"), dict) else {}
    output = response.get("output")
    recorded = Recorded(format=PROMPTFOO, model=model or None, provider=vendor or None, source_place=place,
                        input_tokens=as_int(usage.get("prompt")), output_tokens=as_int(usage.get("completion")),
                        finish_reason=response.get("finishReason"), name=result.get("id"))
    label = f"result {index + 1}: {provider_id} test {result.get('testIdx', '?')}"
    answer = [ChatMessage(role="assistant", content=output if isinstance(output, str) else json.dumps(output))] \
        if output is not None else []
    return finish(label, drafts, [], recorded, ctx, output=answer)
