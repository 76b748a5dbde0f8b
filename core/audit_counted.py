"""The audit's rules that need the counter: control tokens and role markers read out of untrusted text (by
the text and by the emitted ids), the recount, and what the chat template leaves out of the prompt."""
from __future__ import annotations

from collections import Counter
from typing import Iterator

from .counting import TokenCounter
from .errors import CounterError
from .findings import Finding
from .rendered import NOT_RENDERED, missing_messages, missing_tools
from .result import NOT_SENT, AssemblyResult

Region = tuple[int, str, int, int, "str | None", str]


def control_tokens(result: AssemblyResult, counter: TokenCounter, untrusted: list[Region]) -> Iterator[Finding]:
    """Control tokens and role markers the tokenizer reads out of an untrusted text's own spelling. None to look for
    where it reads no text as either (``text_is_never_control``, and no role markers of its own: tekken)."""
    if counter.text_is_never_control() and type(counter).role_markers_in is TokenCounter.role_markers_in:
        return
    for i, text, start, end, block_id, what in untrusted:
        item = block_id or result.messages[i].tool_call_id
        section = "evidence" if block_id else "tool_exchanges"
        region = text[start:end]
        for literal, a, b in counter.control_tokens_in(region):
            yield Finding("control-token-in-untrusted", "error",
                          f"{what} contains {literal!r}, which {counter.name} reads as a control token",
                          i, start + a, start + b, section=section, item_id=item)
        for literal, a, b in counter.role_markers_in(region):
            yield Finding("role-marker-in-untrusted", "error",
                          f"{what} contains {literal!r}, which {counter.name}'s chat template uses as a role or "
                          "structure marker: the tokenizer reads it as that marker's token (an added token not "
                          "flagged special)", i, start + a, start + b, section=section, item_id=item)


_INVISIBLE = dict.fromkeys(map(ord, "\u2060\u200b\u200c\u200d\ufeff\u00ad"))


def _visible(text: str) -> str:
    """``text`` without its invisible characters (none in an ASCII text: Python knows a string is ASCII without
    reading it)."""
    return text if text.isascii() else text.translate(_INVISIBLE)


def emitted_control_tokens(result: AssemblyResult, counter: TokenCounter, untrusted: list[Region]
                            ) -> Iterator[Finding]:
    """The emitted token ids, not only the text: the request holds no more control or marker tokens than
    the same request with every untrusted text replaced by a plain placeholder. Checked where an untrusted
    text holds something like a spelling once invisible characters are taken out (a normaliser may). Not where
    the tokenizer reads no text at all as a control or marker token (``text_is_never_control``, tekken): then
    every control id is the template's own, and the request without its untrusted text has the same ones (its
    messages keep their roles, calls and ids, and no text is left empty), so the two counts could not differ
    (``tests/test_audit_shortcuts.py`` compares them on tampered results)."""
    regions = [(i, start, end) for i, _, start, end, _, _ in untrusted]
    if not regions or not counter.untrusted_spellings() or counter.text_is_never_control():
        return
    suspect = [r for r in regions
               if counter.holds_untrusted_spelling(_visible((result.messages[r[0]].content or "")[r[1]:r[2]]))]
    if not suspect:
        return
    control = counter.control_token_ids()  # asked last: a set of every control id, built per call by some counters
    if not control:
        return
    blanked = [m.model_copy() for m in result.messages]
    for i, start, end in sorted(regions, key=lambda r: (r[0], -r[1])):
        text = blanked[i].content or ""
        blanked[i] = blanked[i].model_copy(update={"content": text[:start] + "x" + text[end:]})
    try:
        sent = Counter(t for t in counter.token_ids(result.messages, result.tools) if t in control)
        plain = Counter(t for t in counter.token_ids(blanked, result.tools) if t in control)
    except CounterError:
        return
    extra = sent - plain
    if extra:
        i, start, end = suspect[0]
        yield Finding("control-token-in-untrusted", "error",
                      f"the emitted token ids hold {sum(extra.values())} control or marker token(s) more than the "
                      f"request without its untrusted text ({counter.name} reads them out of it)",
                      i, start, end, section="tool_exchanges" if result.messages[i].role == "tool" else "evidence")


def recounted(result: AssemblyResult, counter: TokenCounter) -> bool:
    """Whether ``recount`` counts ``result`` again with ``counter``."""
    if result.counter is None or result.counter.name != counter.name or not result.messages:
        return False
    return (result.model_extra or {}).get("count_basis") != "adapted"  # adapted: not the messages counted


def counted_and_rendered(result: AssemblyResult, counter: TokenCounter) -> tuple[int, str] | None:
    """The recount and the rendered prompt from one rendering of the request, where ``recount`` will count it and
    the counter gives both at once (``TokenCounter.count_and_render_text``); else ``None`` (asked apart)."""
    if not recounted(result, counter):
        return None
    return counter.count_and_render_text(result.messages, result.tools)


def recount(result: AssemblyResult, counter: TokenCounter, counted: int | None = None) -> Iterator[Finding]:
    """``count-mismatch`` (and ``over-budget`` by the recount); ``counted``: the recount, made already (only where
    ``recounted`` said so)."""
    if counted is None and not recounted(result, counter):
        return
    try:  # exact: a span's count is reused only where that exact string was counted with the same encoder
        recount = counted if counted is not None else counter.count_reusing_texts(result.messages, result.tools)
    except CounterError as exc:
        yield Finding("count-mismatch", "warning", f"the request could not be recounted: {exc}")
        return
    if recount != result.input_tokens:
        yield Finding("count-mismatch", "error",
                      f"recorded input_tokens {result.input_tokens}, a recount with {counter.name} gives {recount}")
        if recount > result.input_budget >= result.input_tokens:
            yield Finding("over-budget", "error", f"a recount with {counter.name} gives {recount} tokens, over the "
                                                  f"input allowance {result.input_budget}")


def template_dropped(result: AssemblyResult, counter: TokenCounter | None, rendered: str | None = None
                     ) -> Iterator[Finding]:
    """Items the trace calls sent that the chat template leaves out of the prompt it renders (``rendered``: that
    prompt, rendered already)."""
    reported: set[str] = set()
    missing: dict[int, str] = {}
    gone_tools: list[str] = []
    if counter is not None and result.messages:
        if rendered is None:
            try:
                rendered = counter.render_text(result.messages, result.tools)
            except CounterError:
                rendered = None
        if rendered is not None:
            missing = missing_messages(result.messages, result.tools, rendered)
            gone_tools = missing_tools(result.tools, rendered)
    name = counter.name if counter is not None else (result.counter.name if result.counter else "the counter")
    for entry in result.trace:
        if entry.decision == NOT_RENDERED:
            reported.add(entry.id)
            at = entry.message_indices[0] if entry.message_indices else None
            yield Finding("template-dropped", "error", f"{entry.id} is not in the rendered prompt: {entry.reason}",
                          at, section=entry.section, item_id=entry.id)
    for tool in gone_tools:
        if tool not in reported:
            yield Finding("template-dropped", "error", f"tool definition {tool} is offered in the request, but "
                                                       f"{name}'s chat template leaves it out of the prompt",
                          section="tools", item_id=tool)
    if not missing:  # the common case: nothing left out, and no owner to look up
        return
    owners = {i: e for e in result.trace if e.decision not in NOT_SENT or e.decision == NOT_RENDERED
              for i in e.message_indices}
    for i, what in sorted(missing.items()):
        entry = owners.get(i)
        if entry is not None and entry.id in reported:
            continue
        role = result.messages[i].role
        yield Finding("template-dropped", "error", f"message {i} ({role}): {what} is sent, but {name}'s chat "
                                                   "template leaves it out of the prompt", i,
                      section=entry.section if entry else None, item_id=entry.id if entry else f"message-{i}")
