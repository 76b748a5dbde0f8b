"""Random plans over tool-call histories, the default against the reference, on ONE counter reused across every
draw (so what a counter learned from one plan is there for the next, as in an inspector session). Prints the draws
run and the ones that differ, with the JSON diff of the first few. By hand; nothing is asserted.

    .venv/bin/python -m tests.benchmarks.plan_fuzz hf:../shared/tokenizers/hf/gemma4 --draws 60 --seed 2
    .venv/bin/python -m tests.benchmarks.plan_fuzz mistral: --draws 200 --seed 7

Each draw: a system message (sometimes random text), a history of 1-12 tool-call turns (user question, call,
result, answer; some answers left out, some messages pinned) with random short texts, a pinned question; a random
strategy; the roomy result, then three budgets between a fifth of it and a little over.
"""
from __future__ import annotations

import argparse
import difflib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test suite's helpers

WORDS = ["train", " leaves", "\n", "at", "  ", "7", "é", "<think>", "ok", "{}", "x"]


def main(argv: list[str] | None = None) -> int:
    from test_plan_fast_counting import Fixed, outcome
    from test_plans_tool_turns import STRATEGIES, TOOLS, data_for, plan_for, tool_history

    from core import ContextAssembler, ContextBudgetError, Message, SummariseSpan, make_counter

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counter", help="a counter spec (mistral:, hf:DIR, ...)")
    parser.add_argument("--draws", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=3, help="differences shown in full (default 3)")
    args = parser.parse_args(argv)
    counter = make_counter(args.counter)
    rng = random.Random(args.seed)
    ran = shown = 0
    differ: list[tuple[int, str, int]] = []

    def both(comp: str, budget: int, data: dict) -> tuple:
        strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
        slow = outcome(ContextAssembler(plan_for(comp, budget), counter, strategies=strategies, reference=True),
                       data, tools=TOOLS)
        fast = outcome(ContextAssembler(plan_for(comp, budget), counter, strategies=strategies), data, tools=TOOLS)
        return slow, fast

    for draw in range(args.draws):
        texts = ["".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(3, 9))]
        history = tool_history(rng.randint(1, 12), texts)
        history = [m for m in history if not (m.role == "assistant" and m.content and rng.random() < 0.2)]
        history = [m.model_copy(update={"pinned": True}) if rng.random() < 0.08 else m for m in history]
        data = data_for(history)
        if rng.random() < 0.3:
            text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) or "s"
            data["system"] = [Message(role="system", content=text)]
        comp = rng.choice(STRATEGIES)
        roomy, _ = both(comp, 10 ** 5, data)
        if isinstance(roomy, ContextBudgetError):
            continue
        for _ in range(3):
            budget = max(8, int(roomy.input_tokens * rng.uniform(0.2, 1.05)))
            slow, fast = both(comp, budget, data)
            ran += 1
            if isinstance(slow, Exception) or isinstance(fast, Exception):
                same = type(slow) is type(fast) and str(slow) == str(fast)
                a, b = [str(slow)], [str(fast)]
            else:
                a = json.dumps(json.loads(slow.to_json()), indent=1).splitlines()
                b = json.dumps(json.loads(fast.model_copy(update={"counting_note": None}).to_json()), indent=1).splitlines()
                same = a == b
            if not same:
                differ.append((draw, comp, budget))
                if shown < args.show:
                    shown += 1
                    print(f"draw {draw}, {comp}, budget {budget}: reference (-) and default (+) differ")
                    print("\n".join(list(difflib.unified_diff(a, b, lineterm="", n=2))[2:40]))
    print(f"{counter.name}: {ran} run, {len(differ)} differ" + (f" (draws {sorted({d for d, _, _ in differ})})"
                                                               if differ else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
