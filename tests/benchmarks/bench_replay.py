"""Benchmark for issue 6: a replay after a limit edit, against one complete count of its result.

    .venv/bin/python -m tests.benchmarks.bench_replay              (target: replay <= 1.5x one count)
    .venv/bin/python -m tests.benchmarks.bench_replay --profile    (and where a replay's time goes)

The recording is assembled first with the same counter object, so its per-item counts are warm, as
they are in the inspector when a person moves the limit. Each ratio divides two times measured side
by side in this run; every time is the best of several repeats. Printed, not asserted: run on demand.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats

from core import assemble, audit, make_counter, parse_request
from core.replay import Edits, diff, replay

from .bench_assembly import best
from .workload import large_request

TARGET = 1.5


def bench(spec: str | None, limits: list[int], repeats: int, profile: bool) -> None:
    request = parse_request(large_request(300, 100, 16, context_limit=32768))
    counter = make_counter(spec)
    recorded = assemble(request, counter)  # warms the counter's per-item counts, as opening the file does
    dropped = sum(e.decision == "dropped" for e in recorded.trace)
    print(f"## 300 passages, 100 turns, 16 tools; recorded at context limit {recorded.context_limit}: "
          f"{recorded.input_tokens} input tokens, {dropped} items dropped; counter {counter.name}")
    print(f"{'limit':>7} {'input':>7} {'dropped':>8} {'count ms':>9} {'replay ms':>10} {'ratio':>6} "
          f"{'+diff+audit ms':>15} {'ratio':>6}")
    worst = 0.0
    for limit in limits:
        edits = Edits(context_limit=limit)
        result = replay(recorded, edits=edits, counter=counter)
        count_s = best(lambda: counter.token_ids(result.messages, result.tools), repeats)
        replay_s = best(lambda: replay(recorded, edits=edits, counter=counter), repeats)

        def as_the_panel_runs_it() -> None:
            replayed = replay(recorded, edits=edits, counter=counter)
            diff(recorded, replayed)
            audit(replayed, counter)

        panel_s = best(as_the_panel_runs_it, repeats)
        ratio = replay_s / count_s
        worst = max(worst, ratio)
        print(f"{limit:>7} {result.input_tokens:>7} {sum(e.decision == 'dropped' for e in result.trace):>8} "
              f"{count_s * 1000:>9.1f} {replay_s * 1000:>10.1f} {ratio:>6.2f} {panel_s * 1000:>15.1f} "
              f"{panel_s / count_s:>6.2f}")
    verdict = "meets" if worst <= TARGET else "misses"
    print(f"worst replay / one complete count of its result: {worst:.2f}x ({verdict} the target of {TARGET}x)")
    if profile:
        limit = limits[len(limits) // 2]
        edits = Edits(context_limit=limit)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(repeats):
            replay(recorded, edits=edits, counter=counter)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(22)
        print(f"\n## where a replay at limit {limit} spends its time ({repeats} replays, cumulative)")
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counter", default=None, help="counter spec (default: the embedded one)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the replay")
    parser.add_argument("--limits", type=int, nargs="*", default=[30000, 24576, 16384, 8192, 4096])
    args = parser.parse_args()
    bench(args.counter, args.limits, args.repeats, args.profile)


if __name__ == "__main__":
    main()
