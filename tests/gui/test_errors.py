"""Bad files and a bad tokenizer give one clear message each (file, place, problem); the app keeps working."""
from __future__ import annotations

import json

import pytest

import core


def _open(window, qtbot, path):
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)


def _assert_usable_afterwards(window, qtbot, fixtures_dir):
    rows_before = window.request_model.rowCount()
    _open(window, qtbot, fixtures_dir / "demo.result.json")
    assert window.request_model.rowCount() == rows_before + 1
    assert window.request_model.row_at(rows_before).label == "demo"


@pytest.mark.parametrize("content, place, problem", [
    (b'{"id": "x",\n  "instructions": ', ":2:", "malformed JSON"),
    (b'{"id": "\xff"}', ":1:", "not valid UTF-8"),
    (b"", "", "the file is empty"),
])
def test_unreadable_file_shows_a_message_and_the_app_stays_usable(window, qtbot, fixtures_dir, tmp_path,
                                                                   content, place, problem):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    _open(window, qtbot, bad)
    assert window.message_bar.isVisible()
    message = window.message_bar.message()
    assert str(bad) in message and problem in message and place in message
    assert "Traceback" not in message
    assert window.request_model.rowCount() == 0
    assert any(problem in line for line in window.log_view.toPlainText().splitlines())
    _assert_usable_afterwards(window, qtbot, fixtures_dir)


def test_unknown_key_is_named_with_its_field(window, qtbot, fixtures_dir, tmp_path):
    data = json.loads((fixtures_dir / "rag_tight.request.json").read_text(encoding="utf-8"))
    data["evidence"][1]["bogus"] = 1
    bad = tmp_path / "unknown_key.request.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    _open(window, qtbot, bad)
    message = window.message_bar.message()
    assert str(bad) in message and "evidence[1].bogus" in message and "unknown key" in message
    row = window.request_model.row_at(0)
    assert row.kind == "invalid" and row.status_text() == "unreadable"
    assert json.loads(window.detail.json.toPlainText()) == data  # the raw record, to see what was wrong
    _assert_usable_afterwards(window, qtbot, fixtures_dir)


def test_wrong_shape_entries_in_jsonl_are_listed_with_their_line(window, qtbot, fixtures_dir, tmp_path):
    good = (fixtures_dir / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    bad = tmp_path / "mixed.jsonl"
    bad.write_text("\n".join([good[0], '{"hello": "world"}', good[1], "[1, 2]"]) + "\n", encoding="utf-8")
    _open(window, qtbot, bad)
    model = window.request_model
    assert model.rowCount() == 4
    assert [model.row_at(i).kind for i in range(4)] == ["result", "invalid", "result", "invalid"]
    assert f"{bad}:2" in model.row_at(1).error and "keys found: hello" in model.row_at(1).error
    assert f"{bad}:4" in model.row_at(3).error
    window.audit_errors.setChecked(True)
    assert window.request_proxy.rowCount() == 2 + sum(
        core.has_errors(model.row_at(i).findings) for i in (0, 2))


def test_malformed_line_is_listed_with_its_line_and_the_other_rows_stay(window, qtbot, fixtures_dir, tmp_path):
    good = (fixtures_dir / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    bad = tmp_path / "truncated.jsonl"
    bad.write_text("\n".join(good[:2] + ['{"format": "context-inspector/result@1", "messa', good[2]]) + "\n",
                   encoding="utf-8")
    _open(window, qtbot, bad)
    model = window.request_model
    assert [model.row_at(i).kind for i in range(4)] == ["result", "result", "invalid", "result"]
    assert f"{bad}:3:" in model.row_at(2).error and "malformed JSON" in model.row_at(2).error
    message = window.message_bar.message()
    assert f"{bad}:3:" in message and "malformed JSON" in message


def test_missing_file(window, qtbot, tmp_path):
    missing = tmp_path / "nowhere.json"
    _open(window, qtbot, missing)
    assert f"{missing}: no such file" in window.message_bar.message()


def test_tokenizer_failing_its_manifest_is_refused_and_the_counter_kept(window, qtbot, fixtures_dir, tmp_path):
    directory = tmp_path / "tok"
    directory.mkdir()
    (directory / "tokenizer.json").write_text("{}", encoding="utf-8")
    (directory / "tokenizer-manifest.json").write_text(
        json.dumps({"model": "toy", "files": {"tokenizer.json": "0" * 64}}), encoding="utf-8")
    before = window.counter_spec
    window.set_counter_spec(f"hf:{directory}")
    qtbot.waitUntil(window.is_idle, timeout=180000)
    message = window.message_bar.message()
    assert str(directory) in message and "tokenizer.json does not match its manifest" in message
    assert window.counter_spec == before
    _open(window, qtbot, fixtures_dir / "rag_tight.request.json")
    assert window.request_model.row_at(0).kind == "assembled"


def test_not_a_tokenizer_directory(window, qtbot, tmp_path):
    window.set_counter_spec(f"hf:{tmp_path / 'absent'}")
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert "not a directory" in window.message_bar.message()


def test_message_bar_counts_further_problems_and_links_the_log(window, qtbot, tmp_path):
    for n in range(3):
        bad = tmp_path / f"bad{n}.json"
        bad.write_text("{", encoding="utf-8")
        _open(window, qtbot, bad)
    assert "(+2 more in the log)" in window.message_bar.message()
    window.message_bar.log_button.click()
    assert window.log_dock.isVisible()
    window.message_bar.close_button.click()
    assert not window.message_bar.isVisible()


def test_entries_of_a_json_array_are_named_by_index(window, qtbot, fixtures_dir, tmp_path):
    first = json.loads((fixtures_dir / "rag_tight.result.json").read_text(encoding="utf-8"))
    bad = tmp_path / "array.json"
    bad.write_text(json.dumps([{"nope": 1}, first]), encoding="utf-8")
    _open(window, qtbot, bad)
    model = window.request_model
    assert [model.row_at(i).kind for i in range(2)] == ["invalid", "result"]
    assert f"{bad}[0]" in model.row_at(0).error
    assert f"{bad}[0]" in window.message_bar.message()


def test_a_bug_while_reading_is_one_line_naming_the_file_and_logged_with_its_traceback(window, qtbot, fixtures_dir,
                                                                                      tmp_path, monkeypatch, caplog):
    """Not a bad file: a failure the core did not foresee (here the indexer raising) is still one line naming
    the file and what went wrong; its traceback goes to the log, never to the person."""
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "current": "q", "context_limit": 512}) + "\n"
                            for i in range(3)), encoding="utf-8")

    def broken(*args, **kwargs):
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(core, "index_jsonl", broken)
    with caplog.at_level("ERROR", logger="inspector"):
        _open(window, qtbot, path)
    message = window.message_bar.message()
    assert f"{path}: cannot be read (RuntimeError: the disk went away)" in message
    assert "Traceback" not in message
    assert any(record.exc_info and record.getMessage() == f"indexing {path}" for record in caplog.records)
    monkeypatch.undo()
    _assert_usable_afterwards(window, qtbot, fixtures_dir)
