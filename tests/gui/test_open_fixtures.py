"""Opening each fixture kind in the window: what the list, tree, bar, tabs and status bar show."""
from __future__ import annotations

import json

import core
from inspector.panes.detail import DetailTabs
from inspector.models import DECISION_ROLE, ITEM_ID_ROLE, SECTION_ROLE, SectionTreeModel
from .treehelpers import tree_decisions as _tree_decisions


def _records(path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def test_request_file_is_assembled_with_the_counter(open_and_wait, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_tight.request.json")
    expected = core.assemble(core.load_request(fixtures_dir / "rag_tight.request.json"), counter)
    assert window.request_model.rowCount() == 1
    row = window.current_row
    assert row is not None and row.kind == "assembled"
    assert row.result.input_tokens == expected.input_tokens
    assert _tree_decisions(window) == {(e.section, e.id): (e.decision, e.tokens) for e in expected.trace}
    assert f"Input {expected.input_tokens} / {expected.input_budget} tokens" == window.tokens_label.text()
    identity = counter.identity
    assert identity.template_sha256[:12] in window.counter_label.text()
    assert identity.revision in window.counter_label.text()
    assert "rag_tight.request.json" in window.file_label.text()
    assert json.loads(window.detail.json.toPlainText())["input_tokens"] == expected.input_tokens


def test_result_file_opens_as_recorded(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_tight.result.json")
    recorded = core.load_result(fixtures_dir / "rag_tight.result.json")
    row = window.current_row
    assert row.kind == "result"
    assert row.result.model_dump() == recorded.model_dump()
    assert _tree_decisions(window) == {(e.section, e.id): (e.decision, e.tokens) for e in recorded.trace}
    assert window.detail.json.isReadOnly()
    assert json.loads(window.detail.json.toPlainText()) == json.loads(recorded.to_json())
    # the Item tab describes the request while no item is selected
    assert "rag-tight" in window.detail.item_text()


def test_baseline_file_shows_its_findings(open_and_wait, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.baseline.json")
    findings = core.audit(core.load_result(fixtures_dir / "demo.baseline.json"), counter)
    assert window.current_row.findings == findings
    audit = window.detail.audit
    assert audit.model.rowCount() == len(findings)
    assert window.detail.tabText(DetailTabs.AUDIT) == f"&Audit ({len(findings)})"
    errors = sum(f.severity == "error" for f in findings)
    assert window.request_model.index(0, window.request_model.C_AUDIT).data() == f"{errors} errors"


def test_rejected_record_shows_short_by(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_overflow.rejected.json")
    record = json.loads((fixtures_dir / "rag_overflow.rejected.json").read_text(encoding="utf-8"))
    short = record["required_input_tokens"] - record["available_input_tokens"]
    assert window.request_model.rowCount() == 1
    assert window.request_model.index(0, window.request_model.C_TOKENS).data() == f"short by {short}"
    assert window.tree_model.rowCount() == 0
    assert f"short by {short}" in window.detail.item_text()
    required = next(s for s in window.bar.segments if s.kind == "required")
    assert required.width == record["required_input_tokens"]
    assert window.bar._allowance.value() == record["available_input_tokens"]
    assert window.bar._limit.value() == record["context_limit"]


def test_request_that_cannot_fit_is_a_rejected_row_not_a_crash(open_and_wait, counter, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag_overflow.request.json")
    try:
        core.assemble(core.load_request(fixtures_dir / "rag_overflow.request.json"), counter)
    except core.RequiredContextTooLarge as exc:
        short = exc.required_input_tokens - exc.available_input_tokens
    row = window.current_row
    assert row.kind == "rejected"
    assert window.request_model.index(0, window.request_model.C_AUDIT).data() == f"rejected: short by {short} tokens"
    assert not window.message_bar.isVisible()  # a rejection is content, not a file problem


def test_jsonl_opens_as_a_list(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "recorded.results.jsonl")
    lines = [json.loads(line) for line in (fixtures_dir / "recorded.results.jsonl").read_text().splitlines()
             if line.strip()]
    model = window.request_model
    count = len(lines)
    assert count >= 14 and model.rowCount() == count
    assert [model.index(i, model.C_LABEL).data() for i in range(count)] == [d["request_id"] for d in lines]
    assert [model.index(i, model.C_STRATEGY).data() for i in range(count)] == [d["strategy"] for d in lines]
    assert model.index(3, model.C_FILE).data() == "recorded.results.jsonl:4"
    # next/previous request walk the list
    window.step_request(1)
    assert window.current_row is model.row_at(1)
    window.step_request(-1)
    assert window.current_row is model.row_at(0)
    # filter box and toggles
    window.filter_edit.setText("naive")
    assert window.request_proxy.rowCount() == sum(d["strategy"] == "naive_truncate" for d in lines)
    window.filter_edit.clear()
    window.has_drops.setChecked(True)
    assert window.request_proxy.rowCount() == sum(
        any(e["decision"] == "dropped" for e in d["trace"]) for d in lines)


def test_demo_opens_request_and_its_baseline(open_and_wait, counter):
    window = open_and_wait(demo=True)
    model = window.request_model
    assert model.rowCount() == 2
    assert [model.row_at(i).strategy for i in range(2)] == ["assemble", "naive_truncate"]
    assert model.row_at(1).error_count > 0
    assert model.row_at(0).counter_name == counter.name


def test_selection_is_shared_by_every_pane(open_and_wait, qtbot, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    # tree -> detail, bar
    index = window.tree_proxy.index_for("evidence", "rb-backups")
    window.tree.setCurrentIndex(index)
    assert window.selection == ("evidence", "rb-backups")
    assert window.detail.shown_item() == ("evidence", "rb-backups")
    assert "rb-backups" in window.detail.item_text()
    assert window.bar._selected_section == "evidence"
    # bar -> tree
    window.bar.segmentClicked.emit("tools", None)
    assert window.selection == ("tools", None)
    current = window.tree.currentIndex()
    assert current.data(SECTION_ROLE) == "tools" and current.data(ITEM_ID_ROLE) is None
    # request list -> everything
    window.open_files([str(fixtures_dir / "rag_tight.result.json")])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    window.select_proxy_row(1)
    assert window.current_row.label == "rag-tight"
    assert window.selection == (None, None)
    assert window.tree_model.result is window.current_row.result


def test_close_and_reload(open_and_wait, qtbot, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json", fixtures_dir / "rag_tight.result.json")
    assert window.request_model.rowCount() == 2
    window.select_proxy_row(0)
    window.close_current_file()
    assert window.request_model.rowCount() == 1
    assert window.current_row.label == "rag-tight"
    window.reload()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.request_model.rowCount() == 1
    assert window.current_row.label == "rag-tight"


def test_opening_a_file_again_replaces_its_rows(open_and_wait, qtbot, fixtures_dir):
    path = fixtures_dir / "recorded.results.jsonl"
    window = open_and_wait(path)
    window.open_files([str(path)])
    window.open_files([str(path)])  # queued while the first re-read may still run
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.request_model.rowCount() == _records(path)


def test_reload_while_loading_does_not_duplicate_rows(window, qtbot, fixtures_dir):
    window.open_files([str(fixtures_dir / "recorded.results.jsonl")])
    window.reload()
    window.reload()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.request_model.rowCount() == _records(fixtures_dir / "recorded.results.jsonl")


def test_a_result_counted_by_the_reference_method_says_so(open_and_wait, fixtures_dir, tmp_path):
    data = json.loads((fixtures_dir / "rag_tight.result.json").read_text(encoding="utf-8"))
    data["counting_note"] = "assembled with the reference method: predicted 412 tokens, a complete count gave 413"
    path = tmp_path / "fell_back.result.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    window = open_and_wait(path)
    assert window.tokens_label.text().endswith(" · counted by the reference method")
    assert "predicted 412 tokens" in window.tokens_label.toolTip()
    window = open_and_wait(fixtures_dir / "rag_tight.result.json")
    window.select_row(window.request_model.row_at(1))
    assert window.current_row.where.endswith("rag_tight.result.json")
    assert "reference method" not in window.tokens_label.text() and window.tokens_label.toolTip() == ""
