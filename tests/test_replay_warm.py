"""Replays on a warm counter (issue 15): after any sequence of budget edits (the limit down and back up, the output
reserve, the margin, the fill order), each replay of a recording gives the bytes, the trace and the fields set of a
fresh reference assembly of the edited request, with the embedded counter and with real Qwen3. A warm counter holds
the recording's memo (``core.assembly_memo``) and every earlier replay's counts; the reference counts every attempt
whole on a counter whose memos are cleared."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import SHARED, base_request, passage

from core import RequiredContextTooLarge, assemble, make_counter, parse_request
from core.errors import ContextBudgetError
from core.replay import Edits, edited_request, replay

QWEN3 = SHARED / "tokenizers" / "hf" / "qwen3"
WORDS = st.sampled_from(["plan", "the", "route", "ok.", "Yes!", "12", "é", "save_copy", "—", "...", "x"])
TEXT = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)
EDGE = st.sampled_from(["", "", "\n", " ", "\n\n"])


@st.composite
def histories(draw) -> list[dict]:
    """Plain turns, turns whose messages end in whitespace, single-message turns and tool-call turns."""
    history: list[dict] = []
    for n in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["plain", "plain", "single", "tools"]))
        history.append({"role": "user", "content": draw(TEXT) + draw(EDGE), "id": f"t{n}"})
        if kind == "tools":
            call = f"call{n:05d}"
            history += [{"role": "assistant", "tool_calls": [{"id": call, "name": "search", "arguments": {"q": draw(TEXT)}}]},
                        {"role": "tool", "tool_call_id": call, "content": draw(TEXT)}]
        if kind != "single":
            history.append({"role": "assistant", "content": draw(TEXT) + draw(EDGE)})
    return history


@st.composite
def recordings(draw) -> tuple[dict, list[Edits]]:
    evidence = [passage(f"p{i}", draw(st.sampled_from([0.2, 0.5, 0.5, 0.9])), text=draw(TEXT))
                for i in range(draw(st.integers(0, 8)))]
    tools = [{"name": "search", "description": "search the notes",
              "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}]
    data = base_request(history=draw(histories()), evidence=evidence, tools=tools,
                        fill_order=draw(st.sampled_from([["history", "evidence"], ["evidence", "history"]])),
                        context_limit=draw(st.integers(500, 1400)), max_new_tokens=64, margin=8)
    edits = draw(st.lists(st.one_of(
        st.builds(lambda v: Edits(context_limit=v), st.integers(300, 1600)),
        st.builds(lambda v: Edits(max_new_tokens=v), st.integers(1, 400)),
        st.builds(lambda v: Edits(margin=v), st.integers(0, 60)),
        st.builds(lambda v: Edits(fill_order=v), st.sampled_from([("history", "evidence"), ("evidence", "history")])),
    ), min_size=1, max_size=6))
    return data, edits


def _outcome(fn):
    """The result's JSON and the fields each trace entry and message was given (``model_fields_set``)."""
    try:
        result = fn()
    except RequiredContextTooLarge as exc:
        return f"too large: {exc}"
    except ContextBudgetError as exc:
        return f"no room: {exc}"
    result = result.model_copy(update={"counting_note": None})
    return (result.to_json(), [sorted(e.model_fields_set) for e in result.trace],
            [sorted(m.model_fields_set) for m in result.messages])


def _check(spec: str | None, recording: tuple[dict, list[Edits]], reference_counter) -> None:
    data, edits = recording
    request = parse_request(data)
    counter = make_counter(spec)
    try:
        recorded = assemble(request, counter)
    except RequiredContextTooLarge:
        return
    for edit in edits:
        try:
            at = edited_request(request, edit)
        except Exception:  # noqa: BLE001 - an edit the request refuses (no room for the reserve): not a replay
            continue
        reference_counter.__dict__.pop("_request_memos", None)  # the reference starts with no memo of this content
        assert (_outcome(lambda: replay(recorded, edits=edit, counter=counter))
                == _outcome(lambda: assemble(at, reference_counter, reference=True))), edit


@given(recordings())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_replay_on_a_warm_counter_is_the_reference_assembly_of_the_edited_request(recording):
    _check(None, recording, make_counter())


@pytest.fixture(scope="module")
def qwen3():
    if not (QWEN3 / "tokenizer.json").is_file():
        pytest.skip(f"{QWEN3} is absent: the real Qwen3 tokenizer is not here")
    return f"hf:{QWEN3}"


@given(recording=recordings())
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
def test_every_replay_on_a_warm_qwen3_counter_is_the_reference_assembly(qwen3, recording):
    _check(qwen3, recording, _reference_counter(qwen3))


def _reference_counter(spec: str, made: dict = {}):  # noqa: B006 - one Qwen3 reference counter per process
    if spec not in made:
        made[spec] = make_counter(spec)
    return made[spec]
