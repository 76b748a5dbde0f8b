"""Benchmark for issue 12: importing long agent transcripts, where every assistant turn is one call
whose input is the whole conversation before it (n turns hold about n*n/2 input messages in all).

    .venv/bin/python -m tests.benchmarks.bench_transcripts               (turns: 250 500 1000 1500)
    .venv/bin/python -m tests.benchmarks.bench_transcripts --turns 2000

For each size it prints the import time beside the time to decode the same file's JSON lines, and
their ratio, measured side by side in this run (best of a few repeats). Linear work keeps the ratio
growing slowly with n (copying each call's message list is the only n*n part, and it is list copies).
Printed, not asserted: run on demand.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from core.formats import import_file

from .bench_assembly import best


def claude_code(turns: int) -> str:
    rows, parent = [], None
    for i in range(turns):
        content = [{"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": "x" * 200}] if i else "start"
        rows.append({"type": "user", "uuid": f"u{i}", "parentUuid": parent, "sessionId": "s",
                     "message": {"role": "user", "content": content}})
        rows.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}", "sessionId": "s",
                     "message": {"id": f"m{i}", "role": "assistant", "model": "claude",
                                 "content": [{"type": "text", "text": "ok " * 30},
                                             {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"p": i}}],
                                 "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000 + i}}})
        parent = f"a{i}"
    return "".join(json.dumps(r) + "\n" for r in rows)


def codex(turns: int) -> str:
    rows = [{"type": "session_meta", "payload": {"id": "s", "instructions": "hi"}},
            {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "go"}]}}]
    for i in range(turns):
        rows.append({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{}",
                                                          "call_id": f"c{i}"}})
        rows.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": f"c{i}",
                                                          "output": "x" * 200}})
    return "".join(json.dumps(r) + "\n" for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[250, 500, 1000, 1500])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"{'format':<24} {'turns':>6} {'input msgs':>11} {'decode ms':>10} {'import ms':>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("claude-code-transcript", claude_code), ("codex-rollout", codex)):
            for turns in args.turns:
                path = Path(tmp) / f"{name}-{turns}.jsonl"
                path.write_text(make(turns))
                decode_s = best(lambda: [json.loads(line) for line in path.read_text().splitlines()], args.repeats)
                import_s = best(lambda: import_file(path), args.repeats)
                messages = sum(len(r.messages) for r in import_file(path).requests)
                print(f"{name:<24} {turns:>6} {messages:>11} {decode_s * 1000:>10.1f} {import_s * 1000:>10.1f} "
                      f"{import_s / decode_s:>7.1f}")


if __name__ == "__main__":
    main()
