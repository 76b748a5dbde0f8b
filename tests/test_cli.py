"""``context-assembler``: exit codes, one clear line for every bad input, inputs never written."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from support import FIXTURES, base_request, passage

from core.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, name, content) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_assemble_writes_the_result_to_stdout_and_never_touches_its_input(capsys):
    source = str(FIXTURES / "rag_tight.request.json")
    before = digest(source)
    code, out, err = run_cli(capsys, "assemble", source)
    assert code == 0 and err == ""
    assert out == (FIXTURES / "rag_tight.result.json").read_text(encoding="utf-8")
    assert digest(source) == before


def test_assemble_with_overrides_and_output_file(capsys, tmp_path):
    target = tmp_path / "out.json"
    code, out, _ = run_cli(capsys, "assemble", str(FIXTURES / "rag_roomy.request.json"), "--context-limit", "512",
                           "--max-new-tokens", "100", "--margin", "12", "--fill-order", "history,evidence",
                           "-o", str(target))
    assert code == 0 and out == ""
    data = json.loads(target.read_text(encoding="utf-8"))
    assert (data["context_limit"], data["max_new_tokens"], data["margin"]) == (512, 100, 12)
    assert data["input_budget"] == 400 and data["input_tokens"] <= 400 and data["dropped_evidence"]
    assert data["fill_order"] == ["history", "evidence"]


def test_required_too_large_exits_3_with_a_json_record(capsys):
    code, out, err = run_cli(capsys, "assemble", str(FIXTURES / "rag_overflow.request.json"))
    assert code == 3
    record = json.loads(out)
    assert set(record) >= {"error", "required_input_tokens", "available_input_tokens", "context_limit",
                           "max_new_tokens", "margin"}
    assert record["error"] == "RequiredContextTooLarge" and record["available_input_tokens"] == 176
    assert "short by" in err and len(err.strip().splitlines()) == 1


BAD_INPUTS = {
    "malformed JSON": ('{"instructions": "x",', "malformed JSON"),
    "not an object": ("[1, 2]", "request.json[0]: <request>: expected a request or result object, found a JSON int"),
    "unrecognised object": ('{"hello": 1}', "neither a request"),
    "wrong type": (json.dumps(base_request(context_limit="big")), "context_limit"),
    "unknown key": (json.dumps(base_request(colour="red")), "colour: unknown key"),
    "nan score": (json.dumps(base_request(evidence=[passage("a", 1.0)])).replace("1.0", "NaN"),
                  "evidence[0].score: must be a finite number"),
    "duplicate evidence": (json.dumps(base_request(evidence=[passage("a", 1.0), passage("a", 2.0)])),
                           "evidence id 'a' appears twice"),
    "zero budget": (json.dumps(base_request(context_limit=0)), "context_limit"),
    "negative margin": (json.dumps(base_request(margin=-3)), "margin"),
    "no input room": (json.dumps(base_request(context_limit=100, max_new_tokens=90, margin=10)),
                      "leave no input room"),
    "call without result": (json.dumps(base_request(tool_exchanges=[{"calls": [{"id": "c", "name": "f"}]}])),
                            "tool call 'c' has no result"),
    "result without call": (json.dumps(base_request(history=[
        {"role": "user", "content": "u"}, {"role": "tool", "tool_call_id": "zz", "content": "r"}])),
        "no matching call"),
    "invalid utf-8": (b'{"instructions": "\xff\xfe"}', "not valid UTF-8"),
    "empty file": ("", "the file is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line_naming_file_and_problem(capsys, tmp_path, case):
    content, expected = BAD_INPUTS[case]
    path = write(tmp_path, "request.json", content)
    before = digest(path)
    code, out, err = run_cli(capsys, "assemble", path)
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert path in lines[0] and expected in lines[0]
    assert digest(path) == before


def test_missing_file_bad_counter_bad_flag(capsys, tmp_path):
    code, _, err = run_cli(capsys, "assemble", str(tmp_path / "nope.json"))
    assert code == 2 and "no such file" in err
    code, _, err = run_cli(capsys, "assemble", str(FIXTURES / "demo.request.json"), "--counter", "hf:" + str(tmp_path))
    assert code == 2 and "cannot load a tokenizer" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "assemble", str(FIXTURES / "demo.request.json"), "--fill-order", "evidence")
    assert code == 2 and "fill_order" in err
    with pytest.raises(SystemExit) as info:
        main(["assemble", str(FIXTURES / "demo.request.json"), "--context-limit", "lots"])
    assert info.value.code == 2


def test_output_over_the_input_is_refused(capsys, tmp_path):
    path = write(tmp_path, "r.json", (FIXTURES / "demo.request.json").read_text(encoding="utf-8"))
    before = digest(path)
    code, _, err = run_cli(capsys, "assemble", path, "-o", path)
    assert code == 2 and "refusing to overwrite" in err and "an input of this run" in err
    assert digest(path) == before


def test_audit_exit_codes(capsys):
    code, out, _ = run_cli(capsys, "audit", str(FIXTURES / "demo.result.json"))
    assert code == 0 and "0 finding(s)" in out
    code, out, _ = run_cli(capsys, "audit", str(FIXTURES / "rag_literal_boundary.baseline.json"))
    assert code == 1 and "unescaped-boundary" in out and "evidence-in-system" in out
    code, out, _ = run_cli(capsys, "audit", "--json", str(FIXTURES / "rag_literal_boundary.baseline.json"))
    rows = [json.loads(line) for line in out.splitlines()]
    assert all({"rule", "severity", "message"} <= set(r) for r in rows)


def test_audit_of_a_request_file_is_a_clear_error(capsys):
    code, _, err = run_cli(capsys, "audit", str(FIXTURES / "demo.request.json"))
    assert code == 2 and "expected one result" in err


def test_baseline_command(capsys):
    code, out, _ = run_cli(capsys, "baseline", str(FIXTURES / "rag_literal_boundary.request.json"))
    assert code == 0 and json.loads(out)["strategy"] == "naive_truncate"


def test_console_script_runs_as_a_process():
    proc = subprocess.run([sys.executable, "-m", "core.cli", "assemble", str(FIXTURES / "rag_empty.request.json")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["input_tokens"] == json.loads(
        (FIXTURES / "rag_empty.result.json").read_text(encoding="utf-8"))["input_tokens"]


def test_timings_and_reference_recount_give_the_same_bytes(capsys):
    source = str(FIXTURES / "demo.request.json")
    code, fast_out, fast_err = run_cli(capsys, "assemble", source, "--timings")
    assert code == 0
    code, ref_out, ref_err = run_cli(capsys, "assemble", source, "--timings", "--reference-recount")
    assert code == 0 and fast_out == ref_out
    fast = dict(kv.split("=") for kv in fast_err.split())
    ref = dict(kv.split("=") for kv in ref_err.split())
    assert set(fast) == {"assembly_seconds", "full_counts", "item_counts"}
    assert float(fast["assembly_seconds"]) > 0
    assert int(ref["item_counts"]) == 0 and int(ref["full_counts"]) > int(fast["full_counts"])


def test_plan_request_assembles_with_the_same_exit_codes(capsys, tmp_path):
    source = FIXTURES / "trip_plan_summarise_span.plan.json"
    code, out, _ = run_cli(capsys, "assemble", str(source))
    assert code == 0
    assert out == (FIXTURES / "trip_plan_summarise_span.result.json").read_text(encoding="utf-8")
    data = json.loads(source.read_text(encoding="utf-8"))
    for message in data["sections"]["recent"]:
        message["pinned"] = True
    code, out, err = run_cli(capsys, "assemble", write(tmp_path, "pinned.json", data))
    assert code == 3 and json.loads(out)["error"] == "ContextBudgetError" and "pinned content alone" in err
    del data["summaries"]
    for message in data["sections"]["recent"]:
        message["pinned"] = False
    code, _, err = run_cli(capsys, "assemble", write(tmp_path, "nosum.json", data))
    assert code == 2 and "configure a summariser" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run_cli(capsys, "assemble", str(FIXTURES / "trip_plan_drop_oldest.plan.json"),
                           "--context-limit", "300")
    assert code == 0 and json.loads(out)["input_budget"] == 300 - 128


def test_rag_requests_through_the_cli(capsys, tmp_path):
    rag = FIXTURES / "rag"
    code, out, _ = run_cli(capsys, "assemble", str(rag / "tight.rag.json"))
    assert code == 0 and out == (rag / "tight.result.json").read_text(encoding="utf-8")
    code, out, err = run_cli(capsys, "assemble", str(rag / "required_overflow.rag.json"))
    assert code == 3 and json.loads(out) == json.loads((rag / "required_overflow.rejected.json").read_text())
    data = json.loads((rag / "tight.rag.json").read_text(encoding="utf-8"))
    windows = data.get("windows") or json.loads((rag / data["windows_path"]).read_text(encoding="utf-8"))
    windows["groups"][0]["text"] = windows["groups"][0]["text"].replace("save_copy", "save_kopy")
    tampered = tmp_path / "windows.json"
    tampered.write_text(json.dumps(windows), encoding="utf-8")
    code, out, err = run_cli(capsys, "assemble", str(rag / "tight.rag.json"), "--windows", str(tampered))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "window" in err
    code, out, _ = run_cli(capsys, "assemble", str(rag / "tight.rag.json"), "--context-limit", "2048")
    assert code == 0 and len(json.loads(out)["kept_evidence"]) == 4


def test_review_findings_stay_fixed(capsys, tmp_path):
    # the user's own words may mention </evidence>: the assembler's output still audits clean
    question = base_request(current="Why does my parser choke on </evidence> tags?",
                            history=[{"role": "user", "content": '<evidence id="x">'},
                                     {"role": "assistant", "content": "ok"}],
                            evidence=[passage("e1", 1.0)])
    source = write(tmp_path, "q.json", question)
    code, out, _ = run_cli(capsys, "assemble", source, "-o", str(tmp_path / "q.result.json"))
    assert code == 0
    code, out, _ = run_cli(capsys, "audit", str(tmp_path / "q.result.json"))
    assert code == 0 and "0 finding(s)" in out
    # an empty assistant message is refused by the contract, naming the field
    empty = base_request(history=[{"role": "user", "content": "ping"}, {"role": "assistant", "content": ""}])
    code, _, err = run_cli(capsys, "assemble", write(tmp_path, "e.json", empty))
    assert code == 2 and "history[1]" in err and "content" in err
    # a template refusal names the file
    tools = base_request(tools=[{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "nonsense"}}}}])
    path = write(tmp_path, "t.json", tools)
    code, _, err = run_cli(capsys, "assemble", path)
    assert code == 2 and path in err and "refused" in err and len(err.strip().splitlines()) == 1
    # a request missing a key is named as such, not as "neither a request nor a result"
    missing = base_request()
    del missing["current"]
    code, _, err = run_cli(capsys, "assemble", write(tmp_path, "m.json", missing))
    assert code == 2 and "current: Field required" in err
    # a plan share must be a number, not a string
    plan = json.loads((FIXTURES / "trip_plan_drop_oldest.plan.json").read_text(encoding="utf-8"))
    plan["plan"]["sections"][1]["share"] = "0.5"
    code, _, err = run_cli(capsys, "assemble", write(tmp_path, "p.json", plan))
    assert code == 2 and "share" in err
    # a summary store that cannot be opened is bad input (2), not "does not fit" (3)
    code, _, err = run_cli(capsys, "assemble", str(FIXTURES / "trip_plan_summarise_span.plan.json"),
                           "--store", str(tmp_path))
    assert code == 2 and "summary store" in err


def test_replay_refuses_bad_edits_and_empty_files_once(capsys, tmp_path):
    code, out, err = run_cli(capsys, "replay", str(FIXTURES / "recorded.results.jsonl"), "--fill-order", "x")
    assert code == 2 and out == "" and "--fill-order" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(capsys, "replay", str(FIXTURES / "recorded.results.jsonl"), "--context-limit", "0")
    assert code == 2 and "--context-limit" in err
    code, _, err = run_cli(capsys, "replay", write(tmp_path, "empty.json", "[]"))
    assert code == 2 and "no request or result to replay" in err
    code, _, err = run_cli(capsys, "replay", str(FIXTURES / "rag_overflow.rejected.json"))
    assert code == 2 and "no request or result to replay" in err


def test_audit_checks_that_the_trace_adds_up(capsys, tmp_path):
    data = json.loads((FIXTURES / "demo.result.json").read_text(encoding="utf-8"))
    data["trace"][1]["tokens"] += 5
    code, out, _ = run_cli(capsys, "audit", write(tmp_path, "r.json", data))
    assert code == 1 and "trace-sum" in out
    data["trace"][1]["tokens"] = "5"
    code, _, err = run_cli(capsys, "audit", write(tmp_path, "s.json", data))
    assert code == 2 and "trace[1].tokens" in err
