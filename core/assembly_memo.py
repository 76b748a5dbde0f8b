"""What the default assembly of one request works out that another assembly of its content can reuse.

A replay assembles a request again under another context limit, output reserve, margin or fill order. All
the default assembly works out before it weighs an item against the allowance depends on the request's
content and the counter alone: the passages and tool results neutralised against the counter's control
tokens, whether a Jinja template may compare two user messages by value, each item's text count, what the
template does with whitespace at a message's edges, each history turn's shape and the shape constants
learned from probe requests, each passage's rendered ``<evidence>`` block and each history turn's chat messages. ``memo_for`` keeps that per
counter (on the counter object, so another counter never sees it), keyed by the request's whole content
except its budget fields (``content_key``): a request that differs in any text, id, score, order, tool,
tool call, grant or policy field is another entry. Decisions, the trace and the final complete count are
made again by every assembly, so a reused memo gives the result a fresh one gives. The builders' counts of
the selections they render (``Builder._render_count``) are kept here too, so a replay in a worker process,
whose request arrives unpickled as new objects, finds them as a replay in the recording's process does.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from operator import is_
from typing import Any, Callable

from .contracts import Request
from .counting import TokenCounter

# Requests whose memos a counter keeps (the inspector replays one row at a time; a sweep, one request).
MEMO_REQUESTS = 4
# Request fields a replay edits: the only ones left out of the key.
BUDGET_FIELDS = frozenset({"context_limit", "max_new_tokens", "margin", "fill_order"})
# What ``FastBuilder`` learns that depends on the request's content and the counter only.
# ``_required``: each required item's marginal count (its probes'). ``_built_turns``: each history turn's chat
# messages (frozen models), which its probes and final renders hold.
BUILDER_STATE = ("constants", "_text_memo", "_required", "_trims", "_apart", "_built_turns")
BUILDER_ONCE = ("_merges_users", "_shapes")  # learned once (None until then)


def _json(value: Any) -> str:
    """A JSON value exactly (key order kept; ``True``, ``1`` and ``1.0`` differ)."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def _calls(calls) -> tuple:
    return tuple((c.id, c.name, _json(c.arguments), c.raw_arguments) for c in calls)


def _labels(labels) -> tuple | None:
    return None if labels is None else tuple(labels)


def content_key(request: Request) -> tuple:
    """The request's content without its budget fields, exactly: equal keys, equal content. Every field of
    every model a request holds is in it (``tests/test_assembly_memo.py`` checks none is left out)."""
    return (
        request.id, request.instructions, request.current,
        tuple((t.name, t.description, _json(t.parameters), _labels(t.access)) for t in request.tools),
        tuple((m.role, m.content, m.tool_call_id, m.id, _calls(m.tool_calls) if m.tool_calls else ())
              for m in request.history),
        tuple((x.content, _calls(x.calls), tuple((r.tool_call_id, r.content) for r in x.results))
              for x in request.tool_exchanges),
        tuple((p.id, p.source, p.text, p.score, type(p.score), _labels(p.access)) for p in request.evidence),
        request.policy_version, request.instructions_version, _labels(request.grants),
        None if request.logging is None else request.logging.model_dump_json(),
    )


class RequestMemo:
    """One request content's reusable state with one counter."""

    def __init__(self, key: tuple | None) -> None:
        self.key = key  # ``content_key`` of its request (``None`` until another request is looked up: ``memo_for``)
        self.request: Request | None = None  # the request it was last found for
        self.parts: tuple = ()  # the objects of the request it was last found for (``_parts``)
        self.neutralised: tuple[list, list, list] | None = None  # (evidence, tool_exchanges, what changed)
        self.repeated: tuple[str | None] | None = None
        self.builder: dict[str, Any] = {name: {} for name in BUILDER_STATE}
        self.builder.update({name: None for name in BUILDER_ONCE})
        self.blocks = None  # the passages' evidence blocks (``render.EvidenceBlocks``), by index
        self.counts: OrderedDict = OrderedDict()  # selection -> the counter's count of its render (the builders')

    def neutralise(self, request: Request, neutralise: Callable) -> tuple[Request, list]:
        """``neutralise(request)`` (``neutralise_request`` with the counter), its answer for this content
        applied to ``request``'s budget fields: the same object when nothing was changed."""
        if self.neutralised is None:
            done, changed = neutralise(request)
            self.neutralised = (done.evidence, done.tool_exchanges, changed)
            return done, changed
        evidence, exchanges, changed = self.neutralised
        if not changed:
            return request, []
        return request.model_copy(update={"evidence": evidence, "tool_exchanges": exchanges}), list(changed)

    def repeated_text(self, request: Request, find: Callable) -> str | None:
        if self.repeated is None:
            self.repeated = (find(request),)
        return self.repeated[0]

    def lend(self, builder) -> None:
        """Give ``builder`` what earlier assemblies of this content learned (it adds to the same dicts): the
        counts of the selections they rendered, and what the default's ``FastBuilder`` learned."""
        builder.remember_counts_in(self.counts, self)
        if not hasattr(builder, "constants"):  # the reference builder: counts only
            return
        for name in BUILDER_STATE:
            setattr(builder, name, self.builder[name])
        for name in BUILDER_ONCE:
            if self.builder[name] is not None:
                setattr(builder, name, self.builder[name])
        blocks = getattr(builder, "blocks", None)
        if self.blocks is None:
            self.blocks = blocks
        elif blocks is not None:  # the same content: the same blocks, for this request's (equal) passages
            self.blocks.evidence = builder.request.evidence
            builder.blocks = self.blocks

    def keep(self, builder) -> None:
        """What ``builder`` learned once (a dict it was lent it filled in place)."""
        for name in BUILDER_ONCE:
            value = getattr(builder, name, None)
            if value is not None:
                self.builder[name] = value


def _parts(request: Request) -> tuple:
    """The objects the request's content is made of, in one flat tuple (sections apart by a marker)."""
    return (request.id, request.instructions, request.current, request.policy_version, request.instructions_version,
            request.logging, _MARK, *(request.grants or ()), _MARK, *request.tools, _MARK, *request.history, _MARK,
            *request.tool_exchanges, _MARK, *request.evidence)


_MARK = object()


def _same_objects(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(map(is_, a, b))


def memo_for(request: Request, counter: TokenCounter) -> RequestMemo:
    """The memo of ``request``'s content for ``counter`` (a new one for content it has not assembled).

    A request made of the very objects a memo was made for (a replay's edited copy shares them: a request's
    models are frozen and its strings immutable) is found by identity, without building the content key;
    any other request by its content key (a replay in a worker process receives the request unpickled). The
    memos are a short list, newest last, searched without hashing a key (a tuple's hash is not kept: hashing
    the content key of 300 passages cost more than a tenth of a small replay)."""
    memos: list[RequestMemo] = counter.__dict__.setdefault("_request_memos", [])
    parts = _parts(request)
    found = next((n for n in range(len(memos) - 1, -1, -1) if _same_objects(memos[n].parts, parts)), None)
    if found is None and not memos:  # the counter's first request: keyed when another request may equal it
        memos.append(RequestMemo(None))
        found = 0
    elif found is None:
        for memo in memos:
            if memo.key is None:  # the first request's memo, keyed now
                memo.key = content_key(memo.request)
        key = content_key(request)
        found = next((n for n, memo in enumerate(memos) if memo.key == key), None)
        if found is None:
            memos.append(RequestMemo(key))
            del memos[:-MEMO_REQUESTS]
            found = len(memos) - 1
    memo = memos[found]
    if found != len(memos) - 1:  # the most recently used last
        memos.append(memos.pop(found))
    memo.parts, memo.request = parts, request  # holding them keeps their ids from being reused
    return memo
