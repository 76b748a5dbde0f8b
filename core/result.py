"""The assembly result: the request sent, its counts, and one trace entry per item.

It is also the recorded-trace format the inspector opens (seed 004's shape, plus the counter's
identity and the request it was assembled from). Foreign keys in a recorded file (receipts,
diagnostics) are kept, not dropped, so nothing a person recorded disappears on load.
"""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .contracts import ChatMessage, Request, ToolDefinition, problems_from
from .counting import CounterIdentity
from .errors import RequestError

RESULT_FORMAT = "context-inspector/result@1"
SPAN_PREFIX = "context_inspector."  # span attribute names: context_inspector.input_tokens, ...

Decision = Literal["kept", "dropped", "required", "pinned", "summarised", "not permitted", "not rendered"]
DECISIONS: tuple[str, ...] = ("required", "pinned", "kept", "summarised", "dropped", "not permitted", "not rendered")
# decisions whose item is not in the prompt as itself ("not permitted": removed before selection, seed 001 3.3;
# "not rendered": sent, but the chat template left it out of the prompt it renders)
_DECISION_SET = frozenset(DECISIONS)
NOT_SENT: tuple[str, ...] = ("dropped", "summarised", "not permitted", "not rendered")
# Sections in prompt order, as the trace and the inspector name them.
SECTION_ORDER: tuple[str, ...] = ("template", "instructions", "tools", "history", "current",
                                  "tool_exchanges", "evidence")


class TraceEntry(BaseModel):
    """What happened to one item: kept, dropped, required...; its marginal tokens and why.

    Entries the core makes share their fields set and their empty extras (``_made``: a set of names per entry was
    half of a long history's trace); pydantic adds to either only in ``__setattr__`` (after a copy here) or in
    ``model_copy`` (after its own copy). Change an entry by assignment, never ``model_fields_set`` in place."""

    model_config = ConfigDict(extra="allow")

    section: str
    id: str
    decision: Decision
    tokens: int = Field(strict=True)
    reason: str
    rank: int | None = None
    score: float | None = None
    source: str | None = None
    message_indices: list[int] = Field(default_factory=list)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__pydantic_fields_set__:  # pydantic would add the name: copied first (shared, above)
            _set_fields(self, set(self.__pydantic_fields_set__))
            if self.__pydantic_extra__ is not None:
                _set_extra(self, dict(self.__pydantic_extra__))
        super().__setattr__(name, value)


_validate_entry = TraceEntry.__pydantic_validator__.validate_python


_new, _set = object.__new__, object.__setattr__


def _slot_setter(name: str):
    """The setter of pydantic's instance slot ``name`` (its descriptor's ``__set__``: what ``object.__setattr__``
    finds by name each time), or ``object.__setattr__`` by name where this pydantic keeps it elsewhere."""
    for klass in TraceEntry.__mro__:
        descriptor = vars(klass).get(name)
        if descriptor is not None and hasattr(descriptor, "__set__"):
            return descriptor.__set__
    return lambda obj, value: _set(obj, name, value)


_set_dict, _set_fields = _slot_setter("__dict__"), _slot_setter("__pydantic_fields_set__")
_set_extra, _set_private = _slot_setter("__pydantic_extra__"), _slot_setter("__pydantic_private__")
ITEM_FIELDS = frozenset(("section", "id", "decision", "tokens", "reason", "rank"))  # a history turn's entry
PASSAGE_FIELDS = ITEM_FIELDS | {"score", "source"}  # a passage's
REQUIRED_FIELDS = ITEM_FIELDS - {"rank"}  # a required item's
_PLAIN = frozenset(("rank", "score", "source"))  # the optional fields ``trace_entry`` can set without validation


def _made(section: str, id: str, decision: str, tokens: int, reason: str, rank: int | None,
          score: float | None, source: str | None, given: frozenset) -> TraceEntry:
    """The entry validation would make of these values (``given``: the fields set), built without validation: for
    values of the exact types the schema gives (``trace_entry`` checks them; a batched walk checks them once per
    request), where ``MADE_OK``."""
    entry = _new(TraceEntry)
    _set_dict(entry, {"section": section, "id": id, "decision": decision, "tokens": tokens, "reason": reason,
                      "rank": rank, "score": score, "source": source, "message_indices": []})
    fields = _SHARED.get(given)  # (the shared set of these names: ``_shared_fields`` makes it the first time)
    _set_fields(entry, fields if fields is not None else _shared_fields(given))
    _set_extra(entry, _NO_EXTRA)
    _set_private(entry, None)
    return entry


_SHARED: dict[frozenset, set] = {}  # one fields set per set of names, for every entry made with them
_NO_EXTRA: dict = {}  # the empty extras of every made entry (``TraceEntry.__setattr__`` copies before adding)


def _shared_fields(names: frozenset) -> set:
    fields = _SHARED.get(names)
    if fields is None:
        fields = _SHARED[names] = set(names)
    return fields


def set_message_indices(entry: TraceEntry, indices: list[int]) -> None:
    """``entry.message_indices = indices`` as pydantic's ``__setattr__`` does it for a plain field of a model that
    validates no assignment (the value kept, the field marked set: the shared set of those names), without its Python
    around it: for indices that are all ``int``, as the assemblers make them."""
    entry.__dict__["message_indices"] = indices
    fields = entry.__pydantic_fields_set__
    if "message_indices" not in fields:
        _set_fields(entry, _shared_fields(frozenset(fields) | _INDICES))


_INDICES = frozenset(("message_indices",))


def _state(entry: TraceEntry) -> tuple:
    return (type(entry), entry.__dict__, entry.__pydantic_fields_set__, entry.__pydantic_extra__,
            entry.__pydantic_private__, [type(v) for v in entry.__dict__.values()])


def _made_as_validated() -> bool:
    """Whether ``_made`` gives exactly the object validation makes (this pydantic's instance state)."""
    fields = dict(section="evidence", id="p", decision="dropped", tokens=3, reason="r", rank=2, score=0.5, source="s")
    short = {k: v for k, v in fields.items() if k in ITEM_FIELDS}
    return (_state(_made(**fields, given=PASSAGE_FIELDS)) == _state(_validate_entry(fields))
            and _state(_made(**short, score=None, source=None, given=ITEM_FIELDS)) == _state(_validate_entry(short)))


MADE_OK = _made_as_validated()
_GIVEN: dict[tuple, frozenset] = {(): REQUIRED_FIELDS, ("rank",): ITEM_FIELDS,
                                  ("rank", "score", "source"): PASSAGE_FIELDS}  # fields set, by the optional ones given


def trace_entry(section: str, id: str, decision: str, tokens: int, reason: str, **more: Any) -> TraceEntry:
    """``TraceEntry(section=..., ..., **more)``, the one way the core makes an entry: validated by the entry's schema
    (``TraceEntry.model_validate``, without ``BaseModel.__init__``'s Python around it, which costs twice the validation
    itself), or, where ``more`` holds only ``rank``, ``score`` and ``source`` and every value already has the exact
    type the schema gives it (``str``, an ``int`` for tokens and rank, a ``float`` score: validation would return the
    same objects) and this pydantic's instances are what ``_made`` makes (``MADE_OK``, checked at import), built
    without validation: an assembly makes one per candidate. The fields set are those given, as validation sets."""
    if MADE_OK and more.keys() <= _PLAIN:
        rank, score, source = more.get("rank"), more.get("score"), more.get("source")
        if (id.__class__ is str and tokens.__class__ is int and reason.__class__ is str
                and (rank is None or rank.__class__ is int) and (score is None or score.__class__ is float)
                and (source is None or source.__class__ is str) and decision in _DECISION_SET
                and section.__class__ is str):
            key = tuple(more)
            given = _GIVEN.get(key)
            if given is None:
                given = frozenset((*REQUIRED_FIELDS, *key))
                given = _GIVEN.setdefault(key, next((g for g in (ITEM_FIELDS, PASSAGE_FIELDS) if g == given), given))
            return _made(section, id, decision, tokens, reason, rank, score, source, given)
    return _validate_entry({"section": section, "id": id, "decision": decision, "tokens": tokens, "reason": reason,
                            **more})


class AssemblyResult(BaseModel):
    """One assembled request and the record of how it was built."""

    model_config = ConfigDict(extra="allow")

    format: str = RESULT_FORMAT
    strategy: str = "assemble"
    request_id: str | None = None
    messages: list[ChatMessage]
    tools: list[ToolDefinition] = Field(default_factory=list)
    input_tokens: int = Field(strict=True)
    input_budget: int = Field(strict=True)
    remaining_tokens: int = Field(strict=True)
    context_limit: int = Field(strict=True)
    max_new_tokens: int = Field(strict=True)
    margin: int = Field(strict=True)
    fill_order: list[str] = Field(default_factory=lambda: ["history", "evidence"])
    kept_evidence: list[str] = Field(default_factory=list)
    dropped_evidence: list[str] = Field(default_factory=list)
    kept_turns: int = 0
    dropped_turns: int = 0
    trace: list[TraceEntry] = Field(default_factory=list)
    counter: CounterIdentity | None = None
    request: Request | None = None
    counting_note: str | None = None  # set only when the fast count fell back to the reference

    # ---- derived figures the inspector and the audit share

    def section_tokens(self, decision: str | None = None) -> dict[str, int]:
        """Sum of trace tokens per section, optionally for one decision only."""
        totals: dict[str, int] = {}
        for entry in self.trace:
            if decision is None or entry.decision == decision:
                totals[entry.section] = totals.get(entry.section, 0) + entry.tokens
        return totals

    def sent_tokens_by_section(self) -> dict[str, int]:
        """Tokens of what was sent (everything but dropped and summarised items), per section."""
        totals: dict[str, int] = {}
        for entry in self.trace:
            if entry.decision not in NOT_SENT:
                totals[entry.section] = totals.get(entry.section, 0) + entry.tokens
        return totals

    def span_attributes(self) -> dict[str, int | str]:
        """Counts for a trace span, never content: entries and tokens per decision and per section,
        the budget figures, the counter's name (and the provider's figures for an imported request)."""
        p = SPAN_PREFIX
        attrs: dict[str, int | str] = {
            f"{p}strategy": self.strategy,
            f"{p}input_tokens": self.input_tokens, f"{p}input_budget": self.input_budget,
            f"{p}remaining_tokens": self.remaining_tokens, f"{p}context_limit": self.context_limit,
            f"{p}max_new_tokens": self.max_new_tokens, f"{p}margin": self.margin,
            f"{p}kept_turns": self.kept_turns, f"{p}dropped_turns": self.dropped_turns,
            f"{p}kept_evidence": len(self.kept_evidence), f"{p}dropped_evidence": len(self.dropped_evidence),
        }
        if self.counter is not None:
            attrs[f"{p}counter"] = self.counter.name
        for decision in DECISIONS:
            chosen = [e for e in self.trace if e.decision == decision]
            attrs[f"{p}entries.{decision}"] = len(chosen)
            attrs[f"{p}tokens.{decision}"] = sum(e.tokens for e in chosen)
        sections = [s for s in SECTION_ORDER if any(e.section == s for e in self.trace)]
        sections += sorted({e.section for e in self.trace} - set(sections))
        for section in sections:
            mine = [e for e in self.trace if e.section == section]
            out = [e for e in mine if e.decision in ("dropped", "summarised")]
            attrs[f"{p}section.{section}.items"] = len(mine)
            attrs[f"{p}section.{section}.tokens"] = sum(e.tokens for e in mine if e not in out)
            for decision in ("dropped", "summarised", "pinned"):
                attrs[f"{p}section.{section}.{decision}"] = sum(e.decision == decision for e in mine)
            attrs[f"{p}section.{section}.dropped_tokens"] = sum(e.tokens for e in mine if e.decision == "dropped")
            attrs[f"{p}section.{section}.summarised_tokens"] = sum(
                e.tokens for e in mine if e.decision == "summarised")
        for key in ("provider_input_tokens", "count_drift"):
            value = (self.model_extra or {}).get(key)
            if isinstance(value, int):
                attrs[f"{p}{key}"] = value
        return attrs

    @property
    def over_budget(self) -> bool:
        return self.input_tokens > self.input_budget

    def to_json(self) -> str:
        from .permissions import recorded_json  # the request's logging policy decides what is kept

        data = recorded_json(self)
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_result(data: Any, *, source: str | None = None) -> AssemblyResult:
    if not isinstance(data, dict):
        raise RequestError([("", f"a result must be a JSON object, not {type(data).__name__}")], source=source)
    try:
        return AssemblyResult.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None


def looks_like_result(data: Any) -> bool:
    return isinstance(data, dict) and "trace" in data and "messages" in data


def looks_like_request(data: Any) -> bool:
    # either key is enough: a request missing the other is then refused naming the missing field
    return isinstance(data, dict) and "trace" not in data and ("current" in data or "instructions" in data)
