"""What a session is: the model calls of one trace or transcript in order, and what changed from
each call to the next call of its conversation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..formats.model import ImportedRequest, Recorded, SpanNode
from ..formats.timing import unix_seconds

# Kinds of change between two calls of one conversation.
APPENDED = "appended"      # messages after everything the earlier call sent
INSERTED = "inserted"      # messages new to this call, with earlier messages kept after them
REMOVED = "removed"        # messages the earlier call sent that this one does not
REWRITTEN = "rewritten"    # a message in the same place whose content changed
COMPACTED = "compacted"    # several earlier messages replaced by fewer (a summary)
TOOLS = "tools"            # the tool definitions changed


def start_of(recorded: Recorded) -> float | None:
    """When the call started, in Unix seconds: a trace's span start, else the time a transcript records."""
    if recorded.start_time is not None:
        return recorded.start_time
    return unix_seconds(getattr(recorded, "started_at", None))


def conversation_of(recorded: Recorded) -> str | None:
    """The explicit conversation a call belongs to: ``gen_ai.conversation.id``, else the file's session id."""
    return recorded.conversation_id or getattr(recorded, "session_id", None)


@dataclass(frozen=True)
class Change:
    """One item of a call diff. ``before``/``after`` are message indices in the earlier and the later
    call (tool names for ``tools``); ``tokens_before``/``tokens_after`` their own text tokens."""

    kind: str
    before: list[int]
    after: list[int]
    tokens_before: int
    tokens_after: int
    roles: str
    preview: str  # the later call's first message of the change (the earlier call's where it has none)
    detail: str = ""
    preview_before: str = ""  # the earlier call's first message of the change, where it has one

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "roles": self.roles, "preview": self.preview,
                **({"preview_before": self.preview_before} if self.preview_before else {}),
                **({"detail": self.detail} if self.detail else {})}


@dataclass
class CallDiff:
    """The later call against the earlier call of its conversation.

    ``prefix_tokens``: the longest common prefix of the two rendered requests' token ids (what a prompt
    cache keyed on the prompt's beginning can reuse); ``prefix_messages``: the leading messages both
    sent unchanged. ``appended_tokens``: text tokens of messages new to the later call (appended or
    inserted); ``removed_tokens``: of messages it no longer sends (removed or compacted away);
    ``rewritten_tokens``: of the new text of rewritten messages and of compaction summaries."""

    earlier: int
    later: int
    prefix_tokens: int | None
    prefix_messages: int
    changes: list[Change] = field(default_factory=list)

    @property
    def appended_tokens(self) -> int:
        return sum(c.tokens_after for c in self.changes if c.kind in (APPENDED, INSERTED))

    @property
    def removed_tokens(self) -> int:
        return sum(c.tokens_before for c in self.changes if c.kind in (REMOVED, COMPACTED))

    @property
    def rewritten_tokens(self) -> int:
        return sum(c.tokens_after for c in self.changes if c.kind in (REWRITTEN, COMPACTED))

    @property
    def removes(self) -> bool:
        """Something the earlier call sent is gone: removed, compacted, or rewritten in place."""
        return any(c.kind in (REMOVED, COMPACTED, REWRITTEN) for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {"earlier": self.earlier, "later": self.later, "prefix_tokens": self.prefix_tokens,
                "prefix_messages": self.prefix_messages, "appended_tokens": self.appended_tokens,
                "removed_tokens": self.removed_tokens, "rewritten_tokens": self.rewritten_tokens,
                "changes": [c.to_json() for c in self.changes]}


@dataclass
class SessionCall:
    """One model call of the session, in start order (file order where no start time is recorded).

    ``input_tokens`` is the counter's count of the complete request; ``sections`` its tokens by section
    (each message's own text tokens, tools by their schema's text, ``template`` the rest), so they add up
    to ``input_tokens``. ``previous`` is the index of the earlier call of the same conversation."""

    index: int
    request: ImportedRequest
    conversation: int
    previous: int | None
    input_tokens: int | None
    sections: dict[str, int]
    message_tokens: list[int]
    error: str | None = None
    count_notes: list[str] = field(default_factory=list)
    span_path: list[SpanNode] = field(default_factory=list)  # the call's ancestors, root first

    @property
    def label(self) -> str:
        return self.request.label

    @property
    def model(self) -> str | None:
        return self.request.recorded.model

    @property
    def start_time(self) -> float | None:
        return start_of(self.request.recorded)

    @property
    def duration(self) -> float | None:
        r = self.request.recorded
        return r.end_time - r.start_time if r.start_time is not None and r.end_time is not None else None

    @property
    def conversation_id(self) -> str | None:
        return conversation_of(self.request.recorded)

    @property
    def recorded_cached_tokens(self) -> int | None:
        return self.request.recorded.cached_input_tokens

    @property
    def parent(self) -> SpanNode | None:
        return self.span_path[-1] if self.span_path else None


@dataclass
class Session:
    """A whole file's calls as a session: the calls, the diff of each call against its predecessor in
    its conversation (``diffs[i]`` for call ``i``, ``None`` for a conversation's first call), the span
    tree, and the window the calls are measured against (``None`` when unknown)."""

    path: str
    format: str
    counter_name: str
    calls: list[SessionCall]
    diffs: list[CallDiff | None]
    spans: list[SpanNode]
    context_window: int | None
    warnings: list[str] = field(default_factory=list)
    compare_calls: Callable[[int, int], CallDiff] | None = field(default=None, repr=False)

    def compare(self, earlier: int, later: int) -> CallDiff:
        """The diff of any two calls (``diffs`` holds each call against its predecessor)."""
        diff = self.diffs[later]
        if diff is not None and diff.earlier == earlier:
            return diff
        if self.compare_calls is None:
            raise ValueError("this session was not built with its counter; only consecutive diffs are known")
        return self.compare_calls(earlier, later)

    @property
    def peak(self) -> SessionCall | None:
        """The call with the most input tokens (the peak, not the sum)."""
        counted = [c for c in self.calls if c.input_tokens is not None]
        return max(counted, key=lambda c: c.input_tokens or 0) if counted else None

    @property
    def removal_calls(self) -> list[int]:
        return [i for i, d in enumerate(self.diffs) if d is not None and d.removes]

    def cached_share(self, index: int) -> float | None:
        """The predicted cached share of call ``index``'s input: its common prefix with its predecessor."""
        call, diff = self.calls[index], self.diffs[index]
        if not call.input_tokens:
            return None
        if diff is None:
            return 0.0
        return None if diff.prefix_tokens is None else diff.prefix_tokens / call.input_tokens

    def allowance(self, index: int) -> int | None:
        """The window less the output the call asked room for."""
        if self.context_window is None:
            return None
        return self.context_window - (self.calls[index].request.recorded.max_output_tokens or 0)
