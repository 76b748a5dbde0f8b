"""Langfuse trace exports (a trace with its observations): each GENERATION is one model call, read
from the OTel attributes Langfuse kept (``metadata.attributes``) when they hold the messages, else
from the observation's ``input`` in whichever shape the framework that produced it wrote:

- a chat message list: OpenAI's, LangChain's (tool calls with ``args``; LangChain JS names a tool
  result's role after its tool), OTel GenAI's (``parts``), pydantic-ai's message events
  (``event.name``), the Responses API's items;
- ``{messages, system}``, ``{prompt, system}``, one ``{role, content}`` message;
- a Gemini request as Google ADK records it (``{model, config: {system_instruction, tools}, contents}``).

Tool definitions come from ``toolDefinitions``, the attributes (``gen_ai.tool.definitions``,
``llm.tools``, ``ai.prompt.tools``, pydantic-ai's ``model_request_parameters``) or the request's config.
"""
from __future__ import annotations

from typing import Any

from ..contracts import ChatMessage
from .genai import CACHED_INPUT_KEYS, SpanView, attribute_tools, chat_message, chat_messages, is_model_call, request_from_span
from .model import ImportedRequest, ImportNote, Recorded, SpanNode
from .normalise import (Context, Draft, Malformed, Outcome, as_int, finish, output_messages, parse_json_text,
                        read_parts, shown_names, tool_definitions, updated)
from .providers import gemini
from .timing import unix_seconds

LANGFUSE = "langfuse-trace"


def is_langfuse(data: Any) -> bool:
    if isinstance(data, dict) and isinstance(data.get("trace"), dict) and (
            isinstance(data.get("observations"), list) or isinstance(data["trace"].get("observations"), list)):
        return True
    return isinstance(data, dict) and isinstance(data.get("observations"), list) and "projectId" in data


def import_langfuse(data: dict[str, Any]) -> Outcome:
    trace = data.get("trace") if isinstance(data.get("trace"), dict) else data
    observations = data.get("observations")
    key = "observations"
    if not isinstance(observations, list):
        observations, key = trace.get("observations"), "trace.observations"
    if not isinstance(observations, list):
        raise Malformed("observations", "a Langfuse export needs a list of observations")
    for i, obs in enumerate(observations):
        if not isinstance(obs, dict):
            raise Malformed(f"{key}[{i}]", f"an observation must be an object, found {type(obs).__name__}")
    generations = {o.get("id") for o in observations if o.get("type") == "GENERATION" and isinstance(o.get("id"), str)}
    wrappers = {o.get("parentObservationId") for o in observations if o.get("type") == "GENERATION"
                and isinstance(o.get("parentObservationId"), str) and o.get("parentObservationId") in generations}
    out = Outcome()
    out.spans = [_observation_node(o, trace, o.get("id") in generations and o.get("id") not in wrappers)
                 for o in observations if isinstance(o.get("id"), str)]
    skipped: list[str] = []
    for i, obs in enumerate(observations):
        place = f"{key}[{i}]"
        name = str(obs.get("name") or obs.get("id") or place)
        if obs.get("type") != "GENERATION":
            skipped.append(f"{name} ({obs.get('type')})")
            continue
        if isinstance(obs.get("id"), str) and obs.get("id") in wrappers:
            out.warnings.append(ImportNote(place, f"generation {name!r} wraps another generation (the provider "
                                                     "call); only the inner call is imported"))
            continue
        try:
            out.requests.append(_generation(obs, trace, place))
        except Malformed as exc:
            out.fail(exc, "observation", f"{name} (observation {obs.get('id')})")
    if skipped:
        out.warnings.append(ImportNote(key, f"{len(skipped)} observation(s) are not generations and were "
                                               f"skipped: {shown_names(skipped)}"))
    return out


def _generation(obs: dict[str, Any], trace: dict[str, Any], place: str) -> ImportedRequest:
    metadata = parse_json_text(obs.get("metadata"))
    attrs = metadata.get("attributes") if isinstance(metadata, dict) else None
    attrs = dict(attrs) if isinstance(attrs, dict) else {}
    trace_id = obs.get("traceId") or trace.get("id")
    label = f"{obs.get('name') or 'generation'} (observation {obs.get('id')})"
    usage = obs.get("usageDetails") if isinstance(obs.get("usageDetails"), dict) else {}
    params = obs.get("modelParameters") if isinstance(obs.get("modelParameters"), dict) else {}
    view = SpanView(attributes=attrs, place=f"{place}.metadata.attributes", name=obs.get("name"),
                    trace_id=trace_id, span_id=obs.get("id"))
    if is_model_call(view) and any(k.startswith(("gen_ai.input", "gen_ai.prompt", "llm.input_messages",
                                                  "ai.prompt.messages")) for k in attrs):
        imported = request_from_span(view, label, LANGFUSE)
    else:
        imported = _from_input(obs, params, place, label, trace_id)
    if not imported.tools:  # a generation read from its input still offered the tools its attributes name
        ctx = Context()
        tools = obs.get("toolDefinitions")
        imported.tools = tool_definitions(tools, f"{place}.toolDefinitions", ctx) if tools else \
            attribute_tools(attrs, view.place, ctx)
        imported.warnings += ctx.warnings
    if not imported.output:
        imported.output = _langfuse_output(obs.get("output"))
    imported.recorded = updated(
        imported.recorded, start_time=unix_seconds(obs.get("startTime")), end_time=unix_seconds(obs.get("endTime")),
        parent_span_id=obs.get("parentObservationId"), cached_input_tokens=_langfuse_cached(usage, attrs),
        conversation_id=attrs.get("gen_ai.conversation.id") if isinstance(attrs.get("gen_ai.conversation.id"), str)
        else None,
        model=imported.recorded.model or obs.get("model"),
        max_output_tokens=imported.recorded.max_output_tokens or as_int(
            params.get("max_tokens") or params.get("max_completion_tokens") or params.get("max_output_tokens")),
        input_tokens=imported.recorded.input_tokens or as_int(usage.get("input")) or as_int(obs.get("inputUsage")),
        output_tokens=imported.recorded.output_tokens or as_int(usage.get("output")) or as_int(obs.get("outputUsage")),
        finish_reason=imported.recorded.finish_reason or params.get("finishReason"))
    return imported


# Langfuse's usage keys for input read from the provider's prompt cache (OpenAI, LangChain, Anthropic mappings).
_LANGFUSE_CACHED = ("input_cached_tokens", "input_cache_read", "prompt_details.cache_read", "cache_read_input_tokens",
                    "input_cache_read_tokens", "cached_tokens")


def _langfuse_cached(usage: dict[str, Any], attrs: dict[str, Any]) -> int | None:
    for key in _LANGFUSE_CACHED:
        if as_int(usage.get(key)) is not None:
            return as_int(usage.get(key))
    for key in CACHED_INPUT_KEYS:
        if as_int(attrs.get(key)) is not None:
            return as_int(attrs.get(key))
    return None


def _observation_node(obs: dict[str, Any], trace: dict[str, Any], model_call: bool) -> SpanNode:
    return SpanNode(span_id=str(obs["id"]), parent_id=obs.get("parentObservationId"), name=str(obs.get("name") or ""),
                    kind=str(obs.get("type") or ""), model_call=model_call,
                    trace_id=obs.get("traceId") or trace.get("id"), start_time=unix_seconds(obs.get("startTime")),
                    end_time=unix_seconds(obs.get("endTime")))


def _from_input(obs: dict[str, Any], params: dict[str, Any], place: str, label: str,
                trace_id: Any) -> ImportedRequest:
    """Messages from the observation's ``input`` (the shapes are listed in the module's docstring)."""
    ctx = Context()
    where = f"{place}.input"
    value = parse_json_text(obs.get("input"))
    drafts: list[Draft] = []
    if isinstance(value, dict) and isinstance(value.get("contents"), list):  # a Gemini request (Google ADK)
        return _gemini_request(value, obs, where, label, trace_id)
    if isinstance(value, dict) and value.get("system") is not None:
        parts = read_parts(value["system"], f"{where}.system", ctx)
        drafts.append(Draft("system", parts.text() or "", f"{where}.system"))
    elif isinstance(params.get("instructions"), str):  # the Responses API sends its system prompt apart
        drafts.append(Draft("system", params["instructions"], f"{place}.modelParameters.instructions"))
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
        where += ".messages"
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        drafts.append(Draft("user", value["prompt"], f"{where}.prompt"))
    elif isinstance(value, dict) and "role" in value:  # one message
        drafts += chat_message(value, where, ctx)
    elif isinstance(value, str):
        drafts.append(Draft("user", value, where))
    elif isinstance(value, list):
        drafts += chat_messages(value, where, ctx)
    elif isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:6]) or "none"
        raise Malformed(where, f"the recorded input is an object with keys {keys}: no messages, role or prompt "
                               "(the producer did not record what was sent)")
    else:
        raise Malformed(where, "no input messages recorded" if value is None
                        else f"the recorded input is not messages (found {type(value).__name__})")
    recorded = Recorded(format=f"{LANGFUSE}/input", name=obs.get("name"), trace_id=trace_id, span_id=obs.get("id"),
                        source_place=place, model=obs.get("model"),
                        provider=params.get("system") if isinstance(params.get("system"), str) else None)
    return finish(label, drafts, [], recorded, ctx, output=_langfuse_output(obs.get("output")))


def _gemini_request(request: dict[str, Any], obs: dict[str, Any], where: str, label: str,
                    trace_id: Any) -> ImportedRequest:
    """Google ADK records the Gemini request it sent: ``{model, config: {system_instruction, tools}, contents}``;
    read by the generateContent importer, with the config's system instruction and tools in their places."""
    config = request.get("config") if isinstance(request.get("config"), dict) else {}
    body = {"contents": request["contents"]}
    for key in ("system_instruction", "systemInstruction", "tools"):
        if config.get(key) is not None:
            body[key] = config[key]
    imported = gemini.import_body(body, where, label, file_format=LANGFUSE,
                                  model=request.get("model") if isinstance(request.get("model"), str) else None)
    imported.recorded = updated(imported.recorded, name=obs.get("name"), trace_id=trace_id, span_id=obs.get("id"))
    return imported


def _langfuse_output(value: Any) -> list[ChatMessage]:
    """The recorded answer: text, a Responses API object, or a list of output items / tool calls."""
    value = parse_json_text(value)
    if isinstance(value, str):
        return [ChatMessage(role="assistant", content=value)]
    if isinstance(value, dict) and isinstance(value.get("output"), list):  # Responses API object
        value = value["output"]
    elif isinstance(value, dict) and isinstance(value.get("choices"), list) and value["choices"]:  # a completion
        value = value["choices"][0].get("message") if isinstance(value["choices"][0], dict) else None
    if isinstance(value, dict) and "role" in value:  # one chat message
        try:
            return output_messages(chat_message(value, "output", Context()))
        except Malformed:
            return []
    if not isinstance(value, list):
        return []
    parts: list[Any] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        if "toolCallId" in item and "type" not in item:  # Vercel AI SDK tool call
            item = {"type": "tool-call", **item}
        if item.get("type") == "message" and isinstance(item.get("content"), list):
            parts += item["content"]
        elif item.get("type") in ("function_call", "tool-call", "text", "output_text"):
            parts.append(item)
    try:
        read = read_parts(parts, "output", Context())
    except Malformed:  # the answer is shown for reference only; a shape we do not know is left out
        return []
    if not read.texts and not read.calls:
        return []
    return [ChatMessage(role="assistant", content=read.text(), tool_calls=read.calls)]
