"""The history fill's batched walk (``core.assembly_history``): runs of turns priced from their spans kept in one step,
the turns older than the first misfit priced without an ``attempt`` each. At every limit across the places where
turns start to fit (runs broken by turns of other shapes, totals near the allowance, the first misfit), replayed on a
warm counter, the result is the reference assembly's, bytes and fields set."""
from __future__ import annotations

import json
import random

import pytest

from core import assemble, make_counter, parse_request
from core.replay import Edits, edited_request, replay
from support import outcome, replays_are_the_reference
from tests.benchmarks.workload import text_of


def _mixed_history(turns: int, rng: random.Random) -> list[dict]:
    """Plain turns (priced from their spans under ``mistral:``) broken by turns of other shapes: a single user
    message (open at its end), a tool call with its result, two assistant messages in a row, whitespace at edges."""
    out = []
    for t in range(turns):
        out.append({"role": "user", "content": text_of(rng, rng.randint(4, 30)) + ("\n" if t % 4 == 1 else ""),
                    "id": None if t % 9 == 8 else f"turn-{t:03d}"})  # an id-less turn is named turn-N
        if t % 5 == 3:
            continue
        if t % 6 == 4:
            call = f"call{t:05d}"
            out.append({"role": "assistant", "content": None,
                        "tool_calls": [{"id": call, "name": "tool_0", "arguments": {"arg0": text_of(rng, 3)}}]})
            out.append({"role": "tool", "tool_call_id": call, "content": text_of(rng, rng.randint(5, 20))})
        if t % 7 == 2:
            out.append({"role": "assistant", "content": text_of(rng, rng.randint(3, 15))})
        out.append({"role": "assistant", "content": " " + text_of(rng, rng.randint(5, 40)) if t % 8 == 5 else
                    text_of(rng, rng.randint(5, 40))})
    return out


def _request(turns: int = 30, passages: int = 4) -> dict:
    rng = random.Random(15)
    tool = {"name": "tool_0", "description": "Looks a thing up.",
            "parameters": {"type": "object", "properties": {"arg0": {"type": "string"}}, "required": ["arg0"]}}
    evidence = [{"id": f"p{i}", "source": f"doc-{i}", "score": round(rng.random(), 3), "text": text_of(rng, 20 + 9 * i)}
                for i in range(passages)]
    return {"id": "history-walk", "instructions": text_of(rng, 20), "tools": [tool], "history": _mixed_history(turns, rng),
            "current": text_of(rng, 8), "evidence": evidence, "context_limit": 8000, "max_new_tokens": 256,
            "margin": 16}


@pytest.mark.parametrize("fill_order", [("history", "evidence"), ("evidence", "history")])
def test_replays_at_limits_across_the_turns_are_the_reference(fill_order):
    request = parse_request(_request())
    roomy = assemble(edited_request(request, Edits(context_limit=10 ** 6)), make_counter())
    reserve = request.max_new_tokens + request.margin
    required = sum(e.tokens for e in roomy.trace if e.decision == "required") + reserve
    everything = sum(e.tokens for e in roomy.trace) + reserve
    limits = sorted({*range(required - 2, required + 60), *range(required, everything + 20, 7)})
    outcomes = replays_are_the_reference(request, limits, fill_order)
    kept_counts = {sum(e["section"] == "history" and e["decision"] == "kept" for e in json.loads(o[0])["trace"])
                   for o in outcomes if not isinstance(o, str)}
    assert len(kept_counts) > 20  # the limits covered most numbers of kept turns, runs broken at each shape


def test_a_fresh_assembly_at_each_limit_is_the_replay():
    """A fresh default assembly (its turns' shapes not yet asked for when the first turn is weighed) and a warm replay
    agree with each other at every limit."""
    request = parse_request(_request(turns=20, passages=2))
    counter = make_counter()
    recorded = assemble(request, counter)
    for limit in range(900, 2600, 23):
        edit = Edits(context_limit=limit)
        fresh = outcome(lambda: assemble(edited_request(request, edit), make_counter()))
        assert outcome(lambda: replay(recorded, edits=edit, counter=counter)) == fresh, limit
