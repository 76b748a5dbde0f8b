"""Benchmarks for issue 5, printed as ratios measured side by side in one run (not timed tests).

    .venv/bin/python -m tests.benchmarks.bench_assembly            (or: make bench)
    .venv/bin/python -m tests.benchmarks.bench_assembly --quick    (smaller sizes, for a smoke run)
    ... --cpu                                                      (this process's CPU time, not wall time)

Each figure divides a measured time by another measured in the same process a moment apart, so
machine load mostly cancels; every time is the best of several repeats.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from core import assemble, index_jsonl, make_counter, parse_request
from core.render import Selection, render

from .workload import large_request


class Clock:
    """The timer every figure uses: wall time, or (``--cpu``) this process's CPU time, which a shared machine's
    other processes disturb less (they still slow it through shared caches)."""

    now = staticmethod(time.perf_counter)

    @classmethod
    def use_cpu(cls, cpu: bool) -> None:
        """CPU time counts every thread of the process: an ``hf:`` tokenizer's batch calls (``encode_batch_fast``)
        then run on one thread (``TOKENIZERS_PARALLELISM=false``, unless set), or the idle spinning of its thread
        pool on a busy machine would be timed as work."""
        cls.now = staticmethod(time.process_time if cpu else time.perf_counter)
        if cpu:
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = Clock.now()
        fn()
        times.append(Clock.now() - start)
    return min(times)


def everything(request):
    return Selection(instructions=True, tools=tuple(range(len(request.tools))), question=True,
                     exchanges=tuple(range(len(request.tool_exchanges))), turns=tuple(range(len(request.history_turns()))),
                     evidence=tuple(range(len(request.evidence))))


def one_count_seconds(counter, request, repeats: int) -> tuple[float, int]:
    full = render(request, everything(request))
    tokens = len(counter.token_ids(full.messages, full.tools))
    return best(lambda: counter.token_ids(full.messages, full.tools), repeats), tokens


def fresh_assembly_seconds(spec: str, request, repeats: int, *, reference: bool = False) -> tuple[float, dict]:
    """Time of ``assemble`` with a counter whose caches are empty (no reuse between repeats)."""
    times, stats = [], {}
    for _ in range(repeats):
        counter = make_counter(spec)
        full = render(request, everything(request))
        counter.token_ids(full.messages, full.tools)  # warm the tokenizer itself, not the caches
        counter._cache.clear()
        counter._text_cache.clear()
        gc.collect()
        start = Clock.now()
        assemble(request, counter, reference=reference, stats=stats)
        times.append(Clock.now() - start)
    return min(times), stats


def bench_main_target(spec: str, repeats: int) -> None:
    request = parse_request(large_request(300, 100, 16, context_limit=32768))
    counter = make_counter(spec)
    count_s, tokens = one_count_seconds(counter, request, repeats)
    fast_s, fast_stats = fresh_assembly_seconds(spec, request, repeats)
    ref_s, ref_stats = fresh_assembly_seconds(spec, request, 1, reference=True)
    print(f"## 300 passages (30-300 words), 100 turns, 16 tools, 32k limit, counter {spec}")
    print(f"one complete count of every candidate: {tokens} tokens, {count_s * 1000:.1f} ms")
    print(f"default assembly: {fast_s * 1000:.1f} ms, {fast_s / count_s:.2f}x one complete count "
          f"(target <= 2), full_counts={fast_stats['full_counts']} item_counts={fast_stats['item_counts']}")
    print(f"reference assembly: {ref_s * 1000:.1f} ms, {ref_s / count_s:.1f}x one complete count, "
          f"full_counts={ref_stats['full_counts']}")
    print(f"reference / default: {ref_s / fast_s:.1f}x (target >= 30)")


def bench_scaling(spec: str, sizes: list[int], repeats: int) -> None:
    print(f"\n## scaling: default assembly / one complete count, counter {spec}")
    print("passages  tokens(all)  count_ms  assembly_ms  ratio  full_counts  item_counts")
    counter = make_counter(spec)
    for n in sizes:
        limit = max(32768, n * 110)
        request = parse_request(large_request(n, 100, 16, context_limit=limit))
        count_s, tokens = one_count_seconds(counter, request, repeats)
        fast_s, stats = fresh_assembly_seconds(spec, request, repeats)
        print(f"{n:8d}  {tokens:11d}  {count_s * 1000:8.1f}  {fast_s * 1000:11.1f}  {fast_s / count_s:5.2f}"
              f"  {stats['full_counts']:11d}  {stats['item_counts']:11d}")


def text_bytes(request) -> int:
    return (sum(len(p.text.encode()) for p in request.evidence)
            + sum(len((m.content or "").encode()) for m in request.history))


def peak_memory(spec: str, request) -> int:
    counter = make_counter(spec)
    gc.collect()
    tracemalloc.start()
    assemble(request, counter)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def bench_memory(spec: str, passages: int) -> None:
    request = parse_request(large_request(passages, 100, 16, context_limit=passages * 110))
    size, peak = text_bytes(request), peak_memory(spec, request)
    print(f"\n## memory, {passages} passages: request text {size / 1e6:.1f} MB, peak allocated during "
          f"assembly {peak / 1e6:.1f} MB ({peak / size:.1f}x the text)")


def bench_jsonl(records: int, repeats: int) -> None:
    counter = make_counter()
    base = assemble(parse_request(large_request(1, 1, 1, context_limit=4096, seed=3)), counter)  # ~10 KB a line
    line = json.dumps(base.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for i in range(records):
                handle.write(line.replace('"request_id": "bench-1x1"', f'"request_id": "bench-{i:05d}"', 1) + "\n")
        size = path.stat().st_size

        def plain():
            with open(path, "rb") as handle:
                for raw in handle:
                    json.loads(raw)

        plain_s = best(plain, repeats)
        index_s = best(lambda: index_jsonl(path), repeats)
        gc.collect()
        tracemalloc.start()
        index = index_jsonl(path)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        start = time.perf_counter()
        index.entry(records // 2)
        one_row = time.perf_counter() - start
    print(f"\n## JSONL of {records} recorded results, {size / 1e6:.0f} MB")
    print(f"plain json parsing: {plain_s:.2f} s; core index_jsonl: {index_s:.2f} s; ratio {index_s / plain_s:.2f} "
          f"(target <= 1.5)")
    print(f"peak memory while opening: {peak / 1e6:.1f} MB = {peak / size:.3f}x the file; "
          f"one row validated on demand in {one_row * 1000:.1f} ms")


def bench_options(description: str, argv=None) -> tuple[argparse.Namespace, int]:
    """The options every benchmark takes (``--quick``, ``--counter``) and its number of repeats."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--counter", default="mistral:tekken_240911")
    parser.add_argument("--cpu", action="store_true", help="time in process CPU time (a loaded machine), not wall time")
    args = parser.parse_args(argv)
    Clock.use_cpu(args.cpu)
    return args, 2 if args.quick else 5


def main(argv=None) -> int:
    args, repeats = bench_options(__doc__.splitlines()[0], argv)
    bench_main_target(args.counter, repeats)
    bench_scaling(args.counter, [100, 300] if args.quick else [100, 300, 1000, 3000], repeats)
    bench_memory(args.counter, 300 if args.quick else 3000)
    bench_jsonl(500 if args.quick else 10000, 1 if args.quick else 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
