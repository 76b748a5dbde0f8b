"""Variants of one request: the same question, passages and settings, built another way.

A variant is named by a short spec a person can type on the command line:

- ``default``: ``assemble(request)`` as the request says;
- ``evidence-first`` / ``history-first``: the other ``fill_order``;
- ``baseline``: ``naive_truncate`` (seed 003's baseline);
- ``limit=N``: the default assembly under a context limit of N tokens;
- ``plan``: the request expressed as a plan (``plan_from_request``) and assembled by the plan assembler,
  or, for a plan request file, its own plan;
- ``position=K``: every passage sent, the relevant one placed K-th (1 = first) and the others in their
  ranked order around it; ``positions`` expands to ``position=1`` ... ``position=N``.

Position variants hold everything else constant: if the budget cannot send every passage, the
position test is refused rather than run on a different set of passages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..assembly import assemble
from ..baseline import naive_truncate
from ..contracts import Request, parse_request
from ..counting import TokenCounter
from ..errors import ContextInspectorError
from ..render import evidence_ranking
from ..result import AssemblyResult

DEFAULT_VARIANTS = ("default", "evidence-first", "baseline")
_POSITION = re.compile(r"^position=(\d+)$")
_LIMIT = re.compile(r"^limit=(\d+)$")


class VariantError(ContextInspectorError):
    """A variant spec that cannot be built for this request (unknown name, position out of range...)."""


@dataclass(frozen=True)
class Subject:
    """What an experiment varies: a seed-003 request (possibly from a RAG file, with its receipts) or a
    plan request. ``finish`` attaches what the source adds to a result (RAG receipts)."""

    request: Request | None = None
    plan_request: Any = None
    finish: Callable[[AssemblyResult, Request, TokenCounter], AssemblyResult] | None = None
    relevant: str | None = None  # the passage the position test moves

    @property
    def label(self) -> str:
        source = self.request if self.request is not None else self.plan_request
        return getattr(source, "id", None) or "request"


def expand_specs(specs: list[str], subject: Subject) -> list[str]:
    """``positions`` becomes one ``position=K`` per passage; duplicates are refused."""
    out: list[str] = []
    for spec in specs:
        spec = spec.strip()
        if spec == "positions":
            count = len(subject.request.evidence) if subject.request is not None else 0
            if count < 2:
                raise VariantError("the position test needs a request with at least two evidence passages")
            out.extend(f"position={k}" for k in range(1, count + 1))
        elif spec:
            out.append(spec)
    seen: set[str] = set()
    for spec in out:
        if spec in seen:
            raise VariantError(f"variant {spec!r} is listed twice")
        seen.add(spec)
    if not out:
        raise VariantError("no variants to run")
    return out


def position_of(spec: str) -> int | None:
    match = _POSITION.match(spec)
    return int(match.group(1)) if match else None


def build_variant(spec: str, subject: Subject, counter: TokenCounter) -> AssemblyResult:
    """The assembled request of one variant (``RequiredContextTooLarge`` propagates)."""
    if subject.request is None:  # a plan request: only its own plan can be sent
        if spec != "plan":
            raise VariantError(f"variant {spec!r} needs a seed-003 request; a plan request file has only 'plan'")
        from ..plans import assemble_plan_request

        return assemble_plan_request(subject.plan_request, counter)
    request = subject.request
    if spec == "default":
        return _finish(subject, assemble(request, counter), request, counter)
    if spec in ("evidence-first", "history-first"):
        order = ["evidence", "history"] if spec == "evidence-first" else ["history", "evidence"]
        changed = _with(request, fill_order=order)
        return _finish(subject, assemble(changed, counter), changed, counter)
    if spec == "baseline":
        return _finish(subject, naive_truncate(request, counter), request, counter)
    if spec == "plan":
        from ..plans import ContextAssembler, plan_from_request

        from ..permissions import permitted, with_record

        plan, sections, tools = plan_from_request(request)
        result = ContextAssembler(plan, counter).assemble(sections, tools=tools)
        result.request_id = request.id
        shown, refused = permitted(request)
        return with_record(result, shown, refused) if refused or request.policy_version else result
    match = _LIMIT.match(spec)
    if match:
        changed = _with(request, context_limit=int(match.group(1)))
        return _finish(subject, assemble(changed, counter), changed, counter)
    position = position_of(spec)
    if position is not None:
        changed = placed(request, subject.relevant, position)
        result = assemble(changed, counter)
        if result.dropped_evidence:
            raise VariantError(f"{spec}: the budget drops {', '.join(result.dropped_evidence)}; the position test "
                               "sends every passage, so raise the context limit (--context-limit)")
        return _finish(subject, result, changed, counter)
    raise VariantError(f"unknown variant {spec!r} (default, evidence-first, history-first, baseline, plan, "
                       "limit=N, position=K, positions)")


def placed(request: Request, relevant: str | None, position: int) -> Request:
    """``request`` with its passages re-scored so the ranking puts ``relevant`` at ``position`` (1-based)
    and keeps the others in their ranked order; texts, ids and sources unchanged."""
    ids = [p.id for p in request.evidence]
    if relevant is None:
        raise VariantError("the position test needs the relevant passage's id (--relevant ID, or a rules file "
                           "whose must_cite_one_of names one passage)")
    if relevant not in ids:
        raise VariantError(f"the relevant passage {relevant!r} is not among the request's passages "
                           f"({', '.join(ids)})")
    if not 1 <= position <= len(ids):
        raise VariantError(f"position {position} is out of range: the request has {len(ids)} passages")
    ranked = [request.evidence[i] for i in evidence_ranking(request) if request.evidence[i].id != relevant]
    ranked.insert(position - 1, next(p for p in request.evidence if p.id == relevant))
    scores = {p.id: float(len(ranked) - k) for k, p in enumerate(ranked)}
    data = request.model_dump(mode="json")
    for passage in data["evidence"]:
        passage["score"] = scores[passage["id"]]
    return parse_request(data)


def _with(request: Request, **changes: Any) -> Request:
    data = request.model_dump(mode="json")
    data.update(changes)
    return parse_request(data)


def _finish(subject: Subject, result: AssemblyResult, request: Request, counter: TokenCounter) -> AssemblyResult:
    return subject.finish(result, request, counter) if subject.finish is not None else result


def load_subject(path: str, *, relevant: str | None = None) -> Subject:
    """The request file an experiment varies: a seed-003 request, a RAG windows request (its receipts
    go on every variant's result) or a plan request (only the ``plan`` variant)."""
    from ..loading import load_entries, load_request
    from ..rag import finish_rag_result

    entries = load_entries(path)
    if len(entries) == 1 and entries[0].kind == "plan":
        return Subject(plan_request=entries[0].extra["plan_request"], relevant=relevant)
    if len(entries) == 1 and entries[0].kind == "rag":
        loaded = entries[0].extra["rag"]

        def finish(result: AssemblyResult, request: Request, counter: TokenCounter) -> AssemblyResult:
            if result.strategy != "assemble":  # the baseline pastes passages raw: no receipts to attach
                return result
            return finish_rag_result(result, request, loaded.receipts, counter, loaded.extras)

        return Subject(request=loaded.request, finish=finish, relevant=relevant)
    return Subject(request=load_request(path), relevant=relevant)

