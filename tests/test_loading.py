"""Loading requests, recorded results and JSONL traces; errors name file, line and problem."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, SHARED

from core import InputFileError, RequestError, load_entries, load_result, parse_result
from core.loading import read_text


def test_jsonl_of_recorded_results_opens_as_a_list():
    entries = load_entries(FIXTURES / "recorded.results.jsonl")
    assert len(entries) == len((FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines())
    assert all(e.kind == "result" for e in entries)
    assert [e.line for e in entries] == list(range(1, len(entries) + 1))
    assert {e.result.strategy for e in entries} == {"assemble", "naive_truncate", "plan"}
    assert entries[0].label == "rag-roomy"


def test_request_result_and_rejection_kinds():
    assert load_entries(FIXTURES / "demo.request.json")[0].kind == "request"
    assert load_entries(FIXTURES / "demo.result.json")[0].kind == "result"
    rejected = load_entries(FIXTURES / "rag_overflow.rejected.json")[0]
    assert rejected.kind == "rejected" and rejected.rejection["required_input_tokens"] > 176


def test_json_array_of_mixed_entries(tmp_path):
    data = [json.loads((FIXTURES / "demo.request.json").read_text(encoding="utf-8")),
            json.loads((FIXTURES / "demo.result.json").read_text(encoding="utf-8"))]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert [e.kind for e in load_entries(path)] == ["request", "result"]


def test_bad_jsonl_line_is_named(tmp_path):
    good = (FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "t.jsonl"
    path.write_text(good + "\n" + good[:-5] + "\n", encoding="utf-8")
    with pytest.raises(InputFileError) as info:
        load_entries(path)
    assert info.value.line == 2 and str(info.value).startswith(f"{path}:2:")


def test_contract_error_in_a_jsonl_line_names_line_and_field(tmp_path):
    lines = (FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    broken = json.loads(lines[1])
    broken["input_tokens"] = "many"
    path = tmp_path / "t.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(RequestError) as info:
        load_entries(path)
    assert str(info.value).startswith(f"{path}:2: input_tokens:")


def test_oversized_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2048)
    with pytest.raises(InputFileError, match="over the 1,024-byte limit"):
        read_text(path, max_bytes=1024)


def test_directory_and_missing(tmp_path):
    with pytest.raises(InputFileError, match="is a directory"):
        load_entries(tmp_path)
    with pytest.raises(InputFileError, match="no such file"):
        load_entries(tmp_path / "missing.json")


def test_a_seed_004_style_recorded_result_opens_with_its_extra_fields_kept():
    recorded = {
        "messages": [{"role": "system", "content": "Answer."}, {"role": "user", "content": "Q?"}],
        "tools": [], "input_tokens": 53, "input_budget": 608, "remaining_tokens": 555, "context_limit": 768,
        "max_new_tokens": 128, "margin": 32, "fill_order": ["evidence", "history"], "kept_evidence": [],
        "dropped_evidence": [], "kept_turns": 0, "dropped_turns": 0,
        "trace": [{"section": "required", "id": "instructions+tools+question+tool_results", "decision": "kept",
                   "tokens": 53, "reason": "required"}],
        "window_receipts": [], "full_request_recount": 53, "scope": "whole-window admission"}
    result = parse_result(recorded)
    assert result.request is None and result.model_extra["full_request_recount"] == 53
    assert json.loads(result.to_json())["window_receipts"] == []


def test_load_result_refuses_a_request(tmp_path):
    with pytest.raises(RequestError, match="expected one result"):
        load_result(FIXTURES / "demo.request.json")


def test_shared_reference_is_where_tests_expect_it():
    if not SHARED.exists():
        pytest.skip("../shared is absent")
    assert (SHARED / "DESIGN.md").is_file()


def test_jsonl_index_reads_rows_lazily_and_names_bad_lines(tmp_path):
    lines = (FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "mixed.jsonl"
    request_line = json.dumps(json.loads((FIXTURES / "demo.request.json").read_text(encoding="utf-8")))
    path.write_text("\n".join([lines[0], "{broken", request_line, "[1]", lines[1]]) + "\n", encoding="utf-8")
    from core import index_jsonl

    seen = []
    index = index_jsonl(path, progress=lambda done, total: seen.append((done, total)))
    assert [r.kind for r in index.rows] == ["result", "error", "request", "error", "result"]
    assert index.rows[0].label == "rag-roomy" and index.rows[0].input_tokens == json.loads(lines[0])["input_tokens"]
    assert index.rows[1].line == 2 and "malformed JSON" in index.rows[1].problem
    assert seen[-1][0] == seen[-1][1] == path.stat().st_size
    assert index.entry(4).result.request_id == json.loads(lines[1])["request_id"]
    assert index.entry(2).request.id == "demo"
    with pytest.raises(InputFileError) as info:
        index.entry(1)
    assert info.value.line == 2


def test_jsonl_index_can_be_cancelled(tmp_path):
    from core import index_jsonl

    line = (FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "many.jsonl"
    path.write_text((line + "\n") * 600, encoding="utf-8")
    assert index_jsonl(path, should_stop=lambda: True) is None
    assert len(index_jsonl(path)) == 600


def test_a_hand_edited_strategy_that_is_not_text_is_listed_as_its_json_and_read_with_a_clear_error(tmp_path):
    """A result line whose ``strategy`` someone edited to a number or a list still lists (its JSON shown as the
    strategy: the requests list lower-cases and sorts it); reading the row names the field, never a traceback."""
    line = json.loads((FIXTURES / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(json.dumps({**line, "strategy": value}) for value in (5, ["a", 1], None)) + "\n",
                    encoding="utf-8")
    from core import index_jsonl

    index = index_jsonl(path)
    assert [r.strategy for r in index.rows] == ["5", '["a", 1]', None]
    assert all(isinstance(r.strategy, (str, type(None))) for r in index.rows)
    with pytest.raises((InputFileError, RequestError)) as info:
        index.entry(0)
    assert "strategy" in str(info.value)
