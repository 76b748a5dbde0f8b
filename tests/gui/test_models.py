"""The item models pass Qt's model tester, and show exactly what the core result holds."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QModelIndex, Qt

import core
from inspector.document import invalid_row, item_content, rows_from_entry, section_summary
from inspector.models import (DECISION_ROLE, FindingsModel, ITEM_ID_ROLE, RequestFilterProxy, RequestListModel,
                              SECTION_ROLE, SectionTreeModel, SORT_ROLE, TOKENS_ROLE)


def _rows(path, counter, **kw):
    rows = []
    for entry in core.load_entries(path):
        rows.extend(rows_from_entry(entry, str(path), counter, **kw))
    return rows


def _jsonl_records(path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _tree_items(model: SectionTreeModel) -> dict[tuple[str, str], dict]:
    out = {}
    for s in range(model.rowCount()):
        section_index = model.index(s, 0)
        for r in range(model.rowCount(section_index)):
            index = model.index(r, 0, section_index)
            key = (index.data(SECTION_ROLE), index.data(ITEM_ID_ROLE))
            out[key] = {"decision": index.data(DECISION_ROLE), "tokens": index.data(TOKENS_ROLE),
                        "tokens_text": model.index(r, SectionTreeModel.C_TOKENS, section_index).data(),
                        "reason": model.index(r, SectionTreeModel.C_REASON, section_index).data()}
    return out


def test_request_list_and_proxy_pass_the_model_tester(qtmodeltester, counter, fixtures_dir):
    model = RequestListModel()
    qtmodeltester.check(model)
    model.append_rows(_rows(fixtures_dir / "recorded.results.jsonl", counter))
    model.append_rows(_rows(fixtures_dir / "rag_overflow.rejected.json", counter))
    model.append_rows([invalid_row("bad.jsonl", 3, 4, "bad.jsonl:4: <request>: expected a JSON object", 7)])
    qtmodeltester.check(model)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(RequestListModel.C_TOKENS, Qt.SortOrder.DescendingOrder)
    qtmodeltester.check(proxy)
    proxy.set_text("naive")
    qtmodeltester.check(proxy)
    assert proxy.rowCount() == sum(r.strategy == "naive_truncate" for r in model.rows())


def test_section_tree_passes_the_model_tester_for_each_fixture_kind(qtmodeltester, counter, fixtures_dir):
    model = SectionTreeModel()
    qtmodeltester.check(model)  # empty
    for name in ("demo.result.json", "demo.baseline.json", "tool_exchange.result.json", "rag_empty.result.json"):
        model.set_result(core.load_result(fixtures_dir / name))
        qtmodeltester.check(model)


def test_findings_model_passes_the_model_tester(qtmodeltester, counter, fixtures_dir):
    model = FindingsModel()
    qtmodeltester.check(model)
    result = core.load_result(fixtures_dir / "demo.baseline.json")
    findings = core.audit(result, counter)
    assert findings, "the baseline fixture is expected to carry audit findings"
    model.set_findings(findings)
    qtmodeltester.check(model)
    assert model.rowCount() == len(findings)
    assert model.index(0, FindingsModel.C_RULE).data() == findings[0].rule
    assert model.index(0, FindingsModel.C_LOCATION).data() == findings[0].location()
    assert core.RULES[findings[0].rule] in model.index(0, FindingsModel.C_RULE).data(Qt.ItemDataRole.ToolTipRole)


@pytest.mark.parametrize("name", ["demo.result.json", "demo.baseline.json", "rag_tight.result.json",
                                  "trip_conversation.result.json", "tool_exchange.baseline.json"])
def test_tree_decisions_and_tokens_equal_the_core_result(name, fixtures_dir):
    result = core.load_result(fixtures_dir / name)
    model = SectionTreeModel()
    model.set_result(result)
    items = _tree_items(model)
    assert len(items) == len({(e.section, e.id) for e in result.trace})
    for entry in result.trace:
        shown = items[(entry.section, entry.id)]
        assert shown["decision"] == entry.decision
        assert shown["tokens"] == entry.tokens
        assert shown["tokens_text"] == str(entry.tokens)
        assert shown["reason"] == entry.reason
    sent = result.sent_tokens_by_section()
    dropped = result.section_tokens("dropped")
    for s, section in enumerate(model.sections()):
        index = model.index(s, SectionTreeModel.C_TOKENS)
        assert index.data(TOKENS_ROLE) == sent.get(section, 0)
        assert str(sent.get(section, 0)) in index.data()
        if dropped.get(section):
            assert f"{dropped[section]} dropped" in index.data()
    # sections in prompt order
    known = [s for s in model.sections() if s in core.SECTION_ORDER]
    assert known == sorted(known, key=core.SECTION_ORDER.index)


def test_decisions_carry_a_glyph_and_an_icon_not_colour_alone(fixtures_dir):
    model = SectionTreeModel()
    model.set_result(core.load_result(fixtures_dir / "demo.result.json"))
    index = model.index_for("evidence", "rb-backups", SectionTreeModel.C_DECISION)
    assert index.data() == "✕ dropped"
    assert not index.data(Qt.ItemDataRole.DecorationRole).isNull()
    kept = model.index_for("evidence", "rb-disk-full", SectionTreeModel.C_DECISION)
    assert kept.data() == "✓ kept"
    required = model.index_for("tools", "get_weather", SectionTreeModel.C_DECISION)
    assert required.data() == "★ required"


def test_unknown_sections_get_a_fallback_colour_and_sort_after_known_ones(qtmodeltester, fixtures_dir):
    from inspector import theme

    data = json.loads((fixtures_dir / "demo.result.json").read_text(encoding="utf-8"))
    for entry in data["trace"]:
        if entry["section"] == "tools":
            entry["section"] = "required"
    result = core.parse_result(data)
    model = SectionTreeModel()
    model.set_result(result)
    qtmodeltester.check(model)
    assert model.sections()[-1] == "required"
    assert theme.section_colour("required").isValid()
    assert theme.section_colour("required") == theme.section_colour("required")  # stable
    assert model.index_for("required", "get_weather").isValid()


def test_request_list_columns_show_label_tokens_counts_and_audit(counter, fixtures_dir):
    model = RequestListModel()
    rows = _rows(fixtures_dir / "demo.request.json", counter, with_baseline=True)
    model.append_rows(rows)
    assembled, baseline = rows
    assert model.rowCount() == 2
    assert model.index(0, model.C_LABEL).data() == "demo"
    assert model.index(0, model.C_STRATEGY).data() == "assemble"
    assert model.index(1, model.C_STRATEGY).data() == "naive_truncate"
    r = assembled.result
    assert model.index(0, model.C_TOKENS).data() == f"{r.input_tokens} / {r.input_budget}"
    items = [e for e in r.trace if e.section != "template"]
    assert model.index(0, model.C_KEPT).data() == str(sum(e.decision != "dropped" for e in items))
    assert model.index(0, model.C_DROPPED).data() == str(sum(e.decision == "dropped" for e in items))
    errors = sum(f.severity == "error" for f in core.audit(baseline.result, counter))
    assert errors > 0
    assert model.index(1, model.C_AUDIT).data() == f"{errors} errors"
    assert not model.index(1, model.C_AUDIT).data(Qt.ItemDataRole.DecorationRole).isNull()
    assert model.index(0, model.C_TOKENS).data(SORT_ROLE) == r.input_tokens


def test_filter_toggles_follow_core_figures(counter, fixtures_dir):
    model = RequestListModel()
    rows = _rows(fixtures_dir / "recorded.results.jsonl", counter)
    model.append_rows(rows)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    with_drops = sum(any(e.decision == "dropped" for e in r.result.trace) for r in rows)
    with_errors = sum(core.has_errors(core.audit(r.result, counter)) for r in rows)
    proxy.set_has_drops(True)
    assert proxy.rowCount() == with_drops
    proxy.set_has_drops(False)
    proxy.set_audit_errors(True)
    assert proxy.rowCount() == with_errors
    proxy.set_audit_errors(False)
    proxy.set_text("rag-tight")
    assert proxy.rowCount() == 2
    proxy.set_text("")
    assert proxy.rowCount() == len(rows) == _jsonl_records(fixtures_dir / "recorded.results.jsonl")


def test_rows_for_each_entry_kind(counter, fixtures_dir):
    (result_row,) = _rows(fixtures_dir / "rag_tight.result.json", counter)
    assert result_row.kind == "result" and result_row.result.request_id == "rag-tight"
    (rejected,) = _rows(fixtures_dir / "rag_overflow.rejected.json", counter)
    record = json.loads((fixtures_dir / "rag_overflow.rejected.json").read_text(encoding="utf-8"))
    assert rejected.kind == "rejected"
    assert rejected.short_by == record["required_input_tokens"] - record["available_input_tokens"]
    (from_request,) = _rows(fixtures_dir / "rag_overflow.request.json", counter)
    with pytest.raises(core.RequiredContextTooLarge) as raised:
        core.assemble(core.load_request(fixtures_dir / "rag_overflow.request.json"), counter)
    assert from_request.kind == "rejected"
    expected = raised.value.required_input_tokens - raised.value.available_input_tokens
    assert from_request.short_by == expected
    assert from_request.status_text() == f"rejected: short by {expected} tokens"
    (no_counter,) = _rows(fixtures_dir / "demo.request.json", None, counter_error="hf:/x: not a directory")
    assert no_counter.kind == "invalid" and "not a directory" in no_counter.error


def test_item_content_shows_original_text(counter, fixtures_dir):
    (row,) = _rows(fixtures_dir / "demo.result.json", counter)
    request = row.result.request
    evidence = item_content(row, "evidence", "rb-backups")
    passage = next(p for p in request.evidence if p.id == "rb-backups")
    assert ("Passage text", passage.text) in evidence.blocks
    assert ("Source", passage.source) in evidence.fields
    tool = item_content(row, "tools", "get_weather")
    schema = json.dumps(request.tools[0].parameters, indent=2, ensure_ascii=False)
    assert ("JSON schema (parameters)", schema) in tool.blocks
    history = item_content(row, "history", "turn-weather")
    turn = request.history_turns()[request.turn_ids().index("turn-weather")]
    assert len(history.blocks) == len(turn)
    assert turn[0].content in history.blocks[0][1]
    summary = section_summary(row, "evidence")
    assert ("Tokens sent", f'{row.result.sent_tokens_by_section()["evidence"]:,}') in summary.fields


def test_window_receipts_are_shown_for_their_item(counter, fixtures_dir):
    data = json.loads((fixtures_dir / "rag_tight.result.json").read_text(encoding="utf-8"))
    passage = next(e["id"] for e in data["trace"] if e["section"] == "evidence")
    data["window_receipts"] = [{"passage_id": passage, "window": [10, 240], "tokens": 57},
                               {"passage_id": "someone-else", "window": [0, 5], "tokens": 3}]
    entry = core.entry_from(data, 0, None, "receipts.json")
    (row,) = rows_from_entry(entry, "receipts.json", counter)
    content = item_content(row, "evidence", passage)
    assert content.receipts == [data["window_receipts"][0]]


def test_model_index_parent_round_trip(fixtures_dir):
    model = SectionTreeModel()
    model.set_result(core.load_result(fixtures_dir / "demo.result.json"))
    section = model.index_for("history")
    child = model.index_for("history", "turn-freeze", 3)
    assert child.parent() == section
    assert model.rowCount(child) == 0
    assert model.rowCount(model.index(0, 2)) == 0  # only column 0 has children
    assert not model.index(99, 0).isValid()
    assert model.parent(QModelIndex()) == QModelIndex()


def test_pinned_and_summarised_have_their_own_glyphs(qtmodeltester, fixtures_dir):
    data = json.loads((fixtures_dir / "demo.result.json").read_text(encoding="utf-8"))
    for entry in data["trace"]:
        if entry["id"] == "turn-alert":
            entry["decision"] = "pinned"
        if entry["id"] == "rb-latency":
            entry["decision"] = "summarised"
    model = SectionTreeModel()
    model.set_result(core.parse_result(data))
    qtmodeltester.check(model)
    assert model.index_for("history", "turn-alert", SectionTreeModel.C_DECISION).data() == "⚑ pinned"
    assert model.index_for("evidence", "rb-latency", SectionTreeModel.C_DECISION).data() == "Σ summarised"
    section = model.index_for("evidence", None, SectionTreeModel.C_DECISION).data()
    assert "Σ 1 summarised" in section and "✓ 4 kept" in section and "✕ 1 dropped" in section


def test_token_figures_are_written_with_thousands_separators_as_the_bar_writes_them(counter, tmp_path):
    """The tree, its tooltips and the item pane write 1,234 as the budget bar and its axes do (a 200k-token
    request read "199712 sent" beside a bar that said "199,712")."""
    words = " ".join(f"word{i % 97} and" for i in range(900))
    request = core.parse_request({"id": "big", "instructions": "Answer.", "current": "What?", "history": [],
                                  "evidence": [{"id": "p1", "source": "doc.md", "score": 0.9, "text": words}],
                                  "context_limit": 8192, "max_new_tokens": 64, "margin": 8})
    result = core.assemble(request, counter)
    entry = next(e for e in result.trace if e.section == "evidence")
    assert entry.tokens >= 1000
    model = SectionTreeModel()
    model.set_result(result)
    section = next(model.index(s, 0) for s in range(model.rowCount())
                   if model.index(s, 0).data(SECTION_ROLE) == "evidence")
    sent = result.sent_tokens_by_section()["evidence"]
    assert model.index(section.row(), SectionTreeModel.C_TOKENS).data() == f"{sent:,} sent"
    assert f"{sent:,} tokens sent" in section.data(Qt.ItemDataRole.ToolTipRole)
    assert _tree_items(model)[("evidence", "p1")]["tokens_text"] == f"{entry.tokens:,}"
    path = tmp_path / "big.result.json"
    path.write_text(result.to_json(), encoding="utf-8")
    row = _rows(path, counter)[0]
    assert dict(item_content(row, "evidence", "p1").fields)["Tokens (marginal)"] == f"{entry.tokens:,}"
    assert dict(section_summary(row, "evidence").fields)["Tokens sent"] == f"{sent:,}"
