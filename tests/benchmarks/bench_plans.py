"""Benchmarks for plans (issue 5: "the same for plans with pins and strategies"), printed as ratios
measured side by side in one run (not timed tests).

    .venv/bin/python -m tests.benchmarks.bench_plans            (or: make bench)
    .venv/bin/python -m tests.benchmarks.bench_plans --quick    (smaller sizes, for a smoke run)

Each assembly starts from a counter whose caches and learned constants are empty, and each figure
divides a time by the time of one complete count of the prompt with every candidate in it,
measured in the same process a moment apart; every time is the best of several repeats.
"""
from __future__ import annotations

import gc
import sys
import time
from types import SimpleNamespace

from core import ContextAssembler, ContextPlan, Message, SectionPlan, SummariseSpan, make_counter, parse_request
from core.plans import plan_from_request

from .bench_assembly import bench_options, best
from .workload import large_request, sentence, text_of


class FixedSummariser:
    """A summariser that answers at once with the same text (the model call is not what is measured)."""

    def summarise(self, span, *, cancel=None):
        return "Earlier, the user and the assistant discussed the cluster, its disks and the rollback plan."


def seed_002_plan(passages: int, turns: int, compaction: str, *, seed: int = 11) -> tuple[ContextPlan, dict, list]:
    """Seed 002's example plan, grown: pinned system and constraints, a profile, a long recent history
    under ``compaction``, passages ranked by score into the question."""
    import random

    request = large_request(passages, turns, 16, seed=seed)
    rng = random.Random(seed)
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True),
                                 SectionPlan("constraints", pinned=True),
                                 SectionPlan("profile", share=0.05),
                                 SectionPlan("recent", share=0.45, compaction=compaction),
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
    import random

    rng = random.Random(seed)
    messages = [Message(role="user" if i % 2 == 0 else "assistant", content=text_of(rng, rng.randint(5, 30)),
                        id=f"m{i}") for i in range(entries)]
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction=compaction),
                                 SectionPlan("q", pinned=True)), budget_tokens=8192, reserve_output_tokens=512)
    return plan, {"system": [Message(role="system", content="Be brief.")], "recent": messages,
                  "q": [Message(role="user", content="What now?", id="q")]}


def one_count_seconds(spec: str, plan: ContextPlan, sections: dict, tools, repeats: int) -> tuple[float, int]:
    """One complete count of the prompt with every candidate of every section in it."""
    counter = make_counter(spec)
    states = [SimpleNamespace(plan=s) for s in plan.sections]
    messages = ContextAssembler._render(states, {s.name: list(sections.get(s.name, [])) for s in plan.sections})
    tokens = len(counter.token_ids(messages, tools))
    return best(lambda: counter.token_ids(messages, tools), repeats), tokens


def fresh_counter(spec: str, warm_with) -> object:
    counter = make_counter(spec)
    warm_with(counter)  # the tokenizer itself warm, its caches empty
    counter._cache.clear()
    counter._text_cache.clear()
    counter.__dict__.pop("_plan_constants", None)
    return counter


def assembly_seconds(spec: str, plan, sections, tools, repeats: int, *, reference: bool = False,
                     strategies=None) -> tuple[float, dict, object]:
    times, stats, result = [], {}, None
    messages = ContextAssembler._render([SimpleNamespace(plan=s) for s in plan.sections],
                                        {s.name: list(sections.get(s.name, [])) for s in plan.sections})
    for _ in range(repeats):
        counter = fresh_counter(spec, lambda c: c.token_ids(messages, tools))
        assembler = ContextAssembler(plan, counter, strategies=strategies, reference=reference)
        gc.collect()
        start = time.perf_counter()
        result = assembler.assemble(sections, tools=tools, stats=stats)
        times.append(time.perf_counter() - start)
    return min(times), stats, result


def report(label: str, spec: str, plan, sections, tools, repeats: int, *, reference: bool, strategies=None) -> None:
    count_s, tokens = one_count_seconds(spec, plan, sections, tools, repeats)
    fast_s, fast_stats, fast = assembly_seconds(spec, plan, sections, tools, repeats, strategies=strategies)
    line = (f"{label:<34} {tokens:8d} {count_s * 1000:8.1f} {fast_s * 1000:9.1f} {fast_s / count_s:6.2f}"
            f" {fast_stats['full_counts']:5d} {fast_stats['item_counts']:6d}")
    if reference:
        ref_s, ref_stats, slow = assembly_seconds(spec, plan, sections, tools, 1, reference=True,
                                                  strategies=strategies)
        same = "same" if slow.to_json() == fast.model_copy(update={"counting_note": None}).to_json() else "DIFFERENT"
        line += f" {ref_s * 1000:10.0f} {ref_s / fast_s:7.1f} {ref_stats['full_counts']:5d}  {same}"
    note = f"  (fell back: {fast.counting_note})" if fast.counting_note else ""
    print(line + note)


HEADER = ("case                               tokens(all) count_ms  plan_ms  ratio  full  items"
          "     ref_ms  ref/def  full  result")


def main(argv=None) -> int:
    args, repeats = bench_options(__doc__.splitlines()[0], argv)
    spec = args.counter
    summarise = {"summarise-span": SummariseSpan(FixedSummariser())}

    print(f"## plans at 32k, counter {spec}: default plan assembly / one complete count of every candidate")
    print("(ratio target <= 2.5 for plans; ref/def target >= 30; full = complete-prompt counts; result: the default's "
          "bytes against the reference's)")
    print(HEADER)
    request = parse_request(large_request(300, 100, 16, context_limit=32768))
    plan, sections, tools = plan_from_request(request)
    report("seed-003 request as a plan, 300", spec, plan, sections, tools, repeats, reference=True)
    for compaction in ("drop-oldest", "pin-and-fold", "newest-turns", "summarise-span"):
        plan, sections, tools = seed_002_plan(300, 100, compaction)
        report(f"seed-002 plan, {compaction}", spec, plan, sections, tools, repeats, reference=True,
               strategies=summarise)

    print(f"\n## replay: the same plan again at a new budget on the warm counter (what a limit edit does)")
    print("budget   plan_ms  / one complete count of every candidate  full  items")
    plan, sections, tools = seed_002_plan(300, 100, "newest-turns")
    count_s, _ = one_count_seconds(spec, plan, sections, tools, repeats)
    messages = ContextAssembler._render([SimpleNamespace(plan=s) for s in plan.sections],
                                        {s.name: list(sections.get(s.name, [])) for s in plan.sections})
    counter = fresh_counter(spec, lambda c: c.token_ids(messages, tools))
    ContextAssembler(plan, counter).assemble(sections, tools=tools)  # the recording, opened once
    for budget in (30000, 24576, 16384, 8192):
        edited = plan.model_copy(update={"budget_tokens": budget})
        stats: dict = {}
        elapsed = best(lambda: ContextAssembler(edited, counter).assemble(sections, tools=tools, stats=stats), repeats)
        print(f"{budget:6d}  {elapsed * 1000:8.1f}  {elapsed / count_s:6.2f}x{'':34}{stats['full_counts']:4d}"
              f"  {stats['item_counts']:5d}")

    print(f"\n## long sections (issue 14's cliff: 10^4 plan entries took 238 s): one section of N messages "
          f"under an 8k budget, counter {spec}")
    print("(one assembly each on a fresh counter; 'same' compares with the reference where it runs in seconds)")
    print("entries  strategy          seconds  ms/entry  evicted  result")
    for n in ([1000, 3000] if args.quick else [1000, 3000, 10000]):
        for compaction in ("drop-oldest", "newest-turns", "pin-and-fold", "summarise-span"):
            plan, sections = long_section_plan(n, compaction)
            counter = make_counter(spec)
            assembler = ContextAssembler(plan, counter, strategies=summarise)
            start = time.perf_counter()
            result = assembler.assemble(sections)
            elapsed = time.perf_counter() - start
            same = ""
            if n <= 1000:
                slow = ContextAssembler(plan, make_counter(spec), strategies=summarise, reference=True).assemble(sections)
                same = "same" if slow.to_json() == result.model_copy(update={"counting_note": None}).to_json() \
                    else "DIFFERENT"
            evicted = sum(e.decision in ("dropped", "summarised") for e in result.trace)
            print(f"{n:7d}  {compaction:<16} {elapsed:8.2f}  {elapsed * 1000 / n:8.3f}  {evicted:7d}  {same}")

    print(f"\n## scaling: the seed-003 request as a plan, 100 turns, 16 tools, counter {spec}")
    print(HEADER)
    for n in ([100, 300] if args.quick else [100, 300, 1000, 3000]):
        request = parse_request(large_request(n, 100, 16, context_limit=max(32768, n * 110)))
        plan, sections, tools = plan_from_request(request)
        report(f"{n} passages", spec, plan, sections, tools, repeats, reference=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
