"""How an imported request is adapted when the counter's chat template refuses it as recorded:
each step changes as little as it can so that what was sent is still counted, and says how.

Steps (the fewest that let the template count the request are taken; each names itself in a note):

- ``text``: an assistant message with text and tool calls is counted with its calls alone and its
  text counted apart as plain text (mistral-common refuses both in one message);
- ``orphans``: a tool result whose call is not in the request (frameworks that record only the new
  messages of a conversation kept elsewhere) is counted as a user message with its text;
- ``parallel``: an assistant message with several tool calls is counted as one assistant message per
  call, each followed by its results (Llama 3.1's template takes one call at a time);
- ``trailing``: assistant messages at the very end (a prefill, or a finished conversation) are left
  out with 0 tokens.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..contracts import ChatMessage
from ..counting import TokenCounter

STEPS: tuple[str, ...] = ("text", "orphans", "parallel", "trailing")


def step_sets(messages: list[ChatMessage], counter: TokenCounter) -> list[frozenset[str]]:
    """The sets of steps to try, fewest first, among the steps that change this request: the first
    the template accepts is the least adaptation (a note never claims a refusal that was not tried)."""
    from itertools import combinations

    useful = [s for s in STEPS if adapt(messages, frozenset({s}), counter)[2]]
    return [frozenset(c) for n in range(len(useful) + 1) for c in combinations(useful, n)]


@dataclass
class Unit:
    """One recorded message and the slice of the counted list it became (empty when it is not
    counted, or counted inside message ``within``'s slice)."""

    index: int
    start: int
    end: int
    note: str = ""  # how it was adapted for counting, if it was
    extra: int = 0  # tokens counted apart from the counted list (text the template would not take)
    within: int | None = None


def orphans(messages: list[ChatMessage]) -> set[int]:
    """Tool results whose call is not in the request (the history before them is held elsewhere)."""
    seen: set[str] = set()
    found = set()
    for i, m in enumerate(messages):
        seen.update(c.id for c in m.tool_calls)
        if m.role == "tool" and m.tool_call_id not in seen:
            found.add(i)
    return found


def _results_after(messages: list[ChatMessage], i: int) -> list[int]:
    j = i + 1
    while j < len(messages) and messages[j].role == "tool":
        j += 1
    return list(range(i + 1, j))


def _one_call_at_a_time(messages: list[ChatMessage], i: int, head: ChatMessage) -> tuple[list[ChatMessage], list[int]]:
    """``head`` (message ``i`` as counted) split into one assistant message per call, each followed by
    the results that answer it; results answering none of them come last."""
    results = _results_after(messages, i)
    out: list[ChatMessage] = []
    used: set[int] = set()
    for n, call in enumerate(head.tool_calls):
        out.append(ChatMessage(role="assistant", content=head.content if n == 0 else None, tool_calls=[call]))
        for j in results:
            if j not in used and messages[j].tool_call_id == call.id:
                out.append(messages[j])
                used.add(j)
    out += [messages[j] for j in results if j not in used]
    return out, results


def adapt(messages: list[ChatMessage], steps: frozenset[str],
          counter: TokenCounter) -> tuple[list[ChatMessage], list[Unit], list[str]]:
    """The list to count, each recorded message's place in it, and a note per adapted message."""
    name = counter.name
    counted: list[ChatMessage] = []
    units: list[Unit] = []
    notes: list[str] = []
    last_kept = len(messages) - 1
    if "trailing" in steps:
        while last_kept >= 0 and messages[last_kept].role == "assistant":
            last_kept -= 1
        if last_kept < len(messages) - 1:
            notes.append(f"messages {last_kept + 1}-{len(messages) - 1} (assistant, at the end of the request) are "
                         f"not counted: {name} refuses a request that ends with an assistant message")
    lonely = orphans(messages) if "orphans" in steps else set()
    inside: dict[int, int] = {}  # tool results counted inside a split assistant message
    for i, m in enumerate(messages):
        start = len(counted)
        note, extra = "", 0
        if i in inside:
            units.append(Unit(i, start, start, f"counted with message {inside[i]}, whose tool calls are counted one "
                                               "at a time", within=inside[i]))
            continue
        if i > last_kept:
            note = f"not counted: {name} refuses a request that ends with an assistant message"
            units.append(Unit(i, start, start, note))
            continue
        head = m
        how: list[str] = []
        if "text" in steps and m.role == "assistant" and m.content and m.tool_calls:
            head = ChatMessage(role="assistant", tool_calls=m.tool_calls)
            extra = counter.text_token_count(m.content)
            how.append(f"its text ({len(m.content)} chars) is counted apart, as {extra} tokens of plain text added "
                       f"to the message with its tool calls alone: {name} refuses text and tool calls in one "
                       "assistant message")
        if i in lonely:
            head = ChatMessage(role="user", content=m.content or "")
            how.append(f"a tool result whose call ({m.tool_call_id or 'no id'}) is not in this request, counted as a "
                       f"user message with its text: {name} refuses a tool result that answers no call of the "
                       "request (user role markers are counted instead of tool-result ones)")
        if "parallel" in steps and head.role == "assistant" and len(head.tool_calls) > 1:
            split, results = _one_call_at_a_time(messages, i, head)
            counted += split
            inside.update({j: i for j in results})
            how.append(f"its {len(head.tool_calls)} parallel tool calls are counted one at a time, each call in an "
                       f"assistant message of its own followed by its result: {name} refuses several tool calls in "
                       "one message (more role markers are counted than were sent)")
        else:
            counted.append(head)
        note = "; ".join(how)
        if note:
            notes.append(f"message {i}: {note}")
        units.append(Unit(i, start, len(counted), note, extra))
    return counted, units, notes


def diagnose(messages: list[ChatMessage]) -> list[str]:
    """Structural reasons a template is likely to refuse, in the request's own terms."""
    found = []
    if not messages:
        found.append("it has no messages")
    elif messages[0].role == "assistant":
        found.append("it starts with an assistant message")
    late = [i for i, m in enumerate(messages) if m.role == "system" and any(n.role != "system" for n in messages[:i])]
    if late:
        found.append(f"message {late[0]} is a system message after the conversation started")
    for i, m in enumerate(messages):
        if m.role == "tool" and (i == 0 or messages[i - 1].role not in ("assistant", "tool")):
            found.append(f"message {i} is a tool result that follows no tool call")
            break
    for i, m in enumerate(messages):
        if m.role == "assistant" and not m.content and not m.tool_calls:
            found.append(f"message {i} is an assistant message with neither text nor tool calls")
            break
    for i in range(1, len(messages)):
        if messages[i].role == messages[i - 1].role and messages[i].role in ("user", "assistant"):
            found.append(f"messages {i - 1} and {i} are both {messages[i].role} messages")
            break
    if not found and any(m.role == "tool" or m.tool_calls for m in messages):
        found.append("it holds tool calls or tool results (some templates have no tool role)")
    return found
