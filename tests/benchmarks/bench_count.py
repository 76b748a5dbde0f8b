"""The complete count, the denominator of every other benchmark, against the libraries' own calls; and the
count of an imported request (issue 14's time cliff). Ratios of times measured side by side in one run.

    .venv/bin/python -m tests.benchmarks.bench_count             (1k, 32k, 200k tokens; 1k, 3k, 10k messages)
    .venv/bin/python -m tests.benchmarks.bench_count --quick     (1k and 32k tokens; 1k and 3k messages)
    .venv/bin/python -m tests.benchmarks.bench_count --assemble  (also: assemble with 6,000 and 10,000 history
                                                                  messages, the other time cliff of issue 14)

1. ``mistral:tekken_240911``: ``counter.count`` (its cache emptied each time) against mistral-common's stock
   ``encode_chat_completion`` of the same request, built beforehand (so the stock time leaves out building
   mistral-common's request); the token ids are checked identical for every case.
2. ``hf:`` on ../shared/tokenizers/hf/qwen3 against transformers' ``apply_chat_template(tokenize=True)`` of
   the same conversation (the counter calls it too, under its template limits): reported, no target.
3. ``count_imported`` of an OpenAI body of N messages (``mistral:``, and ``openai:gpt-4o`` with the shared tiktoken
   cache), and ``context-assembler count`` of the file: seconds per
   1,000 messages, and the figures checked against ``count_imported(..., reference=True)``, every variant
   counted whole (up to ``--whole-max`` messages).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import make_counter
from core.contracts import ChatMessage, ToolCall, ToolDefinition
from core.formats.count import count_imported
from core.formats.importing import import_data

from .bench_assembly import best
from .workload import large_request, text_of

ROOT = Path(__file__).resolve().parents[2]
QWEN3 = ROOT.parent / "shared" / "tokenizers" / "hf" / "qwen3"
TIKTOKEN_CACHE = ROOT.parent / "shared" / "tokenizers" / "tiktoken-cache"
TOOL = ToolDefinition(name="search", description="Search the runbooks.", parameters={
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["q"]})


def conversation(shape: str, tokens: int, seed: int = 11) -> tuple[list[ChatMessage], list[ToolDefinition]]:
    """A request of about ``tokens`` tokens: ``plain`` turns of 50-400 words, ``tools`` turns with a tool call
    and its result, or ``small`` messages of 3-12 words."""
    rng = random.Random(seed)
    words = int(tokens * (0.72 if shape == "small" else 0.86))
    out = [ChatMessage(role="system", content=text_of(rng, 40))]
    used, k = 40, 0
    lo, hi = (3, 12) if shape == "small" else (50, 400)
    while used < words:
        n = min(rng.randint(lo, hi), max(words - used, 1))
        out.append(ChatMessage(role="user", content=text_of(rng, n)))
        if shape == "tools":
            k += 1
            call = f"call{k:05d}"
            out.append(ChatMessage(role="assistant", tool_calls=[ToolCall(id=call, name="search", arguments={
                "q": text_of(rng, 4), "limit": 5})]))
            out.append(ChatMessage(role="tool", tool_call_id=call, content=json.dumps({"hits": text_of(rng, n)})))
        out.append(ChatMessage(role="assistant", content=text_of(rng, n)))
        used += 2 * n + (n if shape == "tools" else 0)
    out.append(ChatMessage(role="user", content="What now?"))
    return out, [TOOL] if shape == "tools" else []


def repeats_for(tokens: int) -> int:
    return 3 if tokens > 100_000 else 7


def bench_mistral(sizes: list[int]) -> None:
    counter = make_counter("mistral:tekken_240911")
    stock = counter._tokenizer
    print("\n== mistral:tekken_240911 complete count vs mistral-common's encode_chat_completion ==")
    print(f"{'shape':<7}{'tokens':>9}{'messages':>10}{'ours ms':>10}{'stock ms':>10}{'stock/ours':>12}  ids")
    for shape in ("plain", "tools", "small"):
        for size in sizes:
            messages, tools = conversation(shape, size)
            request = counter._request(messages, tools)
            expected = list(stock.encode_chat_completion(request).tokens)
            same = counter.token_ids(messages, tools) == expected

            def ours():
                counter._cache.clear()
                counter.count(messages, tools)

            n = repeats_for(len(expected))
            mine, theirs = best(ours, n), best(lambda: stock.encode_chat_completion(request), n)
            print(f"{shape:<7}{len(expected):>9}{len(messages):>10}{mine * 1e3:>10.1f}{theirs * 1e3:>10.1f}"
                  f"{theirs / mine:>11.2f}x  {'identical' if same else 'DIFFERENT'}", flush=True)


def bench_hf(sizes: list[int]) -> None:
    print("\n== hf:qwen3 complete count vs transformers' apply_chat_template(tokenize=True) ==")
    if not (QWEN3 / "tokenizer.json").is_file():
        print(f"skipped: {QWEN3} is absent")
        return
    from transformers import AutoTokenizer

    counter = make_counter(f"hf:{QWEN3}")
    tokenizer = AutoTokenizer.from_pretrained(str(QWEN3), local_files_only=True)
    print(f"{'shape':<7}{'tokens':>9}{'messages':>10}{'ours ms':>10}{'hf ms':>10}{'hf/ours':>10}  ids")
    for shape in ("plain", "tools", "small"):
        for size in sizes:
            messages, tools = conversation(shape, size)
            chat, schemas = counter.conversation(messages), counter.tool_schemas(tools)

            def theirs():
                ids = tokenizer.apply_chat_template(chat, tools=schemas, add_generation_prompt=True, tokenize=True,
                                                    return_dict=False)
                return list(ids[0] if ids and isinstance(ids[0], list) else ids)

            def ours():
                counter._cache.clear()
                counter.count(messages, tools)

            expected = theirs()
            same = counter.token_ids(messages, tools) == expected
            n = repeats_for(len(expected))
            mine, stock = best(ours, n), best(theirs, n)
            print(f"{shape:<7}{len(expected):>9}{len(messages):>10}{mine * 1e3:>10.1f}{stock * 1e3:>10.1f}"
                  f"{stock / mine:>9.2f}x  {'identical' if same else 'DIFFERENT'}", flush=True)


def openai_body(n: int, model: str, seed: int = 3) -> dict:
    rng = random.Random(seed)
    messages = [{"role": "system", "content": text_of(rng, 40)}]
    while len(messages) < n - 1:
        messages.append({"role": "user", "content": text_of(rng, rng.randint(5, 60))})
        messages.append({"role": "assistant", "content": text_of(rng, rng.randint(5, 80))})
    messages = messages[:n - 1] + [{"role": "user", "content": "And now?"}]
    return {"model": model, "messages": messages}


def bench_import_count(sizes: list[int], whole_max: int, hf: list[str] | None = None, estimate: bool = False) -> None:
    """For ``mistral:`` (a body of model mistral-large-latest) and, with the shared tiktoken cache, ``openai:``
    (gpt-4o): the CLI's ``count`` runs with its default counter, auto, which picks the same one. ``hf``: only
    these tokenizers of ../shared/tokenizers/hf instead (the CLI given ``--counter hf:<dir>``). ``estimate``: above
    ``whole_max``, the whole-count method's time estimated from a sample of its counts."""
    runs = [("mistral:tekken_240911", "mistral-large-latest", {})]
    if hf:
        folders = [QWEN3.parent / name for name in hf]
        runs = [(f"hf:{folder}", "x", {}) for folder in folders if (folder / "tokenizer.json").is_file()]
    elif (TIKTOKEN_CACHE / "fb374d419588a4632f3f557e76b4b70aebbca790").is_file():
        runs.append(("openai:gpt-4o", "gpt-4o", {"TIKTOKEN_CACHE_DIR": str(TIKTOKEN_CACHE.resolve())}))
    else:
        print(f"(openai:gpt-4o skipped: the shared tiktoken cache {TIKTOKEN_CACHE} is absent)")
    for spec, model, env in runs:
        print(f"\n== count of an imported OpenAI request ({spec}) ==")
        print(f"{'messages':>9}{'count_imported s':>18}{'s per 1k msgs':>15}{'complete counts':>17}"
              f"{'CLI count s':>13}{'whole-count method s':>22}  figures")
        os.environ.update(env)
        try:
            _import_rows(spec, model, sizes, whole_max, estimate)
        finally:
            for key in env:
                os.environ.pop(key, None)


def _whole_estimate(counter, imported, samples: int = 30) -> float:
    """Seconds the whole-count method would take (one complete count per message, of the request cut there),
    estimated from ``samples`` evenly spaced prefix counts: for sizes where running it is out of reach."""
    messages, tools = list(imported.messages), list(imported.tools)
    n = len(messages)
    took = 0.0
    for k in range(n // samples, n + 1, max(1, n // samples)):
        counter._cache.clear()
        start = time.perf_counter()
        counter.count(messages[:k], tools)
        took += time.perf_counter() - start
    return took * n / len(range(n // samples, n + 1, max(1, n // samples)))


def _import_rows(spec: str, model: str, sizes: list[int], whole_max: int, estimate: bool = False) -> None:
    counter = make_counter(spec)
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            body = openai_body(n, model)
            imported = import_data(body).requests[0]
            counter._cache.clear()
            counter.full_counts = 0
            start = time.perf_counter()
            fast = count_imported(imported, counter)
            seconds = time.perf_counter() - start
            counts = counter.full_counts
            path = Path(tmp) / f"openai-{n}.json"
            path.write_text(json.dumps(body))
            start = time.perf_counter()
            chosen = ["--counter", spec] if spec.startswith("hf:") else []
            subprocess.run([sys.executable, "-m", "core.cli", "count", *chosen, str(path)], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
            cli = time.perf_counter() - start
            whole, same = "not run", ""
            if n <= whole_max:
                counter._cache.clear()
                start = time.perf_counter()
                slow = count_imported(imported, counter, reference=True)
                took = time.perf_counter() - start
                whole = f"{took:.2f} ({took / seconds:.0f}x)"
                same = "identical" if slow.to_json() == fast.to_json() else "DIFFERENT"
            elif estimate:
                took = _whole_estimate(counter, imported)
                whole = f"~{took:.0f} ({took / seconds:.0f}x) est."
            print(f"{n:>9}{seconds:>18.2f}{seconds / n * 1000:>15.3f}{counts:>17}{cli:>13.2f}{whole:>22}  {same}",
                  flush=True)


def bench_assemble_history(sizes: list[int]) -> None:
    """``assemble`` of a request with N history messages, at a 32k limit and at half the size of all of it."""
    from core import assemble, parse_request

    print("\n== assemble with many history messages (mistral:tekken_240911; core/assembly.py) ==")
    print(f"{'messages':>9}{'context limit':>15}{'seconds':>10}{'complete counts':>17}")
    counter = make_counter("mistral:tekken_240911")
    for n in sizes:
        data = large_request(passages=0, turns=n // 2, tools=1, context_limit=10 ** 7)
        roomy = assemble(parse_request(data), counter).input_tokens
        for limit in (32768, roomy // 2 + data["max_new_tokens"] + data["margin"]):
            data["context_limit"] = limit
            counter._cache.clear()
            counter.full_counts = 0
            start = time.perf_counter()
            assemble(parse_request(data), counter)
            print(f"{n:>9}{limit:>15}{time.perf_counter() - start:>10.2f}{counter.full_counts:>17}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--assemble", action="store_true", help="also time assemble with 6,000 and 10,000 history "
                                                                 "messages")
    parser.add_argument("--whole-max", type=int, default=1000,
                        help="largest import also counted the old way, every variant whole (default 1000)")
    parser.add_argument("--skip", default="", help="comma-separated sections to leave out: mistral,hf,import")
    parser.add_argument("--whole-estimate", action="store_true",
                        help="above --whole-max, estimate the whole-count method from 30 evenly spaced prefix counts")
    parser.add_argument("--hf-import", default="", metavar="NAMES",
                        help="the import section with these hf tokenizers only (e.g. qwen3,phi35,gemma4)")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    sizes = [1000, 32000] if args.quick else [1000, 32000, 200000]
    if "mistral" not in skip:
        bench_mistral(sizes)
    if "hf" not in skip:
        bench_hf(sizes)
    if "import" not in skip:
        bench_import_count([1000, 3000] if args.quick else [1000, 3000, 10000], args.whole_max,
                           [name for name in args.hf_import.split(",") if name], args.whole_estimate)
    if args.assemble:
        bench_assemble_history([6000, 10000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
