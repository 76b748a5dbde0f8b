"""Benchmarks for plans (issue 15: "plans (each of the four strategies)", shapes, both counters), printed as
ratios measured side by side in one run (not timed tests).

    .venv/bin/python -m tests.benchmarks.bench_plans            (or: make bench)
    .venv/bin/python -m tests.benchmarks.bench_plans --quick    (smaller sizes, for a smoke run)
    .venv/bin/python -m tests.benchmarks.bench_plans --no-hf    (only --counter, not the hf: counter too)
    ... --cpu          (CPU time of this process instead of wall time: steadier on a loaded machine)
    ... --cases-only   (the strategy and shape cases only)
    ... --scale        (only the history shapes at 300, 1,000 and 2,000 turns: each ratio against its 300-turn one)

Each case runs under ``--counter`` (mistral: by default) and an ``hf:`` counter (the real Qwen3 tokenizer
of ../shared/tokenizers/hf/qwen3 when present, else the toy tokenizer of the test suite). Every default
assembly starts from a counter whose caches and learned constants are empty; its time is divided by the
time of one complete count of the prompt with every candidate in it, the two measured in turn (best of
several), so both see the same load on a shared machine. The reference runs once per case where it is
expected to cost at most ``--reference-seconds`` (from the count's time and the number of candidates),
and its result is compared byte for byte with the default's.
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
from types import SimpleNamespace

from core import ContextAssembler, ContextPlan, Message, SectionPlan, SummariseSpan, make_counter, parse_request
from core.errors import ContextInspectorError
from core.plans import plan_from_request

from .bench_assembly import Clock, best
from .bench_shapes import _history, hf_spec
from .workload import large_request, sentence, text_of

STRATEGIES = ("drop-oldest", "pin-and-fold", "newest-turns", "summarise-span")
SHAPES = ("plain", "newline", "tool calls", "single", "reasoning")  # history shapes (``shape_plan``)


class FixedSummariser:
    """A summariser that answers at once with the same text (the model call is not what is measured)."""

    def summarise(self, span, *, cancel=None):
        return "Earlier, the user and the assistant discussed the cluster, its disks and the rollback plan."


def seed_002_plan(passages: int, turns: int, compaction: str, *, seed: int = 11,
                  recent_share: float = 0.2) -> tuple[ContextPlan, dict, list]:
    """Seed 002's example plan, grown: pinned system and constraints, a profile, a long recent history
    under ``compaction`` (over its share, so the strategy has work to do), passages ranked by score into
    the question."""
    request = large_request(passages, turns, 16, seed=seed)
    rng = random.Random(seed)
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True),
                                 SectionPlan("constraints", pinned=True),
                                 SectionPlan("profile", share=0.05),
                                 SectionPlan("recent", share=recent_share, compaction=compaction),
                                 SectionPlan("evidence", compaction="by-score", into="question"),
                                 SectionPlan("question", pinned=True)),
                       budget_tokens=32768, reserve_output_tokens=1024)
    data = {
        "system": [Message(role="system", content=request["instructions"])],
        "constraints": [Message(role="user", content=sentence(rng, 14), id=f"c{i}") for i in range(3)],
        "profile": [Message(role="user", content=sentence(rng, 20), id=f"p{i}") for i in range(6)],
        "recent": [Message(role=m["role"], content=m["content"], id=m.get("id") or f"r{i}")
                   for i, m in enumerate(request["history"])],
        "evidence": [Message(role="user", content=e["text"], id=e["id"], source=e["source"], score=e["score"])
                     for e in request["evidence"]],
        "question": [Message(role="user", content=text_of(rng, 20), id="q")],
    }
    return plan, data, parse_request(request).tools


def long_section_plan(entries: int, compaction: str, *, seed: int = 3) -> tuple[ContextPlan, dict]:
    """A pinned system message, one section of ``entries`` alternating messages under ``compaction``, a
    pinned question; an 8k budget, so the strategy evicts most of the section."""
    rng = random.Random(seed)
    messages = [Message(role="user" if i % 2 == 0 else "assistant", content=text_of(rng, rng.randint(5, 30)),
                        id=f"m{i}") for i in range(entries)]
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction=compaction),
                                 SectionPlan("q", pinned=True)), budget_tokens=8192, reserve_output_tokens=512)
    return plan, {"system": [Message(role="system", content="Be brief.")], "recent": messages,
                  "q": [Message(role="user", content="What now?", id="q")]}


def shape_plan(shape: str, turns: int, compaction: str) -> tuple[ContextPlan, dict, list]:
    """A history of bench_shapes' ``shape`` (plain turns, turns ending in a newline, turns with tool calls,
    single-message turns, replies that keep their reasoning) in one section under ``compaction``, between a pinned system message and a
    pinned question, with one tool; the budget about an eighth of the history's characters (a third of
    that for single-message turns, as bench_shapes has it), so the strategy evicts part of it."""
    kind = {"plain": {}, "newline": {"newline": True}, "tool calls": {"tools": True}, "single": {"single": True},
            "reasoning": {"reasoning": True}}[shape]
    history = _history(turns, random.Random(5), **kind)
    roomy = sum(len(m["content"] or "") for m in _history(turns, random.Random(5))) // 8
    request = parse_request(large_request(0, 0, 1, context_limit=roomy // 3 if shape == "single" else roomy))
    messages = [Message(role=m["role"], content=m["content"], id=m.get("id") or f"m{i}",
                        tool_calls=m.get("tool_calls") or [], tool_call_id=m.get("tool_call_id"))
                for i, m in enumerate(history)]
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("history", compaction=compaction),
                                 SectionPlan("question", pinned=True)),
                       budget_tokens=request.context_limit, reserve_output_tokens=512)
    return plan, {"system": [Message(role="system", content=request.instructions)], "history": messages,
                  "question": [Message(role="user", content="What changed since the last deploy?", id="q")]}, \
        list(request.tools)


def everything(plan: ContextPlan, sections: dict) -> list:
    """The prompt with every candidate of every section in it."""
    return ContextAssembler._render([SimpleNamespace(plan=s) for s in plan.sections],
                                    {s.name: list(sections.get(s.name, [])) for s in plan.sections})


def fresh_counter(spec: str, warm_with) -> object:
    counter = make_counter(spec)
    warm_with(counter)  # the tokenizer itself warm, its caches empty
    counter._cache.clear()
    counter._text_cache.clear()
    counter.__dict__.pop("_plan_constants", None)
    return counter


def side_by_side(spec: str, plan, sections, tools, repeats: int, strategies) -> tuple[float, int, float, dict, object]:
    """Best of ``repeats`` of one complete count of every candidate and of a default assembly on a counter
    with empty caches, taken in turn."""
    messages = everything(plan, sections)
    counter = make_counter(spec)
    tokens = len(counter.token_ids(messages, tools))
    counts, fasts, stats, result = [], [], {}, None
    for _ in range(repeats):
        gc.collect()
        start = Clock.now()
        counter.token_ids(messages, tools)
        counts.append(Clock.now() - start)
        fresh = fresh_counter(spec, lambda c: c.token_ids(messages, tools))
        assembler = ContextAssembler(plan, fresh, strategies=strategies)
        gc.collect()
        start = Clock.now()
        result = assembler.assemble(sections, tools=tools, stats=stats)
        fasts.append(Clock.now() - start)
    return min(counts), tokens, min(fasts), stats, result


def reference_seconds(spec: str, plan, sections, tools, strategies) -> tuple[float, dict, object]:
    messages = everything(plan, sections)
    counter = fresh_counter(spec, lambda c: c.token_ids(messages, tools))
    stats: dict = {}
    gc.collect()
    start = Clock.now()
    result = ContextAssembler(plan, counter, strategies=strategies, reference=True).assemble(
        sections, tools=tools, stats=stats)
    return Clock.now() - start, stats, result


HEADER = ("case                                    tokens(all) count_ms  plan_ms  ratio  full  evicted"
          "     ref_ms  ref/def  ref_full  result")


def report(label: str, spec: str, plan, sections, tools, repeats: int, *, reference_limit: float,
           strategies=None) -> float | None:
    """One row of ``HEADER``; the default's ratio to one complete count (``None``: refused)."""
    try:
        count_s, tokens, fast_s, stats, fast = side_by_side(spec, plan, sections, tools, repeats, strategies)
    except ContextInspectorError as exc:  # the reference refuses it the same way (the plan tests check that)
        print(f"{label:<40} refused: {str(exc)[:150]}", flush=True)
        return None
    evicted = sum(e.decision in ("dropped", "summarised") for e in fast.trace)
    line = (f"{label:<40} {tokens:8d} {count_s * 1000:8.1f} {fast_s * 1000:8.1f} {fast_s / count_s:6.2f}"
            f" {stats['full_counts']:5d} {evicted:8d}")
    candidates = sum(len(v) for v in sections.values())
    if count_s * candidates <= reference_limit:  # the reference: about two counts per candidate, most of them smaller
        ref_s, ref_stats, slow = reference_seconds(spec, plan, sections, tools, strategies)
        same = "same" if slow.to_json() == fast.model_copy(update={"counting_note": None}).to_json() else "DIFFERENT"
        line += f" {ref_s * 1000:10.0f} {ref_s / fast_s:8.1f} {ref_stats['full_counts']:9d}  {same}"
    else:
        line += f" {'skipped':>10} {'-':>8} {'-':>9}  -   (over --reference-seconds)"
    note = f"  (fell back: {fast.counting_note})" if fast.counting_note else ""
    print(line + note, flush=True)
    return fast_s / count_s


def bench_cases(spec: str, quick: bool, repeats: int, reference_limit: float, strategies) -> None:
    print(f"\n## plans, counter {spec}: default plan assembly / one complete count of every candidate "
          "(target <= 2.5), reference / default (target >= 30 where the reference costs over 30 complete "
          "counts), byte-identical check")
    print("(full = complete counts of the default; evicted = entries dropped or summarised; result: the "
          "default's bytes against the reference's)")
    print(HEADER, flush=True)
    request = parse_request(large_request(300, 100, 16, context_limit=32768))
    plan, sections, tools = plan_from_request(request)
    report("seed-003 request as a plan, 300", spec, plan, sections, tools, repeats, reference_limit=reference_limit)
    for compaction in STRATEGIES:
        plan, sections, tools = seed_002_plan(300, 100, compaction)
        report(f"seed-002 plan, {compaction}", spec, plan, sections, tools, repeats,
               reference_limit=reference_limit, strategies=strategies)
    turns = 100 if quick else 300
    for shape in SHAPES:
        for compaction in STRATEGIES:
            plan, sections, tools = shape_plan(shape, turns, compaction)
            report(f"{turns} {shape} turns, {compaction}", spec, plan, sections, tools, repeats,
                   reference_limit=reference_limit, strategies=strategies)


def bench_turn_scaling(spec: str, quick: bool, repeats: int, reference_limit: float, strategies) -> None:
    """Each history shape under each strategy at 300 turns and more: the ratio should stay within 25% of its
    300-turn value (issue 15's scale target, asked of plans as of assembly); the reference where it runs within
    ``reference_limit`` seconds."""
    sizes = (300, 1000) if quick else (300, 1000, 2000)
    print(f"\n## plans over longer histories, counter {spec}: the ratio at each length against its 300-turn ratio "
          "(target within 25%)")
    print(HEADER, flush=True)
    summary = []
    for shape in SHAPES:
        for compaction in STRATEGIES:
            ratios = []
            for turns in sizes:
                plan, sections, tools = shape_plan(shape, turns, compaction)
                ratios.append(report(f"{turns} {shape} turns, {compaction}", spec, plan, sections, tools, repeats,
                                     reference_limit=reference_limit if turns == 300 else 0, strategies=strategies))
            if ratios[0] is not None and None not in ratios:
                summary.append(f"{shape + ' turns, ' + compaction:<32} " + "  ".join(
                    f"{n}: {r / ratios[0]:.2f}" for n, r in zip(sizes[1:], ratios[1:])))
    print("ratio / its 300-turn ratio (target <= 1.25):")
    print("\n".join(summary), flush=True)


def bench_replay(spec: str, repeats: int) -> None:
    print("\n## replay: the same plan again at a new budget on the warm counter (what a limit edit does), "
          f"counter {spec}")
    print("budget   plan_ms  / one complete count of every candidate  full  items")
    plan, sections, tools = seed_002_plan(300, 100, "newest-turns")
    messages = everything(plan, sections)
    counter = fresh_counter(spec, lambda c: c.token_ids(messages, tools))
    count_s = best(lambda: counter.token_ids(messages, tools), repeats)
    counter._cache.clear()
    ContextAssembler(plan, counter).assemble(sections, tools=tools)  # the recording, opened once
    for budget in (30000, 24576, 16384, 8192):
        edited = plan.model_copy(update={"budget_tokens": budget})
        stats: dict = {}
        elapsed = best(lambda: ContextAssembler(edited, counter).assemble(sections, tools=tools, stats=stats), repeats)
        print(f"{budget:6d}  {elapsed * 1000:8.1f}  {elapsed / count_s:6.2f}x{'':34}{stats['full_counts']:4d}"
              f"  {stats['item_counts']:5d}")


def bench_long_sections(spec: str, quick: bool, strategies) -> None:
    print(f"\n## long sections (issue 14's cliff: 10^4 plan entries took 238 s): one section of N messages "
          f"under an 8k budget, counter {spec}")
    print("(one assembly each on a fresh counter; 'same' compares with the reference where it runs in seconds)")
    print("entries  strategy          seconds  ms/entry  evicted  result")
    for n in ([1000, 3000] if quick else [1000, 3000, 10000]):
        for compaction in ("drop-oldest", "newest-turns", "pin-and-fold", "summarise-span"):
            plan, sections = long_section_plan(n, compaction)
            assembler = ContextAssembler(plan, make_counter(spec), strategies=strategies)
            start = Clock.now()
            result = assembler.assemble(sections)
            elapsed = Clock.now() - start
            same = ""
            if n <= 1000:
                slow = ContextAssembler(plan, make_counter(spec), strategies=strategies, reference=True).assemble(sections)
                same = "same" if slow.to_json() == result.model_copy(update={"counting_note": None}).to_json() \
                    else "DIFFERENT"
            evicted = sum(e.decision in ("dropped", "summarised") for e in result.trace)
            print(f"{n:7d}  {compaction:<16} {elapsed:8.2f}  {elapsed * 1000 / n:8.3f}  {evicted:7d}  {same}", flush=True)


def bench_scaling(spec: str, quick: bool, repeats: int) -> None:
    print(f"\n## scaling: the seed-003 request as a plan, 100 turns, 16 tools, counter {spec}")
    print(HEADER)
    for n in ([100, 300] if quick else [100, 300, 1000, 3000]):
        request = parse_request(large_request(n, 100, 16, context_limit=max(32768, n * 110)))
        plan, sections, tools = plan_from_request(request)
        report(f"{n} passages", spec, plan, sections, tools, repeats, reference_limit=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--counter", default="mistral:tekken_240911")
    parser.add_argument("--no-hf", action="store_true", help="only the --counter, not the hf: counter too")
    parser.add_argument("--cpu", action="store_true", help="time in process CPU time (a loaded machine), not wall time")
    parser.add_argument("--cases-only", action="store_true", help="only the strategy and shape cases (no replay, "
                        "long sections or scaling)")
    parser.add_argument("--scale", action="store_true", help="only the history shapes at 300, 1,000 and 2,000 turns "
                        "(their ratio against the 300-turn one)")
    parser.add_argument("--reference-seconds", type=float, default=None,
                        help="run the reference where it is expected to take at most this long "
                             "(default 300, 60 with --quick)")
    args = parser.parse_args(argv)
    Clock.use_cpu(args.cpu)
    repeats = 3 if args.quick else 5
    limit = args.reference_seconds if args.reference_seconds is not None else (60.0 if args.quick else 300.0)
    strategies = {"summarise-span": SummariseSpan(FixedSummariser())}
    with tempfile.TemporaryDirectory() as folder:
        for spec in (args.counter,) if args.no_hf else (args.counter, hf_spec(folder)):
            if args.scale:
                bench_turn_scaling(spec, args.quick, repeats, limit, strategies)
            else:
                bench_cases(spec, args.quick, repeats, limit, strategies)
    if args.cases_only or args.scale:
        return 0
    bench_replay(args.counter, repeats)
    bench_long_sections(args.counter, args.quick, strategies)
    bench_scaling(args.counter, args.quick, repeats)
    bench_turn_scaling(args.counter, args.quick, repeats, limit, strategies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
