"""Replay under edited limits, diff against the recording, and what-if sweeps (issue 6, core)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURES, base_request, default_counter, passage, turn

from core import RequiredContextTooLarge, assemble, load_entries, load_result, make_counter, parse_request
from core.cli import main
from core.replay import Edits, ReplayUnavailable, diff, limit_range, replay, sweep, what_if

RECORDED = ["demo.result.json", "demo.baseline.json", "rag_tight.result.json", "trip_conversation.result.json",
            "tool_exchange.result.json", "trip_plan_summarise_span.result.json", "trip_plan_pin_and_fold.result.json"]


@pytest.mark.parametrize("name", RECORDED)
def test_replay_with_unchanged_edits_reproduces_the_recording_byte_for_byte(name):
    recorded = load_result(FIXTURES / name)
    assert replay(recorded, counter=default_counter()).to_json() == (FIXTURES / name).read_text(encoding="utf-8")


def test_a_result_without_its_request_opens_read_only():
    recorded = load_result(FIXTURES / "demo.result.json").model_copy(update={"request": None})
    with pytest.raises(ReplayUnavailable, match="read-only"):
        replay(recorded, counter=default_counter())


def test_diff_on_a_crafted_case():
    request = parse_request(base_request(history=turn(1, 30) + turn(2, 30),
                                         evidence=[passage("a", 0.9, 40), passage("b", 0.5, 40)]))
    counter = default_counter()
    roomy = assemble(request, counter)
    tight = replay(roomy, edits=Edits(context_limit=roomy.input_tokens + 256 + 16 - 50), counter=counter)
    changes = {(c.section, c.id): c for c in diff(roomy, tight).items}
    assert changes[("evidence", "b")].kind == "newly dropped"
    assert changes[("evidence", "b")].decision_before == "kept" and changes[("evidence", "b")].decision_after == "dropped"
    assert changes[("instructions", "instructions")].kind == "same"
    result = diff(roomy, tight)
    assert result.budget_before["context_limit"] == 4096 and result.budget_after["context_limit"] < 4096
    assert {c.id for c in result.changes} == {"b"}
    back = diff(tight, roomy)
    assert [c.kind for c in back.changes] == ["newly kept"]
    assert json.loads(json.dumps(result.to_json()))["items"][0]["change"] == "same"


def test_fill_order_and_plan_edits():
    counter = default_counter()
    demo = load_result(FIXTURES / "demo.result.json")
    history_first = replay(demo, edits=Edits(fill_order=("history", "evidence")), counter=counter)
    assert history_first.fill_order == ["history", "evidence"] and history_first.kept_turns > demo.kept_turns
    plan = load_result(FIXTURES / "trip_plan_drop_oldest.result.json")
    unpinned = replay(plan, edits=Edits(pins={"turn-allergy": False}), counter=counter)
    assert {e.id: e.decision for e in unpinned.trace}["turn-allergy"] == "dropped"
    wider = replay(plan, edits=Edits(shares={"recent": 0.5}), counter=counter)
    assert wider.input_tokens < plan.input_tokens
    with pytest.raises(Exception, match="plan"):
        replay(demo, edits=Edits(shares={"history": 0.5}), counter=counter)


def test_an_edit_that_breaks_the_required_check_raises_with_the_shortfall():
    with pytest.raises(RequiredContextTooLarge) as info:
        replay(load_result(FIXTURES / "demo.result.json"), edits=Edits(context_limit=500), counter=default_counter())
    assert info.value.available_input_tokens == 500 - 256 - 32


def test_sweep_agrees_with_individual_assemblies_at_every_point():
    counter = default_counter()
    demo = load_result(FIXTURES / "demo.result.json")
    limits = limit_range(demo, counter=counter, steps=8)
    assert demo.context_limit in limits
    points = sweep(demo, "context_limit", limits, counter=counter)
    assert [p.value for p in points] == limits
    assert points[0].fits and not points[0].kept  # the smallest limit holds the required content only
    assert points[-1].dropped == ()                 # the largest holds everything
    for point in points:
        single = assemble(demo.request.model_copy(update={"context_limit": point.value}), counter)
        assert point.input_tokens == single.input_tokens
        assert point.section_tokens == single.sent_tokens_by_section()
        assert set(point.dropped) == {f"{e.section}/{e.id}" for e in single.trace if e.decision == "dropped"}
    below = sweep(demo, "context_limit", [limits[0] - 1], counter=counter)[0]
    assert not below.fits and below.error == "short by 1 tokens"


def test_what_if_over_many_recordings():
    entries = load_entries(FIXTURES / "recorded.results.jsonl")
    summary = what_if([e.result for e in entries], Edits(context_limit=520), counter=default_counter())
    assert summary.requests == len(entries)
    assert summary.replayed + summary.failed_required + summary.read_only + len(summary.errors) == len(entries)
    assert summary.changed > 0 and summary.failed_required > 0


@st.composite
def requests(draw):
    history = [m for n in range(draw(st.integers(0, 6))) for m in turn(n, draw(st.integers(1, 40)))]
    evidence = [passage(f"p{i}", draw(st.floats(0, 1)), draw(st.integers(1, 60))) for i in range(draw(st.integers(0, 8)))]
    return base_request(history=history, evidence=evidence, context_limit=4096), draw(
        st.lists(st.integers(300, 1400), min_size=1, max_size=5))


@given(requests())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_cache_never_changes_a_decision(case):
    data, limits = case
    warm = default_counter()
    recorded = assemble(parse_request(data), warm)
    for limit in limits:  # replays share the warm counter's caches; a fresh counter has none
        try:
            cached = replay(recorded, edits=Edits(context_limit=limit), counter=warm).to_json()
        except RequiredContextTooLarge as exc:
            with pytest.raises(RequiredContextTooLarge) as again:
                replay(recorded, edits=Edits(context_limit=limit), counter=make_counter())
            assert again.value.record() == exc.record()
            continue
        assert replay(recorded, edits=Edits(context_limit=limit), counter=make_counter()).to_json() == cached


def test_replay_cli_single_and_jsonl(capsys):
    code = main(["replay", str(FIXTURES / "demo.result.json"), "--context-limit", "900"])
    out = capsys.readouterr().out
    assert code == 0 and "newly dropped" in out and "context_limit 1050 -> 900" in out
    code = main(["replay", str(FIXTURES / "demo.result.json"), "--context-limit", "900", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["budget_after"]["context_limit"] == 900
    code = main(["replay", str(FIXTURES / "recorded.results.jsonl"), "--context-limit", "700", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["requests"] == len(load_entries(FIXTURES / "recorded.results.jsonl"))
    code = main(["replay", str(FIXTURES / "demo.result.json"), "--context-limit", "500"])
    captured = capsys.readouterr()
    assert code == 3 and json.loads(captured.out)["available_input_tokens"] == 212 and "short by" in captured.err
