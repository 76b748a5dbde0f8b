"""What a plan entry's cost depends on at its edges (the seams a template and a pre-tokenizer join across),
stand-ins for small probe prompts, and what the counter's template does with tools and closing turns."""
from __future__ import annotations

import json
from typing import Any

from ..contracts import ChatMessage, Evidence, ToolCall
from ..counting import TokenCounter
from ..errors import CounterError
from ..render import evidence_block
from ..text_edges import _head, _tail

STAND_IN_CHARS = 2048  # text kept at each end of a long message in a small probe prompt


def _last_run_start(messages: list[Any], users_follow: bool) -> int | None:
    """Where the last run of user messages starts: the run ending the list when user messages follow
    it (they join it), else the list's last run; ``None`` when there is none."""
    i = len(messages)
    if not users_follow:
        while i > 0 and messages[i - 1].role != "user":
            i -= 1
    if i == 0 or messages[i - 1].role != "user":
        return None
    while i > 0 and messages[i - 1].role == "user":
        i -= 1
    return i


def _stand_in(message: Any, text: str) -> ChatMessage:
    """A message for a small probe prompt: its role and tool calls, and its text with a long middle
    cut out (what a message adds depends on the seams beside it, not on the far side of its neighbours)."""
    head, tail = _head(text, STAND_IN_CHARS), _tail(text, STAND_IN_CHARS)
    if len(head) + len(tail) < len(text):
        text = head + " " + tail
    return message.chat().model_copy(update={"content": text})


def passage(message: Any) -> Evidence:
    """A plan message of a passage section, as the evidence block it renders to (its fields were checked
    as the plan message's: only an empty id, which a passage may not have, goes through the check again)."""
    if not message.id:
        return Evidence(id=message.id or "", source=message.source or "", text=message.content or "",
                        score=message.score or 0.0)
    return Evidence.model_construct(id=message.id, source=message.source or "", text=message.content or "",
                                    score=message.score or 0.0, access=None)


def block_of(memo: dict, message: Any) -> tuple[Evidence, str]:
    """``passage(message)`` and its ``evidence_block``, made once per message object in one assembly (``memo``:
    by identity, the message held so its id is not reused): every render of the prompt writes the same blocks,
    and the same string object serves the text count."""
    hit = memo.get(id(message))
    if hit is None or hit[0] is not message:
        evidence = passage(message)
        hit = memo[id(message)] = (message, evidence, evidence_block(evidence))
    return hit[1], hit[2]


def _kind(message: Any) -> str | None:
    if message is None:
        return None
    return message.role + ("+calls" if message.tool_calls else "")


_STUB = ChatMessage(role="user", content="")  # the empty user turn after a prompt a template will not end on


def _needs_closing_turn(counter: TokenCounter) -> bool:
    """Whether the counter's template refuses a prompt that ends with an assistant message (Mistral):
    then ``total`` counts such a prompt with an empty user turn after it."""
    known = getattr(counter, "_refuses_assistant_end", None)
    if known is None:
        try:
            counter.count([ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="b")], [])
            known = False
        except CounterError:
            known = True
        counter._refuses_assistant_end = known
    return known


_TOOL_JSON: dict[int, tuple[Any, str]] = {}  # a tool definition's JSON, by identity (the tool held: frozen)


def tools_key(tools: Any, texts: Any) -> str:
    """``tools`` and the strings ``texts`` as one key: each tool's JSON made once per tool object (a plan's
    tools are the same objects assembly after assembly, and 16 tools take a millisecond to dump)."""
    parts = []
    for tool in tools:
        hit = _TOOL_JSON.get(id(tool))
        if hit is None or hit[0] is not tool:
            if len(_TOOL_JSON) >= 4096:
                _TOOL_JSON.clear()
            hit = _TOOL_JSON[id(tool)] = (tool, json.dumps(tool.model_dump(mode="json"), sort_keys=True))
        parts.append(hit[1])
    return json.dumps(list(texts)) + "[" + ",".join(parts) + "]"


def _tools_stand_apart(counter: TokenCounter, tools: tuple, systems: tuple) -> bool:
    """Whether the tool definitions add the same tokens whatever the conversation after the system
    messages looks like (a first message of either role, texts starting with a letter or not): then
    probes without them measure what the prompt with them does. Asked once per counter, tools and
    system messages, with the first and the last tool only: the list's ends are what meets the rest of
    the prompt (a template writes the tools in between one after another, whatever the conversation)."""
    memo = counter.__dict__.setdefault("_tools_apart", {})  # on the counter: an id could be reused by another
    key = tools_key(tools, [m.content for m in systems])
    known = memo.get(key)
    if known is not None:
        return known
    ends = tools if len(tools) <= 2 else (tools[0], tools[-1])
    shapes = [[("user", "Where is it?")], [("user", "(see below) where")], [("assistant", "Hello."), ("user", "Ok.")],
              [("user", "a"), ("assistant", "b"), ("user", "c")], [("user", "a"), ("user", "b")]]
    call = ToolCall(id="probecall", name=tools[0].name, arguments={})
    shapes.append([ChatMessage(role="assistant", tool_calls=[call]),
                   ChatMessage(role="tool", content="{}", tool_call_id="probecall"), ("user", "Ok.")])
    shapes.append([("user", "a"), ChatMessage(role="assistant", tool_calls=[call]),
                   ChatMessage(role="tool", content="{}", tool_call_id="probecall"), ("user", "Ok.")])
    added = set()
    try:
        for shape in shapes:
            messages = list(systems) + [m if isinstance(m, ChatMessage) else ChatMessage(role=m[0], content=m[1])
                                        for m in shape]
            added.add(counter.count_reusing_texts(messages, list(ends)) - counter.count_reusing_texts(messages, []))
    except CounterError:
        added = {None, 0}
    apart = len(added) == 1
    if len(memo) > 256:
        memo.clear()
    memo[key] = apart
    return apart


def _compress_runs(messages: list[Any]) -> list[Any]:
    """A run of consecutive user messages cut to its first and last: what is between is joined to
    them either way, and the seams at the run's ends are what a small probe must keep."""
    out: list[Any] = []
    for i, m in enumerate(messages):
        inside = (m.role == "user" and 0 < i < len(messages) - 1 and messages[i - 1].role == "user"
                  and messages[i + 1].role == "user")
        if not inside:
            out.append(m)
    return out


def _joins(first: Any, second: Any) -> bool:
    """Whether a template may join two neighbouring messages into one text: same role, same kind."""
    return first is not None and second is not None and _kind(first) == _kind(second)


def _plain(message: Any) -> bool:
    """A message whose cost is its text's tokens plus a constant: user or assistant text, no tool
    calls, starting with no whitespace (Mistral runs leading whitespace into the system text's seam).
    Trailing whitespace is allowed: the constant is learned per closing run of the text."""
    content = message.content
    return (message.role in ("user", "assistant") and not message.tool_calls and bool(content)
            and not content[0].isspace())  # (so not whitespace only)


def thresholds_of(strategy: Any, limit: int) -> tuple[int, ...] | None:
    """The budgets a strategy compares ``count`` with, if it declares them (``thresholds(limit)``)."""
    declare = getattr(strategy, "thresholds", None)
    if not callable(declare):
        return None
    try:
        values = tuple(int(v) for v in declare(limit))
    except Exception:  # a third party's declaration that does not work is no declaration
        return None
    return values
