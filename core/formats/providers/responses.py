"""The OpenAI Responses API: request bodies (``input`` items, ``instructions``, ``tools``) and their
recorded responses. The item reader is shared with the Codex CLI rollout reader, which records the
same items.

Items are normalised to the Chat Completions shape: ``instructions`` and developer messages become
system messages; consecutive assistant-side items (an output message, ``function_call`` items,
``reasoning``, built-in tool calls) become one assistant message; each ``function_call_output``
one ``tool`` message. What a request cannot hold (reasoning, built-in tool calls and their outputs,
item references, a ``previous_response_id``) is a typed placeholder or a note, never dropped.
"""
from __future__ import annotations

from typing import Any

from ...contracts import ChatMessage
from ..model import ImportedRequest, Recorded
from ..normalise import (Context, Draft, Malformed, as_int, compact_json, drafts_from, finish, join_place,
                         output_messages, read_parts, result_text, role_of, tool_call, tool_definitions, updated)

FORMAT = "openai-responses"
KNOWN_KEYS = {"model", "input", "instructions", "tools", "tool_choice", "previous_response_id", "reasoning",
              "include", "store", "stream", "stream_options", "temperature", "top_p", "max_output_tokens",
              "max_tool_calls", "parallel_tool_calls", "metadata", "text", "truncation", "user", "service_tier",
              "background", "prompt", "prompt_cache_key", "prompt_cache_retention", "safety_identifier",
              "conversation", "top_logprobs"}
MARKERS = ("model", "instructions", "tools", "previous_response_id", "reasoning", "include", "store", "conversation")
# items the model produced (part of an assistant turn), and outputs of built-in tools sent back
BUILTIN_CALLS = {"web_search_call", "file_search_call", "computer_call", "code_interpreter_call",
                 "image_generation_call", "local_shell_call", "mcp_call", "mcp_list_tools", "mcp_approval_request",
                 "tool_search_call", "shell_call", "apply_patch_call"}
BUILTIN_OUTPUTS = {"computer_call_output", "local_shell_call_output", "mcp_approval_response", "tool_search_output",
                   "shell_call_output", "apply_patch_call_output"}
ASSISTANT_ITEMS = BUILTIN_CALLS | {"function_call", "custom_tool_call", "reasoning"}
ITEM_TYPES = ASSISTANT_ITEMS | BUILTIN_OUTPUTS | {"message", "function_call_output", "custom_tool_call_output",
                                                  "item_reference"}


def is_body(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("input"), (str, list)) and "messages" not in value
            and "contents" not in value and any(k in value for k in MARKERS))


def is_assistant_item(item: Any) -> bool:
    """Whether an input item was produced by the model (and so belongs to an assistant turn)."""
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("type"), str) and item["type"] in ASSISTANT_ITEMS:
        return True
    return item.get("type") in (None, "message") and item.get("role") == "assistant"


class ItemReader:
    """Reads Responses items one at a time into drafts, merging each run of assistant-side items into
    one assistant message."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.drafts: list[Draft] = []
        self._open: Draft | None = None
        self._texts: list[str] = []

    def close(self) -> None:
        self._open, self._texts = None, []

    def _assistant(self, place: str) -> Draft:
        if self._open is None:
            self._open = Draft("assistant", None, place)
            self.drafts.append(self._open)
        return self._open

    def _say(self, place: str, text: str) -> None:
        draft = self._assistant(place)
        self._texts.append(text)
        draft.content = "\n".join(self._texts)

    def add_all(self, items: Any, place: str) -> None:
        if isinstance(items, str):
            self.close()
            self.drafts.append(Draft("user", items, place))
            return
        if not isinstance(items, list):
            raise Malformed(place, f"input must be a string or a list of items, found {type(items).__name__}")
        for i, item in enumerate(items):
            self.add(item, f"{place}[{i}]")

    def add(self, item: Any, place: str) -> None:
        ctx = self.ctx
        if not isinstance(item, dict):
            raise Malformed(place, f"an input item must be an object, found {type(item).__name__}")
        kind = item.get("type")
        if kind is not None and not isinstance(kind, str):
            raise Malformed(f"{place}.type", f"an item type must be a string, found {type(kind).__name__}")
        if kind in (None, "message") and ("role" in item or kind == "message"):
            role = role_of(item.get("role"), f"{place}.role")
            parts = read_parts(item.get("content"), f"{place}.content", ctx)
            if role == "assistant" and not parts.results:
                for call in parts.calls:
                    self._assistant(place).tool_calls.append(call)
                if parts.text() is not None:
                    self._say(place, parts.text() or "")
                elif not parts.calls:
                    self._assistant(place)
                return
            self.close()
            self.drafts += drafts_from(role, parts, place, ctx)
        elif kind == "function_call":
            call = tool_call(item.get("call_id") or item.get("id"), item.get("name"), item.get("arguments"), place, ctx)
            self._assistant(place).tool_calls.append(call)
        elif kind == "custom_tool_call":
            raw = item.get("input")
            call = tool_call(item.get("call_id") or item.get("id"), item.get("name"),
                             {"input": raw if isinstance(raw, str) else compact_json(raw)}, place, ctx)
            ctx.warn(place, f"custom tool call {call.id!r}: its free-text input is kept as arguments.input")
            self._assistant(place).tool_calls.append(call)
        elif kind == "reasoning":
            self._say(place, self._reasoning(item, place))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.close()
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                ctx.warn(place, "tool output without a call_id")
            output = item.get("output")
            if isinstance(output, dict) and "type" in output:
                output = [output]
            self.drafts.append(Draft("tool", result_text(output if output is not None else "", place, ctx), place,
                                     tool_call_id=call_id if isinstance(call_id, str) else None))
        elif kind in BUILTIN_CALLS:
            size = len(compact_json(item))
            ctx.warn(place, f"built-in tool call {kind} ({size} chars of JSON) is not a function call a request can "
                            "hold; kept as a placeholder in the assistant message")
            self._say(place, ctx.placeholder(kind, f"{size} chars of JSON"))
        elif kind in BUILTIN_OUTPUTS or kind == "item_reference":
            self.close()
            size = len(compact_json(item))
            why = ("a reference to an item the provider stores; its content is not in this file"
                   if kind == "item_reference" else f"the output of a built-in tool ({size} chars of JSON)")
            ctx.warn(place, f"{kind}: {why}; kept as a placeholder in a user message")
            detail = f"id {item.get('id')}" if kind == "item_reference" else f"{size} chars of JSON"
            self.drafts.append(Draft("user", ctx.placeholder(kind, detail), place))
        else:
            ctx.warn(place, f"input item of type {kind!r} is not one the Responses API documents; not read")

    def _reasoning(self, item: dict[str, Any], place: str) -> str:
        summary = item.get("summary")
        content = item.get("content")
        chars = 0
        for value in (summary, content):
            if isinstance(value, list):
                chars += sum(len(p.get("text") or "") for p in value if isinstance(p, dict)
                             and isinstance(p.get("text"), str))
        encrypted = item.get("encrypted_content")
        detail = f"{chars} chars of text"
        if isinstance(encrypted, str) and encrypted:
            detail += f", {len(encrypted)} chars encrypted"
        self.ctx.warn(place, "reasoning item kept as a placeholder" + (
            " (its encrypted_content is sent back to the provider and cannot be read here)"
            if isinstance(encrypted, str) and encrypted else ""))
        return self.ctx.placeholder("reasoning", detail)


def import_body(body: Any, place: str, label: str, *, file_format: str = FORMAT, response: Any = None,
                stream: list[dict[str, Any]] | None = None) -> ImportedRequest:
    if not isinstance(body, dict):
        raise Malformed(place or "top level", f"a request body must be a JSON object, found {type(body).__name__}")
    if "input" not in body and not isinstance(body.get("prompt"), dict):
        raise Malformed(join_place(place, "input"), "a Responses request body needs 'input'")
    ctx = Context()
    reader = ItemReader(ctx)
    instructions = body.get("instructions")
    if instructions is not None:
        where = join_place(place, "instructions")
        if isinstance(instructions, str):
            reader.drafts.append(Draft("system", instructions, where))
        else:  # instructions may be given as input items too
            reader.add_all(instructions, where)
            for draft in reader.drafts:
                if draft.role != "system":
                    ctx.warn(draft.place, f"a {draft.role} item in instructions is kept as {draft.role}")
            reader.close()
    for key, why in (("previous_response_id", "continues an earlier response"),
                     ("conversation", "belongs to a stored conversation"),
                     ("prompt", "uses a stored prompt template")):
        if body.get(key) not in (None, ""):
            ident = body[key].get("id") if isinstance(body[key], dict) else body[key]
            ctx.warn(join_place(place, key), f"the request {why} ({ident}); the provider adds that context, "
                                             "which this file does not hold")
    if "input" in body:
        reader.add_all(body.get("input"), join_place(place, "input"))
    tools = tool_definitions(body.get("tools"), join_place(place, "tools"), ctx)
    ignored = sorted(str(k) for k in body if k not in KNOWN_KEYS)
    if ignored:
        ctx.warn(place, "keys that are not part of a Responses request were ignored: " + ", ".join(ignored))
    model = body.get("model")
    parent = body.get("previous_response_id")
    recorded = Recorded(format=file_format if file_format == FORMAT else f"{file_format}/{FORMAT}",
                        model=model if isinstance(model, str) else None, provider="openai", source_place=place,
                        name=label, max_output_tokens=as_int(body.get("max_output_tokens")),
                        parent_id=parent if isinstance(parent, str) else None)
    output: list[ChatMessage] = []
    if stream is not None:
        response = next((e.get("response") for e in reversed(stream) if isinstance(e, dict)
                         and isinstance(e.get("response"), dict)
                         and e.get("type") in ("response.completed", "response.incomplete", "response.failed",
                                               "response.done")), None)
        if response is None:
            ctx.warn(place, "the streamed response has no response.completed event; no usage was read")
    if response is not None:
        recorded, output = read_response(recorded, response, join_place(place, "response"), ctx)
    return finish(label, reader.drafts, tools, recorded, ctx, output=output)


def usage_figures(usage: Any) -> dict[str, int | None]:
    """input_tokens (cached included), cached_input_tokens and output_tokens of a Responses usage object
    (Codex's token_count events write the same names)."""
    if not isinstance(usage, dict):
        return {}
    details = usage.get("input_tokens_details") if isinstance(usage.get("input_tokens_details"), dict) else {}
    cached = as_int(details.get("cached_tokens"))
    if cached is None:
        cached = as_int(usage.get("cached_input_tokens"))
    return {"input_tokens": as_int(usage.get("input_tokens")), "cached_input_tokens": cached,
            "output_tokens": as_int(usage.get("output_tokens"))}


def read_response(recorded: Recorded, response: Any, place: str, ctx: Context) -> tuple[Recorded, list[ChatMessage]]:
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object; its usage is not read")
        return recorded, []
    if isinstance(response.get("error"), dict):
        ctx.warn(place, f"the provider answered with an error: {response['error'].get('message', '')}")
        return recorded, []
    output: list[ChatMessage] = []
    items = response.get("output")
    if isinstance(items, list):
        reader = ItemReader(Context())
        try:
            reader.add_all(items, f"{place}.output")
            output = output_messages(reader.drafts)
        except Malformed as exc:  # the answer is shown for reference only
            ctx.warn(exc.place, f"the recorded answer is not read: {exc.problem}")
    incomplete = response.get("incomplete_details")
    reason = incomplete.get("reason") if isinstance(incomplete, dict) else None
    status = response.get("status")
    ident = response.get("id")
    return updated(recorded, **usage_figures(response.get("usage")),
                   finish_reason=reason or (status if isinstance(status, str) else None),
                   model=recorded.model or (response.get("model") if isinstance(response.get("model"), str) else None),
                   entry_id=ident if isinstance(ident, str) else None), output
