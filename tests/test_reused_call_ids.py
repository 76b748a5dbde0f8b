"""Tool call ids reused across turns (frameworks that number calls per turn write ``call_0`` every time): such a
request assembles and replays, default and reference alike, and the audit still names the reuse."""
from __future__ import annotations

import json

import pytest
from support import SHARED

from core import assemble, audit, import_data, make_counter, parse_request, to_core_request
from core.replay import Edits, replay

HF = SHARED / "tokenizers" / "hf"


NAMES = ("lookup", "weigh", "paint")


def reusing(turns: int = 3, exchanges: int = 2, context_limit: int = 4096, names: tuple[str, ...] = ("lookup",)):
    """``call_0`` in every turn and exchange; the calls name ``names`` in turn (a template that finds a result's
    tool name by its call id then has several calls to choose from)."""
    history = []
    for t in range(turns):
        history += [{"role": "user", "content": f"What is in box {t}?"},
                    {"role": "assistant", "tool_calls": [{"id": "call_0", "name": names[t % len(names)],
                                                                 "arguments": {"box": t}}]},
                    {"role": "tool", "tool_call_id": "call_0", "content": f"box {t} holds {t * 7} marbles"},
                    {"role": "assistant", "content": f"Box {t} holds {t * 7} marbles."}]
    calls = [{"calls": [{"id": "call_0", "name": "lookup", "arguments": {"box": "all"}}],
              "results": [{"tool_call_id": "call_0", "content": f"step {k}: 21 marbles"}]} for k in range(exchanges)]
    tools = [{"name": name, "description": f"{name.title()} a box.",
              "parameters": {"type": "object", "properties": {"box": {"type": "string"}}}} for name in names]
    return parse_request({"instructions": "Answer briefly.", "tools": tools, "history": history,
                          "current": "How many in all?", "tool_exchanges": calls, "context_limit": context_limit,
                          "max_new_tokens": 256, "margin": 16})


def _json(result) -> str:
    return result.model_copy(update={"counting_note": None}).model_dump_json()


def _specs(toy_tokenizer_dir):
    specs = ["mistral:", f"hf:{toy_tokenizer_dir}"]
    specs += [f"hf:{HF / name}" for name in ("qwen3", "gemma4") if (HF / name).is_dir()]
    return specs


@pytest.mark.parametrize("names", [("lookup",), NAMES], ids=["one tool", "three tools"])
def test_a_request_reusing_call_ids_assembles_as_the_reference_does(toy_tokenizer_dir, names):
    request = reusing(turns=4, names=names)
    for spec in _specs(toy_tokenizer_dir):
        full = assemble(request, make_counter(spec)).input_tokens
        required = assemble(request.model_copy(update={"history": []}), make_counter(spec)).input_tokens
        for limit in sorted({full + 272, (full + required) // 2 + 272, required + 1 + 272}):
            edited = request.model_copy(update={"context_limit": limit})
            counter = make_counter(spec)
            default = assemble(edited, counter)
            reference = assemble(edited, make_counter(spec), reference=True)
            assert _json(default) == _json(reference), (spec, limit)
            assert default.input_tokens == len(counter.token_ids(default.messages, default.tools))
            exchanges = [e.id for e in default.trace if e.section == "tool_exchanges"]
            assert exchanges == ["call_0", "call_0#2"]  # one trace id each: the second numbered
            sent = [m for m in default.messages if m.role == "tool"]
            assert len(sent) == default.kept_turns + 2
        assert {f.rule for f in audit(default, make_counter(spec))} & {"duplicate-id"}
        rules = {f.rule for f in audit(default, make_counter(spec))}
        assert not rules & {"tool-result-without-call", "tool-call-without-result"}, (spec, rules)


def test_a_replay_of_a_result_reusing_call_ids_equals_a_fresh_assembly():
    request = reusing(turns=6)
    counter = make_counter("mistral:")
    recorded = assemble(request, counter)
    for limit in (1200, 700, 4096):
        again = replay(recorded, edits=Edits(context_limit=limit), counter=counter)
        fresh = assemble(request.model_copy(update={"context_limit": limit}), make_counter("mistral:"), reference=True)
        assert _json(again) == _json(fresh), limit
    assert again.kept_turns == 6


def test_an_openai_body_numbering_calls_per_turn_is_re_assembled_not_refused():
    messages = [{"role": "system", "content": "Be brief."}]
    for city in ("Paris", "London", "Rome"):
        messages += [{"role": "user", "content": f"Weather in {city}?"},
                     {"role": "assistant", "content": None, "tool_calls": [{"id": "call_0", "type": "function", "function": {
                         "name": "get_weather", "arguments": json.dumps({"city": city})}}]},
                     {"role": "tool", "tool_call_id": "call_0", "content": f"{city}: sunny"},
                     {"role": "assistant", "content": "Sunny."}]
    messages.append({"role": "user", "content": "And tomorrow?"})
    body = {"model": "gpt-4.1", "messages": messages, "tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]}
    (imported,) = import_data(body, source="body.json").requests
    request = to_core_request(imported, context_limit=8000, max_new_tokens=256)
    assert sum(len(m.tool_calls) for m in request.history) == 3
    default = assemble(request, make_counter("mistral:"))
    assert _json(default) == _json(assemble(request, make_counter("mistral:"), reference=True))
    assert [m.tool_call_id for m in default.messages if m.role == "tool"] == ["call_0"] * 3
    assert sorted(f.rule for f in audit(default, make_counter("mistral:")) if f.rule == "duplicate-id") == \
        ["duplicate-id"] * 2


@pytest.mark.parametrize("where", ["history", "exchange"])
def test_an_id_twice_in_one_message_is_still_refused(where):
    from core import RequestError

    twice = [{"id": "call_0", "name": "lookup"}, {"id": "call_0", "name": "lookup"}]
    data = json.loads(reusing(turns=1, exchanges=1).model_dump_json())
    if where == "history":
        data["history"][1]["tool_calls"] = twice
        data["history"].insert(3, {"role": "tool", "tool_call_id": "call_0", "content": "again"})
    else:
        data["tool_exchanges"][0]["calls"] = twice
    with pytest.raises(RequestError, match="tool call id 'call_0' is used twice in"):
        parse_request(data)
