"""Benchmark for replay (issues 6 and 15): the first replay after a limit edit, against one complete count.

    .venv/bin/python -m tests.benchmarks.bench_replay                       (mistral, then real Qwen3 when present)
    .venv/bin/python -m tests.benchmarks.bench_replay --counter hf:DIR      (one counter)
    .venv/bin/python -m tests.benchmarks.bench_replay --quick               (fewer repeats, no reference check)
    .venv/bin/python -m tests.benchmarks.bench_replay --profile             (where a first replay's time goes)
    ... --cpu                                                               (process CPU time, not wall time)

The recording (300 passages, 100 turns, 16 tools) is assembled at 32k with the counter, so its
per-item counts are warm, as they are in the inspector once the file is open. Then the limit is
edited: 24k, 16k, 8k, 4k and back up by other values (6k, 12k, 20k, 28k), each replayed once,
the first time that limit is seen; then a 40-step slider drag (40 successive limits from 32k down
to 4k, none seen before). Each step's time is the best over several runs of the whole sequence,
each on a fresh counter that recorded first; "count" is one complete count of the replayed
request (its result's messages and tools), measured in the same run. Every edit's result is
compared byte for byte with a fresh reference assembly (``reference=True``, a new counter) at that
limit; every drag step with a fresh default assembly. Printed, not asserted: run on demand.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import time
from pathlib import Path

from core import assemble, make_counter, parse_request
from core.replay import Edits, edited_request, replay, source_of

from .bench_assembly import Clock, best
from .workload import large_request

TARGET = 1.5
QWEN3 = Path(__file__).resolve().parents[2].parent / "shared" / "tokenizers" / "hf" / "qwen3"
RECORDED = 32768
EDITS = [24576, 16384, 8192, 4096, 6144, 12288, 20480, 28672]
DRAG = [RECORDED - 300 - round(i * (RECORDED - 4096) / 40) for i in range(40)]  # 40 steps down to 4k


def _json(result) -> str:
    return result.model_copy(update={"counting_note": None}).model_dump_json()


def run_sequence(spec: str | None, request, limits: list[int]) -> tuple[list[float], list, object]:
    """Times of the first replay at each limit in turn, on a counter that assembled the recording."""
    counter = make_counter(spec)
    recorded = assemble(request, counter)
    times, results = [], []
    for limit in limits:
        gc.collect()
        start = Clock.now()
        result = replay(recorded, edits=Edits(context_limit=limit), counter=counter)
        times.append(Clock.now() - start)
        results.append(result)
    return times, results, counter


def measure(spec: str | None, request, limits: list[int], repeats: int):
    best_times = None
    for _ in range(repeats):
        times, results, counter = run_sequence(spec, request, limits)
        best_times = times if best_times is None else [min(a, b) for a, b in zip(best_times, times)]
    counts = [best(lambda r=r: counter.token_ids(r.messages, r.tools), repeats) for r in results]
    return best_times, counts, results


def same_as_fresh(spec: str | None, request, limit: int, result, *, reference: bool) -> bool:
    fresh = assemble(edited_request(source_of(request), Edits(context_limit=limit)), make_counter(spec),
                     reference=reference)
    return _json(fresh) == _json(result)


def bench(spec: str | None, repeats: int, check: bool, profile: bool) -> None:
    request = parse_request(large_request(300, 100, 16, context_limit=RECORDED))
    name = make_counter(spec).name
    print(f"## replay after a limit edit: 300 passages, 100 turns, 16 tools, recorded at {RECORDED}; counter {name}")
    clock = "process CPU time" if Clock.now is time.process_time else "wall time"
    print(f"(first replay at each limit, warm counter, best of {repeats} runs of the sequence, {clock}; "
          f"target <= {TARGET}x)")
    print(f"{'limit':>7} {'input':>7} {'dropped':>8} {'count ms':>9} {'first replay ms':>16} {'ratio':>6}  "
          f"{'same as reference' if check else ''}")
    times, counts, results = measure(spec, request, EDITS, repeats)
    worst = 0.0
    for limit, t, c, r in zip(EDITS, times, counts, results):
        worst = max(worst, t / c)
        same = ("same" if same_as_fresh(spec, request, limit, r, reference=True) else "DIFFERENT") if check else ""
        print(f"{limit:>7} {r.input_tokens:>7} {sum(e.decision == 'dropped' for e in r.trace):>8} {c * 1000:>9.1f} "
              f"{t * 1000:>16.1f} {t / c:>6.2f}  {same}")
    print(f"worst first replay / one complete count: {worst:.2f}x ({'meets' if worst <= TARGET else 'misses'} "
          f"the target of {TARGET}x)")

    times, counts, results = measure(spec, request, DRAG, repeats)
    total_t, total_c = sum(times), sum(counts)
    same = ""
    if check:
        same = ", every step the same as a fresh assembly" if all(
            same_as_fresh(spec, request, limit, r, reference=False) for limit, r in zip(DRAG, results)) \
            else ", SOME STEP DIFFERS from a fresh assembly"
    print(f"\n## a 40-step slider drag ({DRAG[0]} down to {DRAG[-1]}), counter {name}")
    print(f"sum of replays {total_t * 1000:.1f} ms, sum of one complete count per step {total_c * 1000:.1f} ms: "
          f"{total_t / total_c:.2f}x ({'meets' if total_t / total_c <= TARGET else 'misses'} the target of "
          f"{TARGET}x); worst step {max(t / c for t, c in zip(times, counts)):.2f}x{same}")

    if profile:
        counter = make_counter(spec)
        recorded = assemble(request, counter)
        profiler = cProfile.Profile()
        profiler.enable()
        for limit in EDITS:
            replay(recorded, edits=Edits(context_limit=limit), counter=counter)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(f"\n## where the first replays of the edit sequence spend their time (cumulative)")
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counter", default=None,
                        help="counter spec (default: the embedded one, then hf: Qwen3 from ../shared when present)")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="two repeats, no reference check")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the first replays")
    parser.add_argument("--cpu", action="store_true", help="time in process CPU time (a loaded machine), not wall time")
    args = parser.parse_args()
    Clock.use_cpu(args.cpu)
    repeats = args.repeats or (2 if args.quick else 5)
    specs = [args.counter]
    if args.counter is None and (QWEN3 / "tokenizer.json").is_file():
        specs.append(f"hf:{QWEN3}")
    for n, spec in enumerate(specs):
        if n:
            print()
        bench(spec, repeats, not args.quick, args.profile)


if __name__ == "__main__":
    main()
