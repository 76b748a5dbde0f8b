"""Benchmark for issue 17: opening an agent session against counting its last call alone.

    .venv/bin/python -m tests.benchmarks.bench_sessions            (500 calls of about 50k tokens each)
    .venv/bin/python -m tests.benchmarks.bench_sessions --quick    (100 calls of about 10k tokens)

The session: a system prompt and tools, then an agent loop where every call appends one tool call and
its result; when the history passes the size the calls are kept at, its oldest half is compacted into a
summary. Times, measured side by side in this run, each with a counter of its own built beforehand (so
no call finds another's pieces already tokenised):

* session: ``session_from_import`` of every call (ids of each call, prefixes, diffs, sections);
* count last call: ``count_imported`` of the last call, what ``context-assembler count`` and the
  inspector do for one call (the complete count and each message's marginal cost by prefix counts);
* one tokenisation: ``counter.token_ids`` of the last call once.

Target: session <= 2x count last call. Printed, not asserted.
"""
from __future__ import annotations

import gc
import random
import sys
import time

from core import make_counter
from core.formats import count_imported, import_data
from core.sessions import session_from_import

from .bench_assembly import bench_options
from .workload import text_of

TARGET = 2.0


def agent_bodies(calls: int, tokens: int, seed: int = 17) -> list[dict]:
    """OpenAI chat bodies of an agent run whose calls each hold about ``tokens`` tokens."""
    rng = random.Random(seed)
    tools = [{"type": "function", "function": {"name": f"tool_{k}", "description": text_of(rng, 12),
                                               "parameters": {"type": "object", "properties": {
                                                   "arg": {"type": "string"}}}}} for k in range(8)]
    system = {"role": "system", "content": text_of(rng, int(tokens * 0.35))}
    task = {"role": "user", "content": text_of(rng, 60)}
    history: list[dict] = []
    size = 0  # words of the history
    bodies = []
    step = 0
    while len(bodies) < calls:
        words = rng.randint(100, 500)
        call_id = f"c{step:08d}"
        history += [{"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function",
                                                                          "function": {"name": f"tool_{step % 8}",
                                                                                       "arguments": '{"arg": "x"}'}}]},
                    {"role": "tool", "tool_call_id": call_id, "content": text_of(rng, words)}]
        size += words + 12
        step += 1
        if size > tokens * 0.55:  # compaction: the oldest half becomes one summary
            cut = next(i for i in range(len(history) // 2, len(history)) if history[i]["role"] == "assistant")
            history = [{"role": "user", "content": "Summary so far: " + text_of(rng, 200)}] + history[cut:]
            size = size // 2 + 200
        if size > tokens * 0.4 or bodies:  # start the calls once the history holds about its share
            bodies.append({"model": "bench", "messages": [system, task] + history, "tools": tools})
    return bodies


def timed(fn) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench(spec: str, calls: int, tokens: int, repeats: int) -> None:
    bodies = agent_bodies(calls, tokens)
    import_s, imported = timed(lambda: import_data(bodies))
    last = imported.requests[-1]
    counters = [make_counter(spec) for _ in range(2 + repeats)]
    one_s = min(timed(lambda c=c: c.token_ids(last.messages, last.tools))[0] for c in counters[2:])
    session_s, session = timed(lambda: session_from_import(imported, counters[0]))
    count_s, result = timed(lambda: count_imported(last, counters[1]))
    sizes = [c.input_tokens or 0 for c in session.calls]
    print(f"## {len(session.calls)} calls, {min(sizes)}-{max(sizes)} input tokens each "
          f"(mean {sum(sizes) // len(sizes)}, {sum(sizes)} in all), last call {result.input_tokens} tokens in "
          f"{len(last.messages)} messages; {len(session.removal_calls)} compactions; counter {spec}")
    print(f"import of the bodies: {import_s:.2f} s (parsing, not counting; not in the ratios)")
    print(f"{'':<32} {'seconds':>9} {'session / it':>13}")
    print(f"{'session (every call)':<32} {session_s:>9.3f}")
    print(f"{'count last call (count_imported)':<32} {count_s:>9.3f} {session_s / count_s:>13.2f}")
    print(f"{'one tokenisation of last call':<32} {one_s:>9.3f} {session_s / one_s:>13.2f}")
    print(f"per call: {session_s / len(session.calls) * 1000:.2f} ms; one tokenisation of the last call is "
          f"{one_s * 1000:.1f} ms")
    verdict = "meets" if session_s / count_s <= TARGET else "misses"
    print(f"session / counting its last call: {session_s / count_s:.2f}x ({verdict} the target of {TARGET}x)")


def main(argv=None) -> int:
    args, repeats = bench_options(__doc__.splitlines()[0], argv)
    if args.quick:
        bench(args.counter, 100, 10_000, repeats)
    else:
        bench(args.counter, 500, 50_000, repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
