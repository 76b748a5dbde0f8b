"""Regression tests for the wrong answers a hostile-input campaign found (issue 14): each asserts the
answer a person relies on, not only that nothing crashed."""
from __future__ import annotations

import json

from support import FIXTURES, base_request, passage

from core import assemble, audit, make_counter, parse_request, parse_result
from core.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_of_a_request_too_big_for_its_own_limits_fits_under_a_larger_limit(tmp_path, capsys):
    data = json.loads((FIXTURES / "demo.request.json").read_text(encoding="utf-8"))
    data.update(context_limit=300, max_new_tokens=50, margin=0)
    path = tmp_path / "small.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = run_cli(capsys, "replay", str(path), "--context-limit", "8000")
    assert code == 0, err
    assert "as recorded, required context needs" in out and "under these edits it fits" in out
    code, out, _ = run_cli(capsys, "replay", str(path), "--context-limit", "8000", "--json")
    record = json.loads(out)
    assert record["after"]["context_limit"] == 8000 and record["recorded"]["error"] == "RequiredContextTooLarge"
    code, _, _ = run_cli(capsys, "replay", str(path), "--context-limit", "310")
    assert code == 3  # still does not fit: the budget exit, not a crash


def test_replay_of_a_plan_refuses_a_margin_and_names_the_file(capsys):
    plan = str(FIXTURES / "trip_plan_drop_oldest.result.json")
    code, _, err = run_cli(capsys, "replay", plan, "--margin", "50")
    assert code == 2 and "a plan has no margin" in err and "trip_plan_drop_oldest.result.json" in err


def test_an_empty_fill_order_is_refused(capsys):
    for command in ("assemble", "replay"):
        code, _, err = run_cli(capsys, command, str(FIXTURES / "demo.request.json"), "--fill-order=")
        assert code == 2 and "--fill-order" in err


def test_jsonl_with_a_broken_first_line_is_reported_at_that_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(json.loads((FIXTURES / "demo.request.json").read_text(encoding="utf-8")))
    path.write_text('{"id": \n' + good + "\n" + good + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "replay", str(path))
    assert code == 2 and f"{path}:1:" in err


def test_the_audit_does_not_flag_instructions_that_name_evidence_blocks():
    counter = make_counter()
    request = parse_request(base_request(
        instructions="Answer only from the <evidence> blocks; quote </evidence> ids exactly.",
        evidence=[passage("p1", 0.9)]))
    result = assemble(request, counter)
    assert [f.rule for f in audit(result, counter) if f.severity == "error"] == []


def test_the_audit_does_not_flag_a_passage_that_is_exactly_a_closing_tag():
    counter = make_counter()
    request = parse_request(base_request(evidence=[passage("p1", 0.9, text="</evidence>"),
                                                   passage("p2", 0.5, text="<evidence id=\"x\">")]))
    result = assemble(request, counter)
    assert [f.rule for f in audit(result, counter) if f.severity == "error"] == []
    # the same passage pasted unescaped is still caught
    data = json.loads(result.to_json())
    user = next(m for m in data["messages"] if m["role"] == "user" and "&lt;/evidence&gt;" in m["content"])
    user["content"] = user["content"].replace("&lt;/evidence&gt;", "</evidence>")
    assert "unescaped-boundary" in {f.rule for f in audit(parse_result(data))}


def test_the_audit_checks_a_result_against_its_request_not_its_own_figures():
    result = json.loads((FIXTURES / "demo.result.json").read_text(encoding="utf-8"))
    allowance = result["input_budget"]
    result["request"]["context_limit"] -= result["remaining_tokens"] + 10  # the request allows less than was sent
    findings = [f for f in audit(parse_result(result)) if f.rule == "over-budget"]
    assert findings and all(f.severity == "error" for f in findings)
    assert any(f"exceed the input allowance {allowance - result['remaining_tokens'] - 10}" in f.message
               for f in findings)
