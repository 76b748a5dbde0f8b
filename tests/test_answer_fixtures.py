"""The committed answers (recorded from Gemma 3 270M through llama.cpp's server by
fixtures/record_answers.py) grade offline, with no model running, and carry their provenance."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES

from core.cli import main
from core.experiments import grade_file, load_answers, load_rules, sha256_hex
from core.export import openai_body

GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
ANSWERS = {
    "demo.answers.jsonl": "demo.rules.json",
    "demo_positions.answers.jsonl": "demo.rules.json",
    "rag/roomy.answers.jsonl": "rag/roomy.rules.json",
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_recorded_answers_carry_their_provenance(name):
    recorded = load_answers(FIXTURES / name)
    header = recorded.header
    assert header["model"]["requested"] == "gemma3-270m-q4_k_m" and header["model"]["listed"] is True
    assert header["model_declared"] == {"sha256": GEMMA_SHA256}
    assert header["endpoint"]["url"].startswith("http://127.0.0.1:")
    assert len(recorded.answers) == len(header["variants"]) * len(header["seeds"])
    for a in recorded.answers:
        body = a["request_body"].encode("utf-8")
        assert a["request_sha256"] == sha256_hex(body)
        sent = json.loads(body)
        assert sent["seed"] == a["seed"] and sent["temperature"] == header["sampling"]["temperature"]
        result = recorded.results[a["variant"]]
        expected = openai_body(result)["messages"]
        if header["endpoint"].get("empty_content"):  # --empty-content: an absent assistant content sent as ""
            expected = [dict(m, content="") if m["content"] is None else m for m in expected]
        assert sent["messages"] == expected  # the variant's request, as assembled
        assert a["prompt_tokens"]["ours"] == result.input_tokens
        assert isinstance(a["prompt_tokens"]["server"], int) or a.get("error")
        assert a["model"]["reported"] or a.get("error")
        assert json.loads(a["response_raw"]) if a["response_raw"] else a.get("error")


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_recorded_answers_grade_offline_by_their_rules(name, capsys):
    recorded = load_answers(FIXTURES / name)
    graded = grade_file(recorded, rules=load_rules(FIXTURES / ANSWERS[name]))
    rows = graded.by_variant()
    assert [r.variant for r in rows] == recorded.header["variants"]
    assert all(sum(r.counts.values()) == r.seeds == len(recorded.header["seeds"]) for r in rows)
    for answer, grade in graded.grades:
        assert grade.verdict in ("pass", "fail", "incomplete") and grade.rule
    assert main(["grade", str(FIXTURES / name), "--rules", str(FIXTURES / ANSWERS[name])]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["variant", "seeds", "pass", "fail", "incomplete"]
    assert "not a measure of answer quality" in out


def test_the_position_fixtures_give_a_curve_with_one_point_per_position():
    curve = grade_file(load_answers(FIXTURES / "demo_positions.answers.jsonl")).position_curve()
    assert [p.position for p in curve] == [1, 2, 3, 4, 5, 6]
    assert all(p.n == 3 and 0 <= p.interval[0] <= p.rate <= p.interval[1] <= 1 for p in curve)
