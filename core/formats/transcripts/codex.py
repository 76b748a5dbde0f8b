"""OpenAI Codex CLI rollouts: ``{timestamp, type, payload}`` lines. ``response_item`` payloads are the
Responses API items of the conversation (read by the Responses item reader), ``session_meta`` holds
the instructions, ``turn_context`` the model of the turns that follow, ``event_msg`` token counts
(and UI events that repeat the items), ``compacted`` a replacement history after a compaction.
Older rollouts have a first line with the session's id and instructions, then bare items.

Each run of model-produced items (reasoning, an assistant message, function calls) is one model call
whose input is the conversation before it.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ..model import ImportedRequest, ImportNote, Recorded
from ..normalise import Context, Draft, Malformed, Outcome, finish, output_messages, shown_names, updated
from ..providers.responses import ItemReader, is_assistant_item, usage_figures
from . import CODEX

RECONSTRUCTED = ("reconstructed from a Codex rollout: the input is the conversation before this turn; the tool "
                 "definitions Codex sent are not recorded, so the provider's input-token figure includes tokens "
                 "this request lacks")


class _Call:
    def __init__(self, drafts: list[Draft], ctx: Context, place: str, stamp: Any, model: str | None,
                 session: str | None, notes: int):
        self.drafts = list(drafts)
        self.warnings = list(ctx.warnings[:notes])
        self.placeholders = dict(ctx.placeholders)
        self.place = place
        self.stamp = stamp if isinstance(stamp, str) else None
        self.model = model
        self.session = session
        self.items: list[tuple[str, Any]] = []
        self.usage: dict[str, int | None] = {}
        self.broken: Malformed | None = None


class _Rollout:
    def __init__(self) -> None:
        self.ctx = Context()
        self.reader = ItemReader(self.ctx)
        self.system: Draft | None = None
        self.model: str | None = None
        self.session: str | None = None
        self.calls: list[_Call] = []
        self.in_turn = False
        self.other: Counter[str] = Counter()
        self.notes: list[ImportNote] = []
        self.broken: Malformed | None = None  # an unreadable item: the calls after it cannot be rebuilt

    def meta(self, payload: dict[str, Any], place: str) -> None:
        ident = payload.get("id")
        if self.session is not None and ident != self.session:
            self.notes.append(ImportNote(place, f"another session_meta ({ident}): a resumed, forked or sub-agent "
                                                "session; its items continue the same conversation here"))
        self.session = ident if isinstance(ident, str) else self.session
        instructions = payload.get("instructions")
        base = payload.get("base_instructions")
        if isinstance(base, dict) and isinstance(base.get("text"), str):
            instructions = base["text"]
        if isinstance(instructions, str) and self.system is None:
            self.system = Draft("system", instructions, f"{place}.instructions")
            self.reader.drafts.insert(0, self.system)

    def item(self, item: Any, place: str, stamp: Any) -> None:
        if not isinstance(item, dict):
            raise Malformed(place, f"a response item must be an object, found {type(item).__name__}")
        if item.get("type") in ("ghost_snapshot", "agent_message") or (item.get("type") == "message"
                                                                        and item.get("role") is None):
            self.other[f"response_item/{item.get('type')}"] += 1
            return
        if is_assistant_item(item):
            if not self.in_turn:
                self.reader.close()
                self.calls.append(_Call(self.reader.drafts, self.ctx, place, stamp, self.model, self.session,
                                        len(self.ctx.warnings)))
                self.calls[-1].broken = self.broken
                self.in_turn = True
            self.calls[-1].items.append((place, item))
        else:
            self.in_turn = False
        try:
            self.reader.add(item, place)
        except Malformed as exc:
            self.reader.close()
            if self.broken is None:
                self.broken = exc

    def compacted(self, payload: dict[str, Any], place: str) -> None:
        self.in_turn = False
        history = payload.get("replacement_history")
        self.ctx.warn(place, "the conversation was compacted here: later turns start from the replacement history")
        self.reader = ItemReader(self.ctx)
        self.broken = None
        if self.system is not None:
            self.reader.drafts.append(self.system)
        if isinstance(history, list):
            for i, item in enumerate(history):  # the replacement's own assistant items are not new calls
                try:
                    self.reader.add(item, f"{place}.replacement_history[{i}]")
                except Malformed as exc:
                    self.broken = self.broken or exc
            self.reader.close()
        elif isinstance(payload.get("message"), str):
            self.reader.drafts.append(Draft("user", payload["message"], f"{place}.message"))

    def event(self, payload: dict[str, Any], place: str) -> None:
        kind = payload.get("type")
        info = payload.get("info") if isinstance(payload.get("info"), dict) else None
        if kind == "token_count" and info is not None and self.calls and not self.calls[-1].usage:
            self.calls[-1].usage = usage_figures(info.get("last_token_usage"))
        else:
            self.other[f"event_msg/{kind}"] += 1


def import_codex(records: list[tuple[int | None, Any]]) -> Outcome:
    rollout = _Rollout()
    for number, value in records:
        place = f"line {number}" if number is not None else "top level"
        if not isinstance(value, dict):
            raise Malformed(place, f"a rollout line must be an object, found {type(value).__name__}")
        kind = value.get("type")
        payload = value.get("payload")
        if kind in ("session_meta", "response_item", "turn_context", "event_msg", "compacted") \
                and not isinstance(payload, dict):
            raise Malformed(f"{place}.payload", f"a {kind} line needs a payload object")
        if kind == "session_meta":
            rollout.meta(payload, f"{place}.payload")
        elif kind == "response_item":
            rollout.item(payload, f"{place}.payload", value.get("timestamp"))
        elif kind == "turn_context":
            model = payload.get("model")
            rollout.model = model if isinstance(model, str) else rollout.model
        elif kind == "event_msg":
            rollout.event(payload, f"{place}.payload")
        elif kind == "compacted":
            rollout.compacted(payload, f"{place}.payload")
        elif number == records[0][0] and "instructions" in value and "payload" not in value:  # older rollouts
            rollout.meta(value, place)
        elif "record_type" in value:
            rollout.other["record_type/" + str(value.get("record_type"))] += 1
        elif kind is not None and "payload" not in value:  # older rollouts: bare items
            rollout.item(value, place, value.get("timestamp"))
        else:
            rollout.other[str(kind)] += 1
    out = Outcome(warnings=list(rollout.notes))
    if rollout.other:
        out.warnings.append(ImportNote("", "lines not read as conversation (UI events, settings, snapshots): "
                                           + shown_names([f"{n} {k}" for k, n in rollout.other.most_common()], 8)))
    for number, call in enumerate(rollout.calls, start=1):
        try:
            out.requests.append(_request(call, number))
        except Malformed as exc:
            out.fail(exc, "model turn")
    return out


def _request(call: _Call, number: int) -> ImportedRequest:
    if call.broken is not None:
        raise call.broken
    if not any(d.role != "system" for d in call.drafts):
        raise Malformed(call.place, "this model turn has no conversation before it in the file")
    ctx = Context()
    ctx.warnings = list(call.warnings)
    ctx.placeholders = dict(call.placeholders)
    ctx.warn(call.place, RECONSTRUCTED)
    reader = ItemReader(Context())
    for place, item in call.items:
        try:
            reader.add(item, place)
        except Malformed as exc:
            ctx.warn(exc.place, f"the recorded answer is not fully read: {exc.problem}")
    label = f"turn {number} ({call.place.split('.')[0]})"
    recorded = Recorded(format=CODEX, model=call.model, provider="openai", name=label, source_place=call.place,
                        started_at=call.stamp, session_id=call.session, reconstructed=True)
    recorded = updated(recorded, **call.usage)
    return finish(label, call.drafts, [], recorded, ctx, output=output_messages(reader.drafts))
