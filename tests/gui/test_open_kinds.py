"""Every kind the core loads opens: RAG windows requests, plan requests, recorded plan results, lazy JSONL."""
from __future__ import annotations

import json

import core
from inspector import theme
from inspector.document import pending_row, read_pending
from inspector.models import DECISION_ROLE, ITEM_ID_ROLE, RequestFilterProxy, RequestListModel, SECTION_ROLE, \
    SectionTreeModel
from .treehelpers import tree_decisions as tree

PLAN_FIXTURES = ("trip_plan_drop_oldest", "trip_plan_pin_and_fold", "trip_plan_summarise_span")


def test_rag_windows_request_is_assembled_with_its_receipts(open_and_wait, fixtures_dir, counter):
    path = fixtures_dir / "rag" / "tight.rag.json"
    window = open_and_wait(path)
    expected = core.assemble_rag(core.load_rag_request(path), counter)
    row = window.current_row
    assert row.kind == "assembled" and row.entry_kind == "rag"
    assert row.result.trace == expected.trace
    assert row.result.window_receipts == expected.window_receipts
    assert tree(window) == {(e.section, e.id): (e.decision, e.tokens) for e in expected.trace}
    # the Item tab of an evidence item: its window receipt, read as a person reads it
    receipt = expected.window_receipts[0]
    window.select_item("evidence", receipt["window_id"])
    text = window.detail.item_text()
    meta = receipt["metadata"]
    assert f"{meta['source_id']} ({meta['path']})" in text
    assert "Version" in text and meta["version"] in text
    assert f"characters {meta['start']}–{meta['end']}" in text
    for member in receipt["members"]:
        assert f"{member['chunk_id'][:12]}… {member['role']}" in text
    assert "neighbor" in text and "seed" in text
    ranks = ", ".join(f"#{r['rank']} {r['chunk_id'][:12]}…" for r in receipt["seed_ranks"])
    assert ranks in text
    # a receipt names only its own window
    other = expected.window_receipts[1]["window_id"]
    assert other not in text


def test_rag_windows_request_that_cannot_fit_is_rejected(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "rag" / "required_overflow.rag.json")
    row = window.current_row
    assert row.kind == "rejected" and row.entry_kind == "rag" and row.short_by > 0


def test_plan_request_sections_appear_under_their_own_names(open_and_wait, fixtures_dir, counter):
    path = fixtures_dir / "trip_plan_drop_oldest.plan.json"
    window = open_and_wait(path)
    plan_request = core.load_entries(path)[0].extra["plan_request"]
    expected = core.assemble_plan_request(plan_request, counter)
    row = window.current_row
    assert row.kind == "assembled" and row.entry_kind == "plan" and row.strategy == "plan"
    assert tree(window) == {(e.section, e.id): (e.decision, e.tokens) for e in expected.trace}
    # plan order after the template, each section under its own name, in a fallback colour
    assert window.tree_model.sections() == ["template", "system", "recent", "question"]
    titles = [window.tree_model.index(s, 0).data() for s in range(4)]
    assert titles[1:] == ["System (1)", "Recent (20)", "Question (1)"]
    for section in ("system", "recent", "question"):
        assert theme.section_colour(section).name().upper() in theme.FALLBACK_COLOURS
        assert window.bar.section_segment(section).tokens == expected.sent_tokens_by_section()[section]
    decisions = {d for d, _ in tree(window).values()}
    assert decisions == {"required", "pinned", "kept", "dropped"}
    badge = window.tree_model.index_for("recent", "turn-allergy", SectionTreeModel.C_DECISION)
    assert badge.data() == "⚑ pinned" and badge.data(DECISION_ROLE) == "pinned"
    # a dropped message still shows its text, found in the plan request
    window.select_item("recent", "turn-plan")
    assert "four-day trip to Lisbon" in window.detail.item_text()


def test_summarised_items_name_their_summary_and_the_summary_names_them(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "trip_plan_summarise_span.plan.json")
    result = window.current_row.result
    summary = next(e for e in result.trace if "replaces" in (e.model_extra or {}))
    replaced = summary.model_extra["replaces"]
    window.select_item("recent", summary.id)
    assert dict(window.detail.item_fields())[f"Replaces ({len(replaced)} messages)"] == ", ".join(replaced)
    assert "The user is planning a four-day trip" in window.detail.item_text()  # the summary's own text
    badge = window.tree_model.index_for("recent", replaced[0], SectionTreeModel.C_DECISION)
    assert badge.data() == "Σ summarised"
    window.select_item("recent", replaced[0])
    fields = dict(window.detail.item_fields())
    assert fields["Replaced by summary"] == summary.id
    assert fields["Decision"] == "summarised"


def test_recorded_plan_results_open_as_recorded_and_replayable(open_and_wait, fixtures_dir):
    for name in PLAN_FIXTURES:
        path = fixtures_dir / f"{name}.result.json"
        window = open_and_wait(path)
        recorded = core.load_result(path)
        row = window.current_row
        assert row.label == recorded.request_id
        assert row.kind == "result" and row.result.strategy == "plan"
        assert tree(window) == {(e.section, e.id): (e.decision, e.tokens) for e in recorded.trace}
        assert window.replay_panel.controls.isEnabled()  # it carries its plan request
        assert window.replay_panel.base.is_plan
        window.close_current_file()


def test_jsonl_rows_are_listed_from_the_index_and_read_when_needed(open_and_wait, fixtures_dir, tmp_path, counter):
    lines = [json.dumps(json.loads((fixtures_dir / f"{name}.plan.json").read_text(encoding="utf-8")))
             for name in PLAN_FIXTURES[:2]]
    lines.append(json.dumps(json.loads((fixtures_dir / "rag_tight.result.json").read_text(encoding="utf-8"))))
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = core.index_jsonl(path)
    assert [r.kind for r in index.rows] == ["plan", "plan", "result"]
    window = open_and_wait(path)
    model = window.request_model
    assert [model.row_at(i).kind for i in range(3)] == ["assembled", "assembled", "result"]
    assert [model.row_at(i).strategy for i in range(3)] == ["plan", "plan", "assemble"]
    assert [model.row_at(i).line for i in range(3)] == [1, 2, 3]
    expected = core.assemble_plan_request(index.entry(1).extra["plan_request"], counter)
    assert model.row_at(1).result.trace == expected.trace
    assert model.index(1, model.C_FILE).data() == "mixed.jsonl:2"


def test_request_list_with_rows_not_read_yet_passes_the_model_tester(qtmodeltester, fixtures_dir, counter):
    path = fixtures_dir / "recorded.results.jsonl"
    index = core.index_jsonl(path)
    model = RequestListModel()
    rows = [pending_row(str(path), index, summary) for summary in index.rows]
    model.append_rows(rows)
    qtmodeltester.check(model)
    first = index.rows[0]
    assert model.index(0, model.C_LABEL).data() == first.label
    assert model.index(0, model.C_STRATEGY).data() == first.strategy
    assert model.index(0, model.C_TOKENS).data() == f"{first.input_tokens:,} / {first.input_budget:,}"
    assert model.index(0, model.C_DROPPED).data() == str(first.dropped)
    assert model.index(0, model.C_KEPT).data() == "…"
    assert model.index(0, model.C_AUDIT).data() == "not read yet"
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(RequestListModel.C_AUDIT)
    qtmodeltester.check(proxy)
    rows[0].absorb(read_pending(rows[0], counter))
    model.rows_changed([rows[0]])
    qtmodeltester.check(proxy)
    assert model.index(0, model.C_AUDIT).data() == rows[0].status_text() != "not read yet"
    assert rows[0].result.model_dump() == core.load_entries(path)[0].result.model_dump()
