"""Provider request bodies and trace exports in the inspector: one row per model call, counted by core
with the chosen counter, drift beside the provider's figure, a context limit per model, re-assembly,
and files that cannot be read."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

import core
from inspector import theme
from inspector.panes.detail import DetailTabs
from inspector.models import ITEM_ID_ROLE, RequestFilterProxy, RequestListModel, SECTION_ROLE, SectionTreeModel
from inspector.document.imported import DEFAULT_OUTPUT_RESERVE, imported_row, imported_source, model_key
from inspector.files.settings import Settings

FORMATS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
PROVIDER_FIXTURES = sorted(p.name for p in FORMATS_DIR.iterdir() if p.suffix in (".json", ".jsonl", ".yaml"))


def expected_result(request: core.ImportedRequest, counter, context_limit: int | None = None) -> core.AssemblyResult:
    """What core counts for an imported request under the reserve the inspector asks for: the recorded
    max_tokens, else the inspector's default output reserve."""
    reserve = None if request.recorded.max_output_tokens is not None else DEFAULT_OUTPUT_RESERVE
    return core.count_imported(request, counter, context_limit=context_limit, max_new_tokens=reserve)


def tree_items(window) -> list[tuple[str, str, str, int]]:
    """(section, item id, shown name, tokens) of every item in the section tree, top to bottom."""
    model = window.tree_model
    out = []
    for s in range(model.rowCount()):
        parent = model.index(s, 0)
        for r in range(model.rowCount(parent)):
            index = model.index(r, 0, parent)
            out.append((index.data(SECTION_ROLE), index.data(ITEM_ID_ROLE), index.data(),
                        int(model.index(r, SectionTreeModel.C_TOKENS, parent).data().replace(",", ""))))
    return out


def rows_of(window, path) -> list:
    return [r for r in window.request_model.rows() if r.source == str(Path(path).resolve())]


@pytest.mark.parametrize("name", PROVIDER_FIXTURES)
def test_each_provider_fixture_opens_one_counted_row_per_model_call(name, open_and_wait, counter):
    path = FORMATS_DIR / name
    imported = core.import_file(path)
    window = open_and_wait(path)
    rows = rows_of(window, path)
    assert len(rows) == len(imported.calls()) and imported.requests
    assert [r.label for r in rows if r.kind == "invalid"] == [f.label for f in imported.failed]  # rows of their own
    rows = [r for r in rows if r.kind != "invalid"]
    model = window.request_model
    for row, request in zip(rows, imported.requests):
        expected = expected_result(request, counter)
        assert row.kind == "imported" and row.strategy == "imported"
        assert row.result.trace == expected.trace
        assert row.result.input_tokens == expected.input_tokens
        number = model.row_number(row)
        # the Format column names the format the call was read as; the Drift column is core's count_drift
        assert model.index(number, model.C_FORMAT).data() == request.recorded.format
        drift = (expected.model_extra or {}).get("count_drift")
        assert model.index(number, model.C_DRIFT).data() == (f"{drift:+,}" if drift is not None else "")
        if drift is not None:
            assert model.index(number, model.C_DRIFT).data(Qt.ItemDataRole.TextAlignmentRole) is not None
        window.select_row(row)
        # the tree: core's sections in prompt order, every message with its marginal tokens and its role
        items = tree_items(window)
        assert [(s, i, t) for s, i, _, t in items] == [(e.section, e.id, e.tokens) for e in
                                                      sorted(expected.trace, key=lambda e: theme.section_order(
                                                          [x.section for x in expected.trace]).index(e.section))]
        for entry in expected.trace:
            shown = next(n for s, i, n, _ in items if (s, i) == (entry.section, entry.id))
            for k in entry.message_indices:
                assert request.messages[k].role in shown
        # the Item tab names the format, the trace and span ids and the provider's figures
        fields = dict(window.detail.item_fields())
        assert fields["Read as"] == request.recorded.format
        if request.recorded.trace_id:
            assert fields["Trace id"] == request.recorded.trace_id
            assert fields["Span id"] == request.recorded.span_id
        if drift is not None:
            assert fields["Drift (ours − theirs)"].startswith(f"{drift:+,} tokens")
            assert f"drift {drift:+,}" in window.tokens_label.text()
        assert f"read as {request.recorded.format}" in window.file_label.text()
        # the budget bar: the counted input against the limit core assumed, the provider's figure beside it
        assert window.bar.sent_by_section() == {k: v for k, v in expected.sent_tokens_by_section().items() if v > 0}
        assert window.bar.provider_tokens == request.recorded.input_tokens
        # the audit's structural findings
        findings = window.detail.audit.model
        assert [findings.finding_at(n) for n in range(findings.rowCount())] == core.audit(expected, counter)


def test_import_warnings_are_in_the_log_and_in_the_requests_item_tab(open_and_wait):
    path = FORMATS_DIR / "otlp_traces.json"
    imported = core.import_file(path)
    window = open_and_wait(path)
    log_text = window.log_view.toPlainText()
    for warning in imported.warnings:
        assert str(warning) in log_text
    assert "3 things could not be mapped" in window.message_bar.message()
    row = next(r for r in rows_of(window, path) if r.imported.warnings)
    window.select_row(row)
    text = window.detail.item_text()
    for warning in row.imported.warnings:
        assert str(warning) in text
    # the file's own warnings (spans that are not model calls) are shown with each of its requests
    assert "not model calls and were skipped" in text


def test_drift_column_sorts_with_unknown_drift_last(open_and_wait):
    window = open_and_wait(FORMATS_DIR / "otlp_traces.json", FORMATS_DIR / "anthropic_body.json")
    window.request_view.sortByColumn(RequestListModel.C_DRIFT, Qt.SortOrder.DescendingOrder)
    proxy = window.request_proxy
    shown = [proxy.index(r, RequestListModel.C_DRIFT).data() for r in range(proxy.rowCount())]
    known = [int(v) for v in shown if v]
    assert known == sorted(known, reverse=True) and shown[-1] == ""  # the Anthropic body records no usage


def test_a_request_the_counter_refuses_is_a_row_with_a_message(open_and_wait, tmp_path, fixtures_dir):
    path = tmp_path / "prefill_only.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": [{"role": "assistant", "content": "Sure."}]}),
                    encoding="utf-8")
    window = open_and_wait(path)
    (row,) = rows_of(window, path)
    assert row.kind == "uncounted" and row.result is None
    assert "cannot count this request" in row.error
    assert window.request_model.index(0, RequestListModel.C_AUDIT).data() == "not counted"
    assert "cannot count this request" in window.message_bar.message()
    window.select_row(row)
    assert "cannot count this request" in window.detail.item_text()
    assert json.loads(window.detail.json.toPlainText())["messages"][0]["content"] == "Sure."
    assert not window.act_reassemble.isEnabled() or not window.import_bar.reassemble_button.isEnabled()
    # the app goes on
    window.open_files([str(fixtures_dir / "demo.result.json")])
    window.wait_until_idle()
    assert window.request_model.rowCount() == 2


@pytest.mark.parametrize("content, problem", [
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab', "malformed JSON"),
    ('{"model": "gpt-4o", "messages": "hello"}', "expected a list of messages"),
    ('{"resourceSpans": "none"}', "resourceSpans"),
])
def test_a_malformed_provider_file_gives_one_clear_message(window, qtbot, tmp_path, fixtures_dir, content, problem):
    bad = tmp_path / "bad_provider.json"
    bad.write_text(content, encoding="utf-8")
    window.open_files([str(bad)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    message = window.message_bar.message()
    assert str(bad) in message and problem in message and "Traceback" not in message
    assert window.request_model.rowCount() == 0
    window.open_files([str(FORMATS_DIR / "otlp_traces.jsonl")])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.request_model.rowCount() == 2  # still usable


# ---- the context limit per model


def test_a_context_limit_set_for_a_model_recounts_its_rows_redraws_the_bar_and_is_remembered(
        open_and_wait, qtbot, counter, fixtures_dir):
    json_path, jsonl_path = FORMATS_DIR / "otlp_traces.json", FORMATS_DIR / "otlp_traces.jsonl"
    window = open_and_wait(json_path, jsonl_path)
    gpt4o = [r for r in window.request_model.rows() if r.imported.recorded.model == "gpt-4o"]
    others = {id(r): r.result.context_limit for r in window.request_model.rows() if r not in gpt4o}
    assert len(gpt4o) == 2
    window.select_row(gpt4o[0])
    assert window.import_bar.isVisible() and window.import_bar.model == "gpt-4o"
    assert "Context limit for gpt-4o" in window.import_bar.limit_label.text()
    assert window.act_context_limit.text() == "Context &Limit for gpt-4o…"
    window.import_bar.limit.setValue(8192)  # as the spin box reports an edit
    qtbot.waitUntil(window.is_idle, timeout=180000)
    expected = expected_result(gpt4o[0].imported, counter, context_limit=8192)
    for row in gpt4o:  # every open request of that model, counted again by core under the new limit
        assert row.result.context_limit == 8192
        assert (row.result.model_extra or {})["context_limit_source"] == "given"
    assert window.current_row is gpt4o[0]
    assert window.current_row.result.trace == expected.trace
    # the bar redrew: its limit line, the free part and the output reserve follow the new limit
    assert window.bar._limit.value() == 8192
    free = next(s for s in window.bar.segments if s.kind == "free")
    assert free.tokens == 8192 - expected.max_new_tokens - expected.input_tokens
    assert "Set by you for gpt-4o" in window.import_bar.limit_note.text()
    # other models keep core's assumed limit
    assert {id(r): r.result.context_limit for r in window.request_model.rows() if r not in gpt4o} == others
    # remembered: in the settings, and used the next time a request of that model opens
    assert Settings().context_limits()["gpt-4o"] == 8192
    window.close_current_file()
    window.open_files([str(json_path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    reopened = next(r for r in rows_of(window, json_path) if r.imported.recorded.model == "gpt-4o")
    assert reopened.result.context_limit == 8192
    # 0 forgets it: core's assumed size again, for the open rows and the next time
    window.select_row(reopened)
    window.import_bar.limit.setValue(0)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert reopened.result.context_limit == expected_result(reopened.imported, counter).context_limit
    assert "gpt-4o" not in Settings().context_limits()
    assert window.import_bar.limit.value() == reopened.result.context_limit


def test_model_names_with_slashes_are_remembered_as_given(qapp):
    settings = Settings()
    settings.set_context_limit("meta-llama/Llama-3.1-8B-Instruct", 131072)
    assert Settings().context_limits() == {"meta-llama/Llama-3.1-8B-Instruct": 131072}


def test_a_limit_too_small_for_the_output_reserve_is_a_row_message_and_can_be_undone(open_and_wait, qtbot):
    path = FORMATS_DIR / "otlp_traces.jsonl"
    window = open_and_wait(path)
    row = rows_of(window, path)[0]  # gpt-4o, recorded max_tokens 512
    window.select_row(row)
    window.import_bar.limit.setValue(300)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert row.kind == "uncounted" and "leaves no input room" in row.error
    assert window.import_bar.isVisible() and window.import_bar.limit.value() == 300
    window.import_bar.limit.setValue(4096)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert row.kind == "imported" and row.result.context_limit == 4096


# ---- re-assemble


@pytest.mark.parametrize("name, index", [("openai_request_response.json", 0), ("otlp_traces.json", 0),
                                         ("openinference_spans.json", 0), ("cassette_stream.yaml", 1)])
def test_reassemble_opens_a_core_assembled_row_in_the_replay_panel(name, index, open_and_wait, qtbot, counter):
    path = FORMATS_DIR / name
    window = open_and_wait(path)
    imported_row_ = rows_of(window, path)[index]
    window.select_row(imported_row_)
    assert window.act_reassemble.isEnabled()
    assert window.act_reassemble.shortcut().toString() == "Ctrl+E"
    assert window.replay_panel.base is None  # an imported request has no assembly to replay
    window.act_reassemble.trigger()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    row = window.current_row
    assert row is not imported_row_ and row.derived_from is imported_row_
    assert row.kind == "assembled" and row.label == f"{imported_row_.label} (re-assembled)"
    limit, reserve = imported_row_.result.context_limit, imported_row_.result.max_new_tokens
    request = core.to_core_request(imported_row_.imported, context_limit=limit, max_new_tokens=reserve)
    expected = core.assemble(request, counter)
    assert row.result == expected
    assert row.findings == core.audit(expected, counter)
    # listed right below the imported row, shown in the tree and the bar, and open in the replay panel
    model = window.request_model
    assert model.row_number(row) == model.row_number(imported_row_) + 1
    assert [e.id for e in window.tree_model.result.trace] == [e.id for e in expected.trace]
    assert window.replay_dock.isVisible()
    assert window.replay_panel.base is not None and window.replay_panel.base.context_limit == limit
    # again: the earlier re-assembly is replaced, not piled up
    window.reassemble_current()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert sum(r.derived_from is imported_row_ for r in model.rows()) == 1


def test_reassembled_rows_come_back_after_a_reload(open_and_wait, qtbot, counter):
    path = FORMATS_DIR / "cassette_stream.yaml"
    window = open_and_wait(path)
    first, second = rows_of(window, path)[:2]
    for row in (first, second):
        window.select_row(row)
        window.reassemble_current()
        qtbot.waitUntil(window.is_idle, timeout=180000)
    before = [(r.label, r.kind, r.result.input_tokens if r.result else None) for r in window.request_model.rows()]
    assert sum(r.derived_from is not None for r in window.request_model.rows()) == 2
    window.select_row(first)
    window.reload()
    qtbot.waitUntil(lambda: window.is_idle() and sum(r.derived_from is not None
                                                     for r in window.request_model.rows()) == 2, timeout=180000)
    after = [(r.label, r.kind, r.result.input_tokens if r.result else None) for r in window.request_model.rows()]
    assert after == before  # each in its place, below the row it was made from
    assert all(r.derived_from in window.request_model.rows() for r in window.request_model.rows() if r.derived_from)
    assert window.current_row is not None and window.current_row.derived_from is None  # the selection stays put
    assert sum("again after the reload" in text for _level, text in window.messages) == 2


def test_reassemble_names_what_cannot_be_represented(open_and_wait, qtbot):
    path = FORMATS_DIR / "openai_broken_body.json"
    window = open_and_wait(path)
    window.select_row(rows_of(window, path)[0])
    before = window.request_model.rowCount()
    window.import_bar.reassemble_button.click()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    message = window.message_bar.message()
    assert message.startswith("Cannot re-assemble request body")
    assert "messages[3]" in message and "not a JSON object" in message and "has no result" in message
    assert window.request_model.rowCount() == before


def test_reassemble_reports_a_request_the_counters_template_refuses(open_and_wait, qtbot):
    path = FORMATS_DIR / "anthropic_body.json"  # an assistant turn with text and a tool call: mistral refuses it
    window = open_and_wait(path)
    window.select_row(rows_of(window, path)[0])
    window.reassemble_current()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    message = window.message_bar.message()
    assert message.startswith("Cannot re-assemble request body: the core assembler could not assemble it")
    assert "refused" in message and "Traceback" not in message
    assert window.request_model.rowCount() == 1


# ---- models over imported rows


def test_request_list_and_tree_pass_the_model_tester_with_imported_rows(qtmodeltester, counter):
    path = FORMATS_DIR / "otlp_traces.json"
    imported = core.import_file(path)
    source = imported_source(imported)
    rows = [imported_row(r, n, str(path), source, counter, {}) for n, r in enumerate(imported.requests)]
    model = RequestListModel()
    model.append_rows(rows)
    qtmodeltester.check(model)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(RequestListModel.C_DRIFT, Qt.SortOrder.AscendingOrder)
    qtmodeltester.check(proxy)
    proxy.set_text("gen_ai-event")
    assert proxy.rowCount() == 1
    tree = SectionTreeModel()
    for row in rows:
        tree.set_result(row.result)
        qtmodeltester.check(tree)
    assert model_key(rows[0].imported) == "gpt-4o"


def test_item_tab_of_an_imported_message_shows_its_text_and_place(open_and_wait, qtbot):
    path = FORMATS_DIR / "otlp_traces.json"
    window = open_and_wait(path)
    row = rows_of(window, path)[0]
    window.select_row(row)
    entry = next(e for e in row.result.trace if e.section == "current")
    window.select_item("current", entry.id)
    fields = dict(window.detail.item_fields())
    assert fields["Place in the file"] == row.imported.places[entry.message_indices[0]]
    assert row.imported.messages[entry.message_indices[0]].content in window.detail.item_text()
    window.detail.setCurrentIndex(DetailTabs.REQUEST)
    qtbot.waitUntil(window.is_idle, timeout=180000)  # the Request tab renders off the GUI thread
    assert row.imported.messages[entry.message_indices[0]].content in window.detail.request.editor.toPlainText()


def test_a_call_that_cannot_be_read_is_a_row_with_its_error_and_the_others_open(open_and_wait, tmp_path, qtbot):
    good = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Fare from Ghent to Bruges?"}]}
    broken = {"model": "gpt-4o-mini", "messages": [{"role": "robot", "content": "beep"}]}
    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in (good, broken, good)) + "\n", encoding="utf-8")
    window = open_and_wait(path)
    rows = rows_of(window, path)
    assert [r.kind for r in rows] == ["imported", "invalid", "imported"]  # in file order
    failed = rows[1]
    assert "not read: line 2.messages[0].role: unknown message role 'robot'" in failed.error
    assert window.request_model.index(1, RequestListModel.C_AUDIT).data() == "unreadable"
    assert not [text for level, text in window.messages if level == "error"]  # the others were read
    assert any("1 could not be read" in text for _, text in window.messages)
    window.select_row(failed)
    assert "unknown message role 'robot'" in window.detail.item_text()
    window.resize(1280, 800)
    window.grab().save("/tmp/i12b-failed-row.png")


def test_screenshot_exits_0_when_some_calls_were_read_and_2_when_none(qapp, counter, tmp_path, capsys):
    from inspector import app as inspector_app

    good = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}
    broken = {"model": "gpt-4o-mini", "messages": [{"role": "robot", "content": "beep"}]}
    partial, none = tmp_path / "partial.jsonl", tmp_path / "none.jsonl"
    partial.write_text(json.dumps(good) + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    none.write_text(json.dumps(broken) + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    assert inspector_app.main([str(partial), "--screenshot", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").exists()
    assert inspector_app.main([str(none), "--screenshot", str(tmp_path / "n.png")]) == 2
    assert "unknown message role 'robot'" in capsys.readouterr().err
