"""Shape suite for issue 15: default assembly / one complete count on the shapes real requests have,
beside the reference method, checked byte for byte as it runs (not timed tests).

    .venv/bin/python -m tests.benchmarks.bench_shapes            (300 turns, 10,000 passages)
    .venv/bin/python -m tests.benchmarks.bench_shapes --quick    (fewer turns and passages, for a smoke run)

Each shape runs with ``--counter`` (mistral: by default) and with an ``hf:`` counter (the real Qwen3
tokenizer of ../shared/tokenizers/hf/qwen3 when present, else the toy tokenizer of the test suite).
Every figure divides a time by another measured in the same process a moment apart; the reference is
run only when it costs at most ``REFERENCE_LIMIT`` complete counts (the note says when it was skipped).
Peak memory (tracemalloc, one default assembly) is printed beside the request's text size.
"""
from __future__ import annotations

import gc
import random
import sys
import tempfile
import tracemalloc
from pathlib import Path

from core import assemble, make_counter, parse_request

from .bench_assembly import bench_options, fresh_assembly_seconds, one_count_seconds
from .workload import large_request, text_of

REFERENCE_LIMIT = 1200  # candidates; above it the reference (one complete count each) is skipped
QWEN3 = Path(__file__).resolve().parents[3] / "shared" / "tokenizers" / "hf" / "qwen3"


def _history(turns: int, rng: random.Random, *, newline=False, tools=False, single=False) -> list[dict]:
    out = []
    for t in range(turns):
        end = "\n" if newline else ""
        out.append({"role": "user", "content": text_of(rng, rng.randint(8, 60)) + end, "id": f"turn-{t:04d}"})
        if single:
            continue
        if tools:
            call = f"call{t:05d}"
            out.append({"role": "assistant", "content": None,
                        "tool_calls": [{"id": call, "name": "tool_0", "arguments": {"arg0": text_of(rng, 4)}}]})
            out.append({"role": "tool", "tool_call_id": call, "content": text_of(rng, rng.randint(10, 40))})
        out.append({"role": "assistant", "content": text_of(rng, rng.randint(10, 90)) + end})
    return out


def shapes(quick: bool) -> list[tuple[str, dict]]:
    turns = 100 if quick else 300
    many = 1000 if quick else 10000

    def base(passages=0, n_turns=turns, limit=32768, n_tools=1, **kind):
        data = large_request(passages, 0, n_tools, context_limit=limit)
        data["history"] = _history(n_turns, random.Random(5), **kind)
        return data

    roomy = sum(len(m["content"] or "") for m in _history(turns, random.Random(5))) // 8
    cases = [
        (f"history only, {turns} plain turns", base(limit=roomy)),
        (f"history, {turns} turns ending in a newline", base(limit=roomy, newline=True)),
        (f"history, {turns} turns with tool calls", base(limit=roomy, tools=True)),
        (f"history, {turns} single-message turns", base(limit=roomy // 3, single=True)),
    ]
    full_history = base(300, 100, limit=32768)
    full_history["context_limit"] = sum(len(m["content"]) for m in full_history["history"]) // 4 + 2000
    cases.append(("100 turns + 300 passages, nothing fits", full_history))
    cases.append((f"{many} passages, 1.1M limit", large_request(many, 100, 16, context_limit=1_100_000)))
    mixed = base(120, turns // 2, limit=16384, tools=True)
    mixed["history"] += _history(turns // 2, random.Random(9), newline=True)
    for n, m in enumerate(mixed["history"]):
        if m["role"] == "user" and n % 7 == 0:
            m["content"] = "  " + m["content"]
    cases.append(("mixed: tool turns, newlines, RAG 120", mixed))
    return cases


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


HEADER = ("shape                                     tokens  count_ms  default_ms  ratio  full  ref/def  "
          "ref_full  result  text_MB  peak_MB")


def run_shape(label: str, data: dict, spec: str, repeats: int) -> None:
    request = parse_request(data)
    counter = make_counter(spec)
    count_s, tokens = one_count_seconds(counter, request, repeats)
    fast_s, stats = fresh_assembly_seconds(spec, request, repeats)
    candidates = len(request.history_turns()) + len(request.evidence)
    if candidates <= REFERENCE_LIMIT:
        ref_s, ref_stats = fresh_assembly_seconds(spec, request, 1, reference=True)
        c = make_counter(spec)
        fast, slow = assemble(request, c), assemble(request, c, reference=True)
        same = "same" if fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json() else "DIFFERENT"
        if fast.counting_note:
            same += " (fell back)"
        ref = f"{ref_s / fast_s:7.1f}  {ref_stats['full_counts']:8d}  {same:<6}"
    else:
        ref = f"{'skipped':>7}  {'>' + str(REFERENCE_LIMIT):>8}  {'-':<6}"
    size, peak = text_bytes(request), peak_memory(spec, request)
    print(f"{label:<40} {tokens:7d}  {count_s * 1000:8.1f}  {fast_s * 1000:10.1f}  {fast_s / count_s:5.2f}"
          f"  {stats['full_counts']:4d}  {ref}  {size / 1e6:7.2f}  {peak / 1e6:7.1f}")


def hf_spec(folder: str) -> str:
    if (QWEN3 / "tokenizer.json").exists():
        return f"hf:{QWEN3}"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tokenizer_factory import build_toy_tokenizer_dir

    return f"hf:{build_toy_tokenizer_dir(Path(folder) / 'toy')}"


def main(argv=None) -> int:
    args, repeats = bench_options(__doc__.splitlines()[0], argv)
    cases = shapes(args.quick)
    with tempfile.TemporaryDirectory() as folder:
        for spec in (args.counter, hf_spec(folder)):
            print(f"\n## shapes, counter {spec}: default / one complete count of every candidate (target <= 2), "
                  f"reference / default (target >= 30), byte-identical check")
            print(HEADER)
            for label, data in cases:
                run_shape(label, data, spec, repeats)
    print("\nplans (the four strategies): .venv/bin/python -m tests.benchmarks.bench_plans [--counter SPEC]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
