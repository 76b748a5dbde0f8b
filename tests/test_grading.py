"""Grading recorded answers by seed 003's string rules, offline: pass, fail, incomplete and the rule that decided."""
from __future__ import annotations

import json

import pytest

from core.cli import main
from core.errors import RequestError
from core.experiments import Grade, grade_by_rules, grade_file, parse_answers_text, parse_rules, wilson
from core.experiments.records import EXPERIMENT_FORMAT

RULES = parse_rules({"must_cite_one_of": ["rb-disk-full", "rb-backups"], "must_contain": ["logrotate"],
                     "must_not_contain": ["open_ticket"]})


def answer(text, **extra):
    return {"kind": "answer", "variant": "default", "seed": 1, "answer": text, "finish_reason": "stop", **extra}


@pytest.mark.parametrize("text, verdict, rule", [
    ("Run logrotate -f first, as rb-disk-full says.", "pass", "all rules hold"),
    ("RB-BACKUPS: LOGROTATE", "pass", "all rules hold"),  # case-insensitive by default
    ("Run logrotate -f first.", "fail", "must_cite_one_of"),
    ("rb-disk-full says prune docker images.", "fail", "must_contain"),
    ("rb-disk-full: logrotate, then open_ticket.", "fail", "must_not_contain"),  # checked before the others
])
def test_each_rule_decides_with_its_name(text, verdict, rule):
    grade = grade_by_rules(RULES, answer(text))
    assert (grade.verdict, grade.rule) == (verdict, rule)


@pytest.mark.parametrize("record, why", [
    (answer(None, error="cannot connect"), "no answer: cannot connect"),
    (answer("   "), "the model returned no text"),
    (answer("rb-disk-full logrotate", finish_reason="length"), "cut off at the output limit"),
])
def test_missing_or_cut_off_answers_are_incomplete_not_failed(record, why):
    grade = grade_by_rules(RULES, record)
    assert grade.verdict == "incomplete" and grade.detail.startswith(why)


def test_case_sensitive_rules_match_exactly():
    rules = parse_rules({"must_contain": ["PathExists"], "case_sensitive": True})
    assert grade_by_rules(rules, answer("pathexists")).verdict == "fail"
    assert grade_by_rules(rules, answer("raises PathExists")).verdict == "pass"


@pytest.mark.parametrize("data, where", [
    ({}, "no rule"), ({"must_contain": [""]}, "must_contain[0]"), ({"must_contain": "x"}, "must_contain"),
    ({"must_include": ["x"]}, "must_include"), ([], "JSON object"),
])
def test_bad_rules_are_refused_naming_the_field(data, where):
    with pytest.raises(RequestError, match="rules"):
        parse_rules(data, source="rules.json")
    with pytest.raises(RequestError) as info:
        parse_rules(data, source="rules.json")
    assert where in str(info.value)


def answers_text(answers, rules=None):
    header = {"format": EXPERIMENT_FORMAT, "kind": "experiment", "variants": ["default", "baseline"],
              "model": {"requested": "m"}}
    if rules is not None:
        header["rules"] = rules
    return "\n".join(json.dumps(x) for x in [header, *answers]) + "\n"


def test_a_custom_grader_is_one_function_and_its_grades_fill_the_table():
    records = [answer("yes", seed=1), answer("no", seed=2), answer("yes", variant="baseline", seed=1)]
    parsed = parse_answers_text(answers_text(records))

    def says_yes(a):
        return Grade("pass" if a["answer"] == "yes" else "fail", "says yes", a["answer"])

    graded = grade_file(parsed, grader=says_yes)
    table = {row.variant: row.to_json() for row in graded.by_variant()}
    assert table["default"] == {"variant": "default", "seeds": 2, "pass": 1, "fail": 1, "incomplete": 0}
    assert table["baseline"]["pass"] == 1
    with pytest.raises(RequestError, match="must return Grade"):
        grade_file(parsed, grader=lambda a: "pass")


def test_grading_uses_the_rules_recorded_with_the_answers_unless_given_others():
    parsed = parse_answers_text(answers_text([answer("rb-disk-full logrotate")],
                                             rules={"must_contain": ["logrotate"]}))
    assert grade_file(parsed).grades[0][1].verdict == "pass"
    assert grade_file(parsed, rules=parse_rules({"must_contain": ["prune"]})).grades[0][1].verdict == "fail"
    with pytest.raises(RequestError, match="carries no rules"):
        grade_file(parse_answers_text(answers_text([answer("x")])))


def test_wilson_interval_matches_known_values():
    low, high = wilson(0, 3)
    assert low == 0.0 and abs(high - 0.5615) < 1e-3
    low, high = wilson(5, 5)
    assert abs(low - 0.5655) < 1e-3 and high == 1.0
    low, high = wilson(3, 6)
    assert abs(low - 0.1876) < 1e-3 and abs(high - 0.8124) < 1e-3
    assert wilson(0, 0) == (0.0, 1.0)


def test_grade_cli_table_json_and_errors(tmp_path, capsys):
    path = tmp_path / "x.answers.jsonl"
    path.write_text(answers_text([answer("logrotate"), answer("", variant="baseline")],
                                 rules={"must_contain": ["logrotate"]}), encoding="utf-8")
    assert main(["grade", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["variant", "seeds", "pass", "fail", "incomplete"]
    assert lines[1].split() == ["default", "1", "1", "0", "0"]
    assert lines[2].split() == ["baseline", "1", "0", "0", "1"]
    assert "not a measure of answer quality" in out
    assert main(["grade", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answers"][1] == {"variant": "baseline", "seed": 1, "verdict": "incomplete",
                                  "rule": "answer complete", "detail": "the model returned no text"}
    not_answers = tmp_path / "plain.jsonl"
    not_answers.write_text('{"a": 1}\n', encoding="utf-8")
    assert main(["grade", str(not_answers)]) == 2
    err = capsys.readouterr().err
    assert "plain.jsonl:1" in err and "experiment header" in err and len(err.strip().splitlines()) == 1


def test_grade_cli_takes_a_grader_by_module_and_function(tmp_path, capsys, monkeypatch):
    (tmp_path / "mygrader.py").write_text(
        "from core.experiments import Grade\n"
        "def short(a):\n    return Grade('pass' if len(a['answer']) < 5 else 'fail', 'short', '')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "x.answers.jsonl"
    path.write_text(answers_text([answer("ok"), answer("far too long", seed=2)]), encoding="utf-8")
    assert main(["grade", str(path), "--grader", "mygrader:short"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == ["default", "2", "1", "1", "0"]
    assert main(["grade", str(path), "--grader", "nowhere"]) == 2
    assert "module:function" in capsys.readouterr().err
