"""The default assembly and the default plans equal the reference on the model calls of the real files other tools
wrote (../shared/realworld and realworld2: provider bodies, cassettes, trace exports, agent transcripts), counted by
the embedded Mistral counter and the real Qwen3 and Gemma 4 tokenizers: at budgets that the kept items fill exactly
(and a token either side), plans with and without a system message. Such a sweep found two defects the synthetic
properties had not: Qwen3's empty thinking block on the reply that ends a prompt after a user message, and the
reasoning it leaves out of earlier replies (``tests/test_plans_turn_context.py``, ``tests/test_template_rewrites.py``).
A reduced sweep (the first, middle and last call of each file); skipped where the folders or tokenizers are absent."""
from __future__ import annotations

from functools import lru_cache

import pytest
from real_hf import real
from support import SHARED, default_counter

import core
from core.formats import to_core_request
from core.formats.importing import import_file
from core.plans import PlanRequest, assemble_plan_request, parse_plan, plan_from_request

ROOMY = 2_000_000


@lru_cache(maxsize=None)
def real_calls() -> list:
    folders = [SHARED / "realworld", SHARED / "realworld2"]
    if not all(folder.is_dir() for folder in folders):
        pytest.skip("../shared/realworld and realworld2 are absent")
    calls = []
    for path in sorted(p for folder in folders for p in folder.rglob("*")
                       if p.is_file() and p.suffix != ".md" and "chat-templates" not in p.parts):
        try:
            imported = import_file(path)
        except core.ContextInspectorError:  # a schema, not a trace: its own tests say so
            continue
        requests = imported.requests
        calls += [(path.name, requests[i]) for i in sorted({0, len(requests) // 2, len(requests) - 1}) if requests]
    assert len(calls) > 30  # the folders hold dozens of readable files
    return calls


def counter_of(name: str):
    return default_counter() if name == "mistral" else real(name)


def fill_points(result: core.AssemblyResult, pinned: tuple[str, ...]) -> list[int]:
    """Budgets the kept items fill exactly, from the pins up: the smallest, a middle one and the largest."""
    running = [sum(e.tokens for e in result.trace if e.decision in pinned)]
    for entry in result.trace:
        if entry.decision == "kept":
            running.append(running[-1] + entry.tokens)
    return sorted({running[0], running[len(running) // 2], running[-1]})


def outcome(fn) -> str:
    try:
        return fn().model_copy(update={"counting_note": None}).to_json()
    except (core.ContextInspectorError, ValueError) as exc:  # a refusal or an over-budget plan: both must say it
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("name", ["mistral", "qwen3", "gemma4"])
def test_default_equals_reference_on_real_model_calls(name):
    counter = counter_of(name)
    compared = 0
    for label, call in real_calls():
        try:
            roomy = to_core_request(call, context_limit=ROOMY, max_new_tokens=call.recorded.max_output_tokens or 256)
            everything = core.assemble(roomy, counter, reference=True)
        except core.ContextInspectorError:  # the counter's template refuses this call: the counting tests say so
            continue
        reserve = roomy.max_new_tokens + roomy.margin
        for budget in fill_points(everything, ("required",)):
            for nudge in (-1, 0, 1):
                request = roomy.model_copy(update={"context_limit": budget + nudge + reserve})
                fast = outcome(lambda: core.assemble(request, counter))
                assert fast == outcome(lambda: core.assemble(request, counter, reference=True)), (label, budget + nudge)
                compared += 1
        _, sections, tools = plan_from_request(roomy)
        for system in (True, False):
            for compaction in ("drop-oldest", "pin-and-fold"):
                layout = ([{"name": "instructions", "pinned": True}] if system else []) + [
                    {"name": "history", "share": 0.7, "compaction": compaction},
                    {"name": "tool_exchanges", "pinned": True},
                    {"name": "evidence", "compaction": "by-score", "into": "current"},
                    {"name": "current", "pinned": True}]
                given = {k: v for k, v in sections.items() if system or k != "instructions"}
                plan = PlanRequest(plan=parse_plan({"sections": layout, "budget_tokens": ROOMY}), sections=given,
                                   tools=tools)
                try:
                    whole = assemble_plan_request(plan, counter, reference=True)
                except (core.ContextInspectorError, ValueError):
                    continue
                for budget in fill_points(whole, ("pinned", "required"))[1:]:
                    edited = plan.model_copy(update={"plan": plan.plan.model_copy(update={"budget_tokens": budget})})
                    fast = outcome(lambda: assemble_plan_request(edited, counter))
                    assert fast == outcome(lambda: assemble_plan_request(edited, counter, reference=True)), \
                        (label, system, compaction, budget)
                    compared += 1
    assert compared > 100
