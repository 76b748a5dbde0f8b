"""Counting an imported request: there is no assembly trace in a provider body, so core makes one.

``input_tokens`` is the counter's count of the complete request (messages and tools as recorded,
chat template and generation prefix included). Each message gets its marginal cost, by the first
method the chat template allows, named in its reason:

1. prefix counts: the count through the message minus the count just before it;
2. leave-one-out: the complete count minus the count without the message;
3. without its text: the complete count minus the count with its text emptied (its role markers
   then stay in the template entry);
4. together: messages the template will not let go of one by one (an assistant tool call cut off
   from its results) get one entry, the way ``assemble`` records a tool exchange.

Tool definitions are costed by prefix over the tool list. The ``template`` entry takes the rest, so
the template entry plus every other entry adds up to ``input_tokens`` exactly.

When the counter's template refuses the request as recorded, ``count_imported`` adapts it in the
least way that still counts what was sent, and says exactly how (``count_basis: "adapted"`` and
``count_adaptations``): see ``core.formats.adapt`` for the steps (text beside tool calls counted
apart, a tool result whose call is not in the request counted as a user message, parallel calls
counted one at a time, assistant messages at the very end left out). If the template still
refuses, ``CountRefused`` is raised for that request with the request's structural reasons and the
template's own words; the ``count`` command prints it and goes on (the file itself was valid, so
it still exits 0).
"""
from __future__ import annotations

import math
from typing import Sequence

from ..contracts import ChatMessage, ToolDefinition
from ..counters.models import lookup as lookup_model
from ..counting import TokenCounter
from ..rendered import mark_not_rendered
from ..errors import RequestError, TemplateRefused
from ..result import AssemblyResult, TraceEntry
from .model import ImportedRequest
from .adapt import Unit, adapt, diagnose, step_sets
from .normalise import infer_sections

ASSUMED_LIMIT_STEP = 1024


class CountRefused(TemplateRefused):
    """The counter's chat template refuses an imported request, even with the documented adaptations."""

    def __init__(self, label: str, counter_name: str, template_message: str, diagnosis: Sequence[str] = ()):
        super().__init__(counter_name, template_message)
        self.label = label
        self.diagnosis = list(diagnosis)
        why = "; ".join(self.diagnosis)
        self.args = (f"{label}: {counter_name} cannot count this request" + (f" ({why})" if why else "")
                     + f"; its chat template said: {template_message}",)


class _Costs:
    """Counts of variants of the counted request; a variant the template refuses is ``None``."""

    def __init__(self, counter: TokenCounter, counted: list[ChatMessage], tools: list[ToolDefinition], total: int,
                 reference: bool = False):
        self.counter, self.counted, self.tools, self.total = counter, counted, tools, total
        self._prefix: dict[int, int | None] = {len(counted): total}
        # exact counts of prefixes and leave-outs without counting each whole, where the counter has them
        variants = getattr(counter, "variant_counts", None)
        self._variants = variants(counted, tools, total) if variants is not None and counted and not reference \
            else None

    def count(self, messages: Sequence[ChatMessage], tools: Sequence[ToolDefinition] | None = None) -> int | None:
        if not messages:
            return None  # no template renders an empty conversation as a request
        try:
            return self.counter.count(messages, self.tools if tools is None else tools)
        except TemplateRefused:
            return None

    def prefix(self, end: int) -> int | None:
        if end not in self._prefix:
            self._prefix[end] = self._variant(end, len(self.counted))
        return self._prefix[end]

    def without(self, start: int, end: int) -> int | None:
        return self._variant(start, end)

    def _variant(self, start: int, end: int) -> int | None:
        """The count of ``counted[:start] + counted[end:]``, by the counter's variant counts where they answer."""
        if self._variants is not None:
            try:
                return self._variants.count(start, end)
            except Exception:  # noqa: BLE001 - a variant they cannot vouch for is counted whole
                pass
        return self.count(self.counted[:start] + self.counted[end:])

    def emptied(self, at: int) -> int | None:
        m = self.counted[at]
        if not m.content:
            return None
        blank = ChatMessage(role=m.role, content="", tool_calls=m.tool_calls, tool_call_id=m.tool_call_id)
        return self.count(self.counted[:at] + [blank] + self.counted[at + 1:])


def _count_complete(imported: ImportedRequest, counter: TokenCounter) -> tuple[int, list[ChatMessage], list[Unit],
                                                                                list[str]]:
    messages = list(imported.messages)
    first_refusal = ""
    for steps in step_sets(messages, counter):
        counted, units, notes = adapt(messages, steps, counter)
        if not counted:
            continue
        try:
            return counter.count(counted, list(imported.tools)), counted, units, notes
        except TemplateRefused as exc:
            first_refusal = first_refusal or exc.template_message
    raise CountRefused(imported.label, counter.name, first_refusal or "there is nothing to count", diagnose(messages))


def count_imported(imported: ImportedRequest, counter: TokenCounter, *, context_limit: int | None = None,
                   max_new_tokens: int | None = None, reference: bool = False) -> AssemblyResult:
    """The imported request as an ``AssemblyResult`` (``strategy="imported"``): messages and tools as
    recorded, the counter's complete count, one trace entry per message (per tool exchange where the
    template refuses to cut it) and per tool, and the recorded provider figures beside ours
    (``provider_input_tokens``, ``count_drift`` = ours - theirs, ``finish_reason``, trace and span ids).

    Budget: ``max_new_tokens`` defaults to what the request asked for (its ``max_tokens``), else 0;
    without a ``context_limit`` the request's own size is used, rounded up to a multiple of 1024, and
    ``context_limit_source`` says so. Raises ``CountRefused`` when the template cannot count it.

    ``reference``: every prefix and leave-out counted whole, as before the counter's variant counts (the
    same figures, one or two complete counts per message; what tests and ``bench_count`` check against)."""
    messages = list(imported.messages)
    tools = list(imported.tools)
    total, counted, units, adaptations = _count_complete(imported, counter)
    sections = imported.sections if len(imported.sections) == len(messages) else infer_sections(messages)
    costs = _Costs(counter, counted, tools, total, reference)
    entries: list[TraceEntry] = []
    absorbing: TraceEntry | None = None  # a group that cannot be told apart from the template overhead
    live = [u for u in units if u.end > u.start]
    k = 0
    while k < len(live):
        unit = live[k]
        m = messages[unit.index]
        measured = _single(costs, unit)
        if measured is not None:
            entries.append(_entry(unit, m, sections, *measured))
            k += 1
            continue
        last = k
        if m.tool_calls:  # the exchange: the call and the results right after it
            while last + 1 < len(live) and messages[live[last + 1].index].role == "tool":
                last += 1
        while live[last].end < len(counted) and costs.prefix(live[last].end) is None:
            last += 1
        group = live[k:last + 1]
        tokens, how = _group_cost(costs, group)
        entry = _group_entry(group, messages, sections, tokens or 0, how)
        if tokens is None:
            absorbing = entry
        entries.append(entry)
        k = last + 1
    entries += [_entry(u, messages[u.index], sections, 0, u.note) for u in units if u.end == u.start]
    absent = [u.index for u in units if u.end == u.start and u.within is None]
    entries.sort(key=lambda e: e.message_indices[0])
    for unit in units:  # text counted apart from the list the template took: in its message's entry and the total
        if unit.extra:
            entry = next(e for e in entries if unit.index in e.message_indices)
            entry.tokens += unit.extra
            total += unit.extra
    tool_entries = _tool_entries(costs)
    rest = total - sum(e.tokens for e in entries) - sum(e.tokens for e in tool_entries)
    if absorbing is not None:
        absorbing.tokens, rest = rest, 0
    fixed = counter.tools_fixed_tokens if tools else 0
    template = TraceEntry(section="template", id="chat-template", decision="kept", tokens=rest,
                          reason="chat template, role markers and generation prefix: the complete count minus every "
                                 "message and tool entry" + ("" if absorbing is None else
                                                             f" (included in {absorbing.id})")
                                 + (f"; includes the provider's {fixed}-token tool-use system prompt" if fixed else ""))
    uncounted = absent
    result = _result(imported, counter, total, [template] + tool_entries + entries, adaptations, uncounted,
                     context_limit, max_new_tokens)
    return mark_not_rendered(result, counter) if not adaptations else result


def _single(costs: _Costs, unit: Unit) -> tuple[int, str] | None:
    before, through = costs.prefix(unit.start) if unit.start else None, costs.prefix(unit.end)
    if before is not None and through is not None:
        return through - before, "marginal by prefix counts"
    without = costs.without(unit.start, unit.end)
    if without is not None:
        cut = "before" if before is None else "after"
        return costs.total - without, f"marginal by leave-one-out (the template refuses the request cut just {cut} it)"
    emptied = costs.emptied(unit.start)
    if emptied is not None:
        return costs.total - emptied, "marginal cost of its text (the count with its text emptied; its role " \
                                      "markers stay in the template entry)"
    return None


def _group_cost(costs: _Costs, group: list[Unit]) -> tuple[int | None, str]:
    """Tokens of messages costed together; ``None`` when only the template overhead can be counted with them."""
    start, end = group[0].start, group[-1].end
    base, through = costs.prefix(start) if start else None, costs.prefix(end)
    if base is not None and through is not None:
        return through - base, "by prefix counts around them"
    without = costs.without(start, end)
    if without is not None:
        return costs.total - without, "by leave-one-out of them all"
    return None, "with the chat template overhead, which the template will not render without them"


def _role_name(m: ChatMessage) -> str:
    if m.role == "assistant" and m.tool_calls:
        return "assistant tool-call"
    return {"tool": "tool result"}.get(m.role, m.role)


def _entry_id(index: int, m: ChatMessage) -> str:
    if m.role == "assistant" and m.tool_calls:
        return "+".join(c.id for c in m.tool_calls)
    if m.role == "tool" and m.tool_call_id:
        return f"{m.tool_call_id}:result"
    return f"message-{index}"


def _entry(unit: Unit, m: ChatMessage, sections: list[str], tokens: int, how: str) -> TraceEntry:
    reason = f"{_role_name(m)} message, {how}"
    if unit.note and unit.end > unit.start:
        reason += f"; {unit.note}"
    return TraceEntry(section=sections[unit.index], id=_entry_id(unit.index, m), decision="kept", tokens=tokens,
                      reason=reason, message_indices=[unit.index])


def _group_entry(group: list[Unit], messages: list[ChatMessage], sections: list[str], tokens: int,
                 how: str) -> TraceEntry:
    """One entry for messages the template will not cost apart (``assemble`` records a tool exchange so too)."""
    indices = [u.index for u in group]
    if len(indices) == 1:
        unit = group[0]
        return _entry(unit, messages[unit.index], sections, tokens, f"costed {how}")
    calls = [c.id for i in indices for c in messages[i].tool_calls]
    item_id = "+".join(calls) if calls else f"messages-{indices[0]}-{indices[-1]}"
    roles = ", ".join(_role_name(messages[i]) for i in indices)
    reason = (f"messages {indices[0]}-{indices[-1]} ({roles}) costed together, {how}: the template refuses a request "
              "that stops between a tool call and its results")
    notes = [u.note for u in group if u.note]
    if notes:
        reason += "; " + "; ".join(notes)
    return TraceEntry(section=sections[indices[0]], id=item_id, decision="kept", tokens=tokens, reason=reason,
                      message_indices=indices)


def _tool_entries(costs: _Costs) -> list[TraceEntry]:
    entries = []
    tools = costs.tools
    previous = costs.count(costs.counted, [])
    for i, tool in enumerate(tools):
        through = costs.total if i == len(tools) - 1 else costs.count(costs.counted, tools[:i + 1])
        if previous is not None and through is not None:
            tokens, how = through - previous, "marginal by prefix counts over the tool list"
        else:
            without = costs.count(costs.counted, tools[:i] + tools[i + 1:])
            tokens, how = (costs.total - without, "marginal by leave-one-out") if without is not None else \
                (0, "not separable: its tokens are in the template entry")
        entries.append(TraceEntry(section="tools", id=tool.name, decision="kept", tokens=tokens,
                                  reason=f"tool definition offered to the model, {how}"))
        previous = through
    fixed = costs.counter.tools_fixed_tokens  # a prompt the provider adds once when tools are offered
    if entries and fixed and entries[0].tokens >= fixed and "prefix" in entries[0].reason:
        entries[0] = entries[0].model_copy(update={
            "tokens": entries[0].tokens - fixed,
            "reason": entries[0].reason + f"; without the {fixed} tokens the provider adds once when tools are "
                                          "offered (in the template entry)"})
    return entries


def _result(imported: ImportedRequest, counter: TokenCounter, total: int, trace: list[TraceEntry],
            adaptations: list[str], uncounted: list[int], context_limit: int | None,
            max_new_tokens: int | None) -> AssemblyResult:
    recorded = imported.recorded
    if max_new_tokens is not None:
        max_new, max_source = max_new_tokens, "given"
    elif recorded.max_output_tokens is not None:
        max_new, max_source = recorded.max_output_tokens, "recorded: the request's max_tokens"
    else:
        max_new, max_source = 0, "none given or recorded"
    info = lookup_model(recorded.model) if context_limit is None else None
    if info is not None and info.context_window and info.context_window > max_new:
        limit, limit_source = info.context_window, (
            f"model registry: {recorded.model} has a {info.context_window}-token context window "
            f"({'matched as ' + info.key + ', ' if info.key != recorded.model else ''}{_table_name(info.source)})")
    elif context_limit is None:
        limit = max(ASSUMED_LIMIT_STEP, math.ceil((total + max_new) / ASSUMED_LIMIT_STEP) * ASSUMED_LIMIT_STEP)
        limit_source = (f"assumed: no context limit was given, so the request's own size ({total} input + {max_new} "
                        f"output tokens) rounded up to a multiple of {ASSUMED_LIMIT_STEP}")
    else:
        limit, limit_source = context_limit, "given"
    if limit - max_new <= 0:
        raise RequestError([("context_limit", f"max_new_tokens ({max_new}) leaves no input room in context_limit "
                                              f"({limit})")], source=imported.label)
    budget = limit - max_new
    extra = {
        "source_format": recorded.format, "source_place": recorded.source_place or None,
        "model": recorded.model, "provider": recorded.provider, "span_name": recorded.name,
        "trace_id": recorded.trace_id, "span_id": recorded.span_id, "finish_reason": recorded.finish_reason,
        "provider_input_tokens": recorded.input_tokens, "provider_output_tokens": recorded.output_tokens,
        "count_drift": total - recorded.input_tokens if recorded.input_tokens is not None else None,
        **_authority(counter, total, recorded.input_tokens),
        "count_basis": "adapted" if adaptations else "as recorded",
        "count_adaptations": adaptations or None, "uncounted_messages": uncounted or None,
        "context_limit_source": limit_source, "max_new_tokens_source": max_source,
        "import_warnings": [str(w) for w in imported.warnings] or None,
    }
    return AssemblyResult(
        strategy="imported", request_id=imported.label, messages=list(imported.messages), tools=list(imported.tools),
        input_tokens=total, input_budget=budget, remaining_tokens=budget - total, context_limit=limit,
        max_new_tokens=max_new, margin=0, fill_order=[], trace=trace, counter=counter.identity,
        **{k: v for k, v in extra.items() if v is not None})


def _table_name(source: str) -> str:
    return {"table": "LiteLLM's model table", "tokencost": "tokencost's copy of LiteLLM's model table"}.get(
        source, f"your model table {source}")


def _authority(counter: TokenCounter, total: int, provider: int | None) -> dict:
    """Which input-token figure to draw the bar to. An estimate (no public tokenizer) yields to the provider's own
    recorded figure; a counter of the model's own tokenizer is the authority, its drift shown beside it."""
    estimate = counter.identity.kind == "estimate"
    if estimate and provider is not None:
        return {"count_is_estimate": True, "authoritative_input_tokens": provider,
                "authoritative_source": "provider",
                "authority_note": f"{counter.name} is an estimate; the provider recorded {provider} input tokens, "
                                  f"our estimate is {total} ({total - provider:+d})"}
    return {"count_is_estimate": estimate or None, "authoritative_input_tokens": total,
            "authoritative_source": "estimate" if estimate else "counter",
            "authority_note": (f"{counter.name} is an estimate ({counter.identity.notes}); the file records no "
                               "provider figure") if estimate else None}
