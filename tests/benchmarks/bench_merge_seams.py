"""How often the seam prediction of single-user-message turns (core.assembly_merge) holds on real text.

    .venv/bin/python -m tests.benchmarks.bench_merge_seams [--turns 40] [--counter mistral:tekken_240911]

Texts are read where they are from ../shared/realworld*/ (every string under a content/text/input/output
key of the JSON and JSONL files there, in file order; nothing is copied). Consecutive texts become
histories of single user messages (and, in a second pass, runs of two or three user messages before an
answer), with the next three texts as passages (history filled first, so the first passage meets the joined
run); each request is assembled by the default and the reference at allowances that keep about a
quarter, half and three quarters of its history. Printed: seams predicted from the text beside them,
seams counted whole (no cut near the seam), results that fell back to the reference (a prediction a
complete count disagreed with), and whether every result equals the reference. A stretch of single-message turns
the history fill takes at once (``FastBuilder.fitting_turns`` / ``older_turns``) counts a seam per turn.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import core.assembly_merge as merge
from core.assembly_fast import FastBuilder
from core import assemble, make_counter, parse_request

SHARED = Path(__file__).resolve().parents[3] / "shared"
KEYS = ("content", "text", "input", "output")


def real_texts() -> list[str]:
    texts: list[str] = []

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in KEYS and isinstance(item, str) and 0 < len(item) < 6000:
                    texts.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted([*SHARED.glob("realworld*/**/*.json"), *SHARED.glob("realworld*/**/*.jsonl")]):
        raw = path.read_text(encoding="utf-8", errors="replace")
        try:
            walk(json.loads(raw))
        except json.JSONDecodeError:
            for line in raw.splitlines():
                try:
                    walk(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return texts


def history(texts: list[str], runs: bool) -> list[dict]:
    out, n = [], 0
    while n < len(texts):
        size = 2 + n % 2 if runs else 1
        for text in texts[n:n + size]:
            out.append({"role": "user", "content": text, "id": f"t{len(out)}"})
        n += size
        if runs and n < len(texts):
            out.append({"role": "assistant", "content": texts[n]})
            n += 1
    return out


class Tally:
    def __init__(self) -> None:
        self.predicted = self.whole = 0
        self._turn, self._first = merge.MergedUserTurns.turn, merge.MergedUserTurns.first_passage
        tally = self

        def counted(method):
            def wrapper(self, *args):
                value = method(self, *args)
                tally.predicted += value is not None
                tally.whole += value is None
                return value
            return wrapper

        def taken(method):  # a stretch of turns the history fill takes at once: each a seam predicted
            def wrapper(self, *args):
                figures = method(self, *args)
                tally.predicted += len(figures or ())
                return figures
            return wrapper

        merge.MergedUserTurns.turn = counted(self._turn)
        merge.MergedUserTurns.first_passage = counted(self._first)
        FastBuilder.fitting_turns = taken(FastBuilder.fitting_turns)
        FastBuilder.older_turns = taken(FastBuilder.older_turns)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40, help="texts per request")
    parser.add_argument("--counter", default="mistral:tekken_240911")
    args = parser.parse_args(argv)
    texts = real_texts()
    if len(texts) < 3 * args.turns:
        print(f"only {len(texts)} texts under {SHARED}/realworld*: nothing to measure")
        return 0
    counter, tally = make_counter(args.counter), Tally()
    print(f"{len(texts)} real texts ({sum(map(len, texts)) / 1e3:.0f} kB) from {SHARED}/realworld*")
    print("history                     requests  seams_predicted  counted_whole  fell_back  identical")
    for runs in (False, True):
        requests = fell_back = same = 0
        predicted, whole = tally.predicted, tally.whole
        for start in range(0, len(texts) - args.turns - 2, args.turns):
            chunk = texts[start:start + args.turns + 2]
            passages = [{"id": f"p{k}", "source": "real", "text": text, "score": 1.0}
                        for k, text in enumerate(texts[start + args.turns + 2:start + args.turns + 5])]
            data = {"instructions": chunk[0], "current": chunk[1], "history": history(chunk[2:], runs),
                    "evidence": passages, "max_new_tokens": 8, "margin": 0}
            roomy = assemble(parse_request(dict(data, context_limit=10 ** 7)), counter, reference=True)
            for share in (0.25, 0.5, 0.75):
                request = parse_request(dict(data, context_limit=8 + int(roomy.input_tokens * share)))
                try:
                    reference = assemble(request, counter, reference=True)
                except Exception:  # noqa: BLE001 - the required part alone does not fit: nothing to compare
                    continue
                fast = assemble(request, make_counter(args.counter))
                requests += 1
                fell_back += fast.counting_note is not None
                same += fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()
        label = "runs of 2-3 user messages" if runs else "single-message turns"
        print(f"{label:<27} {requests:8d}  {tally.predicted - predicted:15d}  {tally.whole - whole:13d}"
              f"  {fell_back:9d}  {same:5d}/{requests}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
