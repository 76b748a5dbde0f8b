"""Synthetic large requests for benchmarks and scale tests (deterministic for a given seed)."""
from __future__ import annotations

import random

WORDS = ("context budget token window passage evidence history turn tool schema request model answer "
         "cluster node disk latency cache deploy rollback certificate backup restore ticket approval "
         "version revision section span chunk index retrieval score rank source label boundary").split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def text_of(rng: random.Random, words: int) -> str:
    out, left = [], words
    while left > 0:
        n = min(left, rng.randint(6, 18))
        out.append(sentence(rng, n))
        left -= n
    return " ".join(out)


def large_request(passages: int = 300, turns: int = 100, tools: int = 16, *, context_limit: int = 32768,
                  seed: int = 7) -> dict:
    rng = random.Random(seed)
    history = []
    for t in range(turns):
        history.append({"role": "user", "content": text_of(rng, rng.randint(8, 60)), "id": f"turn-{t:03d}"})
        history.append({"role": "assistant", "content": text_of(rng, rng.randint(10, 90))})
    evidence = [{"id": f"p{i:04d}", "source": f"docs/page-{i % 37}.md#s{i}", "score": round(rng.random(), 4),
                 "text": text_of(rng, rng.randint(30, 300))} for i in range(passages)]
    tool_defs = [{"name": f"tool_{k}", "description": sentence(rng, 12),
                  "parameters": {"type": "object", "properties": {
                      f"arg{j}": {"type": rng.choice(["string", "integer", "boolean"]), "description": sentence(rng, 6)}
                      for j in range(rng.randint(1, 4))}, "required": ["arg0"]}} for k in range(tools)]
    exchange = {"calls": [{"id": "benchcal1", "name": "tool_0", "arguments": {"arg0": "x"}}],
                "results": [{"tool_call_id": "benchcal1", "content": text_of(rng, 40)}]}
    return {"id": f"bench-{passages}x{turns}", "instructions": text_of(rng, 60), "tools": tool_defs,
            "history": history, "current": text_of(rng, 20), "tool_exchanges": [exchange] if tools else [],
            "evidence": evidence, "context_limit": context_limit, "max_new_tokens": 1024, "margin": 64}
