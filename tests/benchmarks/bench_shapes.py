"""Shape suite for issue 15: default assembly / one complete count on the shapes real requests have,
beside the reference method, checked byte for byte as it runs (not timed tests).

    .venv/bin/python -m tests.benchmarks.bench_shapes            (300 turns, 10,000 passages)
    .venv/bin/python -m tests.benchmarks.bench_shapes --quick    (fewer turns and passages, for a smoke run)
    .venv/bin/python -m tests.benchmarks.bench_shapes --scale    (the ratio at 300 to 30,000 passages and at
                                                                  300 and 2,000 turns, peak memory / text size)
    ... --cpu                                                    (CPU time of this process instead of wall time:
                                                                  steadier on a machine other processes load)
    .venv/bin/python -m tests.benchmarks.bench_shapes --hf-only  (the hf: counter alone; --no-hf: --counter alone)
    ... --only "tool calls"                                      (the shapes whose label holds that text)

Each shape runs with ``--counter`` (mistral: by default) and with an ``hf:`` counter (the real Qwen3
tokenizer of ../shared/tokenizers/hf/qwen3 when present, else the toy tokenizer of the test suite).
Every figure divides a time by another measured in the same process a moment apart; the reference is
run only when it costs at most ``REFERENCE_LIMIT`` complete counts (the note says when it was skipped).
Peak memory (tracemalloc, one default assembly) is printed beside the request's text size.
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
from pathlib import Path

from core import CounterError, assemble, make_counter, parse_request
from core.rag import build_index, expand, make_request
from core.render import render

from .bench_assembly import Clock, everything, fresh_assembly_seconds, peak_memory, text_bytes
from .workload import large_request, text_of

REFERENCE_LIMIT = 1200  # candidates; above it the reference (one complete count each) is skipped
QWEN3 = Path(__file__).resolve().parents[3] / "shared" / "tokenizers" / "hf" / "qwen3"


EDGES = ("", " ", "  ", "\n", "\n\n", " \n", "\t")


def _history(turns: int, rng: random.Random, *, newline=False, tools=False, single=False, spaces=False,
             doubled=False, reasoning=False) -> list[dict]:
    out = []
    for t in range(turns):
        end = "\n" if newline else ""
        if spaces:  # whitespace at either edge, as pasted text and chat clients leave it
            end = rng.choice(EDGES)
        lead = rng.choice(EDGES[:3]) if spaces else ""
        out.append({"role": "user", "content": lead + text_of(rng, rng.randint(8, 60)) + end, "id": f"turn-{t:04d}"})
        if single:
            continue
        if doubled:  # two assistant messages in a row (a streamed answer saved in two parts)
            out.append({"role": "assistant", "content": text_of(rng, rng.randint(5, 40))})
        if tools:
            call = f"call{t:05d}"
            out.append({"role": "assistant", "content": None,
                        "tool_calls": [{"id": call, "name": "tool_0", "arguments": {"arg0": text_of(rng, 4)}}]})
            out.append({"role": "tool", "tool_call_id": call, "content": text_of(rng, rng.randint(10, 40))})
        reply = text_of(rng, rng.randint(10, 90)) + end
        if reasoning:  # a reply that keeps its reasoning (Qwen3 and DeepSeek-R1 leave it out of earlier replies)
            reply = f"<think>\n{text_of(rng, rng.randint(10, 30))}\n</think>\n\n" + reply
        out.append({"role": "assistant", "content": reply})
    return out


def rag_windows(seeds: int, *, limit: int) -> dict | object:
    """A request of verified RAG windows (core.rag): documents of ``## `` sections and paragraphs, the
    chunks around ``seeds`` ranked seed chunks merged into windows, one passage each."""
    rng = random.Random(11)
    documents = []
    for d in range(max(seeds // 6, 4)):
        parts = []
        for s in range(4):
            parts.append(f"## Section {s} of doc {d}\n\n" + "\n\n".join(text_of(rng, rng.randint(20, 80))
                                                                        for _ in range(6)))
        documents.append({"source_id": f"doc-{d:04d}", "version": "1", "path": f"docs/doc-{d:04d}.md",
                          "url": None, "text": "\n\n".join(parts) + "\n"})
    index = build_index(documents)
    chunk_ids = [c["chunk_id"] for c in index["chunks"]]
    ranked = rng.sample(chunk_ids, min(seeds, len(chunk_ids)))
    windows = expand(index, ranked, radius=1)
    request, _ = make_request(index, windows, ranked, "Which settings changed between the two releases?",
                              context_limit=limit, max_new_tokens=1024, margin=64)
    return request


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
        (f"history, {turns} turns, edge whitespace", base(limit=roomy, spaces=True)),
        (f"history, {turns} turns, assistant x2", base(limit=roomy, doubled=True)),
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
    seeds = 100 if quick else 300
    cases.append((f"RAG windows, {seeds} seeds, 16k limit", rag_windows(seeds, limit=16384)))
    return cases


def scale_cases(quick: bool) -> list[tuple[str, object]]:
    """The same shapes at growing sizes: the ratio should stay within 25% of its 300-passage value."""
    cases = []
    for n in ((300, 1000, 3000) if quick else (300, 1000, 3000, 10000, 30000)):
        cases.append((f"{n} passages, 100 turns, limit {n * 55}", large_request(n, 100, 16, context_limit=n * 55)))
    for turns in ((300, 1000) if quick else (300, 2000)):
        history = _history(turns, random.Random(5))
        data = large_request(0, 0, 1, context_limit=sum(len(m["content"]) for m in history) // 8)
        data["history"] = history
        cases.append((f"history only, {turns} plain turns", data))
    return cases


HEADER = ("shape                                     tokens  count_ms  default_ms  ratio  full  ref/def  "
          "ref_full  result  text_MB  peak_MB  peak/text")


def side_by_side(spec: str, request, repeats: int) -> tuple[float, int, float, dict]:
    """Best of ``repeats`` of one complete count and of a default assembly on a counter with empty caches,
    taken in turn so both see the same load on a shared machine."""
    counter = make_counter(spec)
    full = render(request, everything(request))
    tokens = len(counter.token_ids(full.messages, full.tools))
    counts, fasts, stats = [], [], {}
    for _ in range(repeats):
        gc.collect()
        start = Clock.now()
        counter.token_ids(full.messages, full.tools)
        counts.append(Clock.now() - start)
        fresh = make_counter(spec)
        fresh.token_ids(full.messages, full.tools)  # warm the tokenizer itself, not the caches
        fresh._cache.clear()
        fresh._text_cache.clear()
        gc.collect()
        start = Clock.now()
        assemble(request, fresh, stats=stats)
        fasts.append(Clock.now() - start)
    return min(counts), tokens, min(fasts), stats


def run_shape(label: str, data, spec: str, repeats: int) -> None:
    request = parse_request(data) if isinstance(data, dict) else data
    count_s, tokens, fast_s, stats = side_by_side(spec, request, repeats)
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
          f"  {stats['full_counts']:4d}  {ref}  {size / 1e6:7.2f}  {peak / 1e6:7.1f}  {peak / size:5.1f}")


def hf_spec(folder: str) -> str:
    if (QWEN3 / "tokenizer.json").exists():
        return f"hf:{QWEN3}"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tokenizer_factory import build_toy_tokenizer_dir

    return f"hf:{build_toy_tokenizer_dir(Path(folder) / 'toy')}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    parser.add_argument("--scale", action="store_true", help="the ratio at growing sizes instead of the shapes")
    parser.add_argument("--counter", default="mistral:tekken_240911")
    parser.add_argument("--no-hf", action="store_true", help="only the --counter, not the hf: counter too")
    parser.add_argument("--cpu", action="store_true", help="time in process CPU time (a loaded machine), not wall time")
    parser.add_argument("--hf-only", action="store_true", help="only the hf: counter, not the --counter")
    parser.add_argument("--only", default="", help="only the shapes whose label holds this text")
    args = parser.parse_args(argv)
    Clock.use_cpu(args.cpu)
    repeats = 3 if args.quick or args.scale else 5
    cases = [(label, data) for label, data in (scale_cases(args.quick) if args.scale else shapes(args.quick))
             if args.only in label]
    what = "scale" if args.scale else "shapes"
    with tempfile.TemporaryDirectory() as folder:
        specs = [args.counter] if args.no_hf else [hf_spec(folder)] if args.hf_only else [args.counter, hf_spec(folder)]
        for spec in specs:
            print(f"\n## {what}, counter {spec}: default / one complete count of every candidate (target <= 2), "
                  f"reference / default (target >= 30), byte-identical check", flush=True)
            print(HEADER, flush=True)
            for label, data in cases:
                try:
                    run_shape(label, data, spec, repeats)
                except CounterError as exc:  # e.g. a render past the hf template's character limit: a row, not a crash
                    print(f"{label:<40} the counter refuses this request: {exc}")
                sys.stdout.flush()
    print("\nplans (the four strategies): .venv/bin/python -m tests.benchmarks.bench_plans [--counter SPEC]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
