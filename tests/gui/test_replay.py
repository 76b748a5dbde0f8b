"""Replay under edited limits: what the bars, the tree and the counts show is exactly core.replay's answer."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QKeySequence

import core
from core.replay import Edits, diff, limit_range, replay, sweep
from inspector.panes.budget.plot import RECORDED_LANE
from inspector.models import CHANGE_ROLE, DECISION_ROLE, ITEM_ID_ROLE, SECTION_ROLE, SectionTreeModel
from .treehelpers import tree_items

DEMO = "demo.result.json"


@pytest.fixture
def replaying(open_and_wait, qtbot):
    """Open a file with the replay panel shown; returns the window once the what-if sweep is in."""

    def _open(path):
        window = open_and_wait(path)
        window.act_replay.trigger()
        qtbot.waitUntil(lambda: window.replay_dock.isVisible() and window.is_idle()
                        and (bool(window.replay_panel.whatif.points) or window.replay_panel.base is None), timeout=180000)
        return window

    return _open


def settle(window, qtbot) -> None:
    qtbot.waitUntil(window.is_idle, timeout=180000)


def assert_shows(window, recorded: core.AssemblyResult, expected: core.AssemblyResult) -> None:
    """Bars, tree marks and counts equal the core's replay and its diff against the recording."""
    outcome = window.replay_outcome
    assert outcome is not None and outcome.error is None
    assert outcome.result.trace == expected.trace
    assert outcome.result.messages == expected.messages
    assert outcome.result.input_tokens == expected.input_tokens
    changes = diff(recorded, expected)
    # two bars: the recording above, the replay below, and the replay's drops under it
    bar = window.bar
    assert bar.comparing
    assert bar.sent_by_section("recorded") == {k: v for k, v in recorded.sent_tokens_by_section().items() if v > 0}
    assert bar.sent_by_section("main") == {k: v for k, v in expected.sent_tokens_by_section().items() if v > 0}
    dropped = sorted((e.section, e.id, e.tokens) for e in expected.trace if e.decision == "dropped")
    # a run of many is one segment (folded): its items and their tokens are the trace's
    assert sorted((s.key, item, tokens) for s in bar.segments if s.kind == "dropped"
                  for item, tokens in zip(s.items, s.item_tokens)) == dropped
    assert all(s.tokens == sum(s.item_tokens) for s in bar.segments if s.kind == "dropped")
    newly = {(c.section, c.id) for c in changes.changes if c.kind == "newly dropped"}
    assert {(s.key, item) for s in bar.segments if s.newly for item in s.items} == newly
    # the tree: decisions of the replay, every change marked with its kind, a glyph and a tint
    items = tree_items(window)
    assert {key for key in items} == {(c.section, c.id) for c in changes.items}
    model = window.tree_model
    for change in changes.items:
        index = items[(change.section, change.id)]
        assert index.data(CHANGE_ROLE) == change.kind
        text = model.index(index.row(), SectionTreeModel.C_CHANGE, index.parent()).data()
        tint = index.data(Qt.ItemDataRole.BackgroundRole)
        if change.changed:
            assert change.kind in text and text.split()[0] in "▲▼Σ≠"
            assert tint is not None
        else:
            assert tint is None
    assert not window.tree.isColumnHidden(SectionTreeModel.C_CHANGE)
    # counts
    assert window.tokens_label.text() == (f"Replayed: input {expected.input_tokens} / {expected.input_budget} tokens "
                                          f"(recorded {recorded.input_tokens} / {recorded.input_budget})")
    summary = window.replay_panel.summary.text()
    assert f"Replayed: {expected.input_tokens} input tokens of a {expected.input_budget}-token allowance" in summary
    for kind in {c.kind for c in changes.changes}:
        assert f"{sum(c.kind == kind for c in changes.changes)} {kind}" in summary
    assert window.replay_panel.problem() == ""


def test_moving_the_limit_slider_shows_core_replay_and_its_diff(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / DEMO)
    recorded = core.load_result(fixtures_dir / DEMO)
    assert window.replay_outcome is None and not window.bar.comparing  # no edit yet: the recording
    assert window.tree.isColumnHidden(SectionTreeModel.C_CHANGE)
    panel = window.replay_panel
    assert panel.limit.value() == recorded.context_limit
    panel.limit.slider.setValue(900)
    assert panel.limit.spin.value() == 900
    settle(window, qtbot)
    expected = replay(recorded, edits=Edits(context_limit=900), counter=counter)
    assert_shows(window, recorded, expected)
    assert any(c.kind == "newly dropped" for c in diff(recorded, expected).items)
    # the detail tabs show the replayed result too
    assert json.loads(window.detail.json.toPlainText())["context_limit"] == 900
    # only the changes, under their sections
    window.only_changes.setChecked(True)
    proxy = window.tree_proxy
    shown = [(proxy.index(r, 0, proxy.index(s, 0)).data(SECTION_ROLE), proxy.index(r, 0, proxy.index(s, 0)).data(
        ITEM_ID_ROLE)) for s in range(proxy.rowCount()) for r in range(proxy.rowCount(proxy.index(s, 0)))]
    assert sorted(shown) == sorted((c.section, c.id) for c in diff(recorded, expected).changes)
    window.act_only_changes.trigger()
    assert not window.only_changes.isChecked()


def test_reserve_margin_and_fill_order_edits(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / DEMO)
    recorded = core.load_result(fixtures_dir / DEMO)
    panel = window.replay_panel
    panel.reserve.spin.setValue(512)
    settle(window, qtbot)
    assert_shows(window, recorded, replay(recorded, edits=Edits(max_new_tokens=512), counter=counter))
    panel.reserve.spin.setValue(recorded.max_new_tokens)
    panel.margin.slider.setValue(100)
    panel.limit.spin.setValue(900)
    settle(window, qtbot)
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=900, margin=100), counter=counter))
    # fill history first: select it in the list and move it up
    assert panel.fill_order() == tuple(recorded.fill_order) == ("evidence", "history")
    panel.fill_list.setCurrentRow(1)
    panel.fill_up.click()
    assert panel.fill_order() == ("history", "evidence")
    settle(window, qtbot)
    expected = replay(recorded, edits=Edits(context_limit=900, margin=100, fill_order=("history", "evidence")),
                      counter=counter)
    assert_shows(window, recorded, expected)
    assert {c.kind for c in diff(recorded, expected).changes} == {"newly kept", "newly dropped"}
    # a drag in the list is the same edit (InternalMove moves the row in the list's model)
    panel.fill_list.model().moveRow(QModelIndex(), 1, QModelIndex(), 0)
    assert panel.fill_order() == ("evidence", "history")
    settle(window, qtbot)
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=900, margin=100), counter=counter))


def test_a_burst_of_edits_ends_on_the_newest(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / DEMO)
    recorded = core.load_result(fixtures_dir / DEMO)
    slider = window.replay_panel.limit.slider
    values = list(range(1200, 700, -7)) + [880]
    for value in values:  # as fast as a dragged slider: no event processing in between
        slider.setValue(value)
    settle(window, qtbot)
    outcome = window.replay_outcome
    assert outcome.edits.context_limit == 880
    assert outcome.generation == window.replay.generation
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=880), counter=counter))
    assert window.replay.replays_run < len(values)  # the burst was coalesced, not queued
    # the view keeps up while the control keeps moving: intermediate replays are shown on the way
    shown = []
    window.replay.outcomeReady.connect(lambda o: shown.append(o.edits.context_limit))
    for value in range(880, 1000, 4):
        slider.setValue(value)
        qtbot.wait(30)
    settle(window, qtbot)
    assert shown[-1] == 996 and len(shown) >= 2
    assert shown == sorted(shown)  # never an older edit after a newer one


def test_an_edit_that_breaks_the_required_check_is_shown_in_place(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / DEMO)
    recorded = core.load_result(fixtures_dir / DEMO)
    panel = window.replay_panel
    panel.set_limit(900)
    settle(window, qtbot)
    good = window.replay_outcome.result
    with pytest.raises(core.RequiredContextTooLarge) as refused:
        replay(recorded, edits=Edits(context_limit=600), counter=counter)
    need, have = refused.value.required_input_tokens, refused.value.available_input_tokens
    panel.set_limit(600)
    settle(window, qtbot)
    assert (f"Required content needs {need} tokens, only {have} available: short by {need - have}"
            in panel.problem())
    assert panel.message.isVisible()
    # the last good view stays, and the app is usable (no error banner, no traceback)
    assert window.replay_outcome.result is good
    assert window.tree_model.result is good and window.bar.comparing
    assert not window.message_bar.isVisible()
    panel.set_limit(1000)
    settle(window, qtbot)
    assert panel.problem() == ""
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=1000), counter=counter))


def test_clicking_a_what_if_point_applies_its_limit(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / DEMO)
    recorded = core.load_result(fixtures_dir / DEMO)
    chart = window.replay_panel.whatif
    values = limit_range(recorded, counter=counter)
    assert chart.point_values() == values
    expected_points = sweep(recorded, "context_limit", values, counter=counter)
    assert [(p.value, p.input_tokens, p.section_tokens) for p in chart.points] == \
        [(p.value, p.input_tokens, p.section_tokens) for p in expected_points]
    assert chart._recorded.value() == recorded.context_limit
    assert chart.sections[0] == "template" and "evidence" in chart.sections
    target = values[3]
    qtbot.mouseClick(chart.plot.viewport(), Qt.MouseButton.LeftButton, pos=chart.point_position(target))
    assert window.replay_panel.limit.value() == target
    assert chart._edit.value() == target
    settle(window, qtbot)
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=target), counter=counter))


def test_reset_restores_the_recording(replaying, qtbot, fixtures_dir):
    window = replaying(fixtures_dir / DEMO)
    recorded = window.current_row.result
    window.replay_panel.set_limit(900)
    window.replay_panel.reserve.spin.setValue(300)
    settle(window, qtbot)
    assert window.replay_outcome is not None
    window.replay_panel.reset_button.click()
    settle(window, qtbot)
    assert window.replay_outcome is None and not window.bar.comparing
    assert window.tree_model.result is recorded
    assert window.tree.isColumnHidden(SectionTreeModel.C_CHANGE)
    assert window.replay_panel.limit.value() == recorded.context_limit
    assert window.replay_panel.reserve.value() == recorded.max_new_tokens
    assert window.tokens_label.text() == f"Input {recorded.input_tokens} / {recorded.input_budget} tokens"
    assert not window.replay_panel.save_button.isEnabled()
    # the shortcut does the same
    window.replay_panel.set_limit(950)
    settle(window, qtbot)
    assert window.replay_outcome is not None
    assert window.act_reset_replay.shortcut() == QKeySequence("Ctrl+Shift+R")
    window.act_reset_replay.trigger()
    settle(window, qtbot)
    assert window.replay_outcome is None


def test_save_replayed_writes_a_new_file_and_refuses_the_opened_one(replaying, qtbot, fixtures_dir, tmp_path):
    opened = tmp_path / "demo.result.json"
    opened.write_bytes((fixtures_dir / DEMO).read_bytes())
    before = opened.read_bytes()
    window = replaying(opened)
    assert not window.act_save_replayed.isEnabled()
    window.replay_panel.set_limit(900)
    settle(window, qtbot)
    assert window.replay_panel.save_button.isEnabled() and window.act_save_replayed.isEnabled()
    assert not window.save_replayed_to(str(opened))
    assert opened.read_bytes() == before
    assert "never overwritten" in window.message_bar.message()
    target = tmp_path / "demo.replayed.result.json"
    assert window.save_replayed_to(str(target))
    assert target.read_text(encoding="utf-8") == window.replay_outcome.result.to_json()
    assert core.load_result(target).context_limit == 900
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_unpinning_a_plan_message_and_editing_a_share_change_the_plan(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / "trip_plan_drop_oldest.plan.json")
    recorded = window.current_row.result
    panel = window.replay_panel
    assert panel.plan_box.isVisible() and not panel.margin.isEnabled()
    assert panel.section_pin_item("system").checkState() == Qt.CheckState.Checked
    allergy = panel.message_pin_item("turn-allergy")
    assert allergy.checkState() == Qt.CheckState.Checked
    allergy.setCheckState(Qt.CheckState.Unchecked)
    settle(window, qtbot)
    expected = replay(recorded, edits=Edits(pins={"turn-allergy": False}), counter=counter)
    assert_shows(window, recorded, expected)
    index = tree_items(window)[("recent", "turn-allergy")]
    assert index.data(DECISION_ROLE) == "dropped" and index.data(CHANGE_ROLE) == "newly dropped"
    panel.share_spin("recent").setValue(0.5)
    settle(window, qtbot)
    expected = replay(recorded, edits=Edits(shares={"recent": 0.5}, pins={"turn-allergy": False}), counter=counter)
    assert_shows(window, recorded, expected)
    # a plan's limit edits its budget; the what-if chart spreads limits around the recorded one
    assert window.replay_panel.whatif.points
    panel.set_limit(300)
    settle(window, qtbot)
    assert_shows(window, recorded, replay(recorded, edits=Edits(context_limit=300, shares={"recent": 0.5},
                                                                pins={"turn-allergy": False}), counter=counter))


def test_plan_edit_that_cannot_fit_is_shown_in_place(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / "trip_plan_drop_oldest.result.json")
    recorded = window.current_row.result
    panel = window.replay_panel
    panel.set_limit(300)
    settle(window, qtbot)
    good = window.replay_outcome.result
    with pytest.raises(core.ContextBudgetError) as refused:
        replay(recorded, edits=Edits(context_limit=150), counter=counter)
    panel.set_limit(150)
    settle(window, qtbot)
    assert str(refused.value) in panel.problem()
    assert window.replay_outcome.result is good


def test_rag_replay_keeps_the_window_receipts(replaying, qtbot, fixtures_dir, counter):
    path = fixtures_dir / "rag" / "tight.rag.json"
    window = replaying(path)
    row = window.current_row
    window.replay_panel.set_limit(600)
    settle(window, qtbot)
    replayed = window.replay_outcome.result
    loaded = core.load_rag_request(path)
    expected = core.assemble_rag(loaded._replace(request=core.replay.edited_request(
        loaded.request, Edits(context_limit=600))), counter)
    assert replayed.trace == expected.trace
    assert replayed.window_receipts == row.result.window_receipts == expected.window_receipts
    assert replayed.trace == replay(row.result, edits=Edits(context_limit=600), counter=counter).trace


def test_a_rejected_request_can_be_replayed_with_more_room(replaying, qtbot, fixtures_dir, counter):
    window = replaying(fixtures_dir / "rag_overflow.request.json")
    row = window.current_row
    assert row.kind == "rejected" and window.replay_panel.controls.isEnabled()
    need = row.input_tokens
    limit = need + row.rejection["max_new_tokens"] + row.rejection["margin"] + 50
    window.replay_panel.set_limit(limit)
    settle(window, qtbot)
    expected = replay(row.request, edits=Edits(context_limit=limit), counter=counter)
    assert window.replay_outcome.result.trace == expected.trace
    assert window.replay_outcome.diff is None
    assert window.bar.comparing
    assert any(s.kind == "required" and s.lane == "recorded" for s in window.bar.segments)


def test_a_result_without_its_request_opens_read_only(replaying, qtbot, fixtures_dir, tmp_path):
    data = json.loads((fixtures_dir / DEMO).read_text(encoding="utf-8"))
    del data["request"]
    path = tmp_path / "no_request.result.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    window = replaying(path)
    panel = window.replay_panel
    assert not panel.controls.isEnabled() and not panel.reset_button.isEnabled()
    assert "Read-only" in panel.note.text() and "recorded without its request" in panel.note.text()
    assert window.replay_outcome is None and window.tree_model.result is window.current_row.result


def test_replay_panel_is_in_the_view_menu_with_a_shortcut(window):
    assert window.act_replay.shortcut() == QKeySequence("Ctrl+R")
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert window.act_replay in view_menu.actions()
    assert not window.replay_dock.isVisible()
    window.act_replay.trigger()
    assert window.replay_dock.isVisible()
    # the counter is chosen with the window's own actions
    panel = window.replay_panel
    assert panel.embedded_button.defaultAction() is window.act_default_counter
    assert panel.choose_button.defaultAction() is window.act_counter
    assert panel.accessibleName() and panel.limit.spin.accessibleName() and panel.whatif.accessibleName()


def test_tree_with_a_diff_and_its_change_filter_pass_the_model_tester(qtmodeltester, fixtures_dir, counter):
    from inspector.models import ChangeFilterProxy

    recorded = core.load_result(fixtures_dir / "trip_plan_summarise_span.result.json")
    replayed = replay(recorded, edits=Edits(context_limit=1000), counter=counter)
    changes = diff(recorded, replayed)
    model = SectionTreeModel()
    model.set_result(replayed, diff=changes, recorded=recorded)
    qtmodeltester.check(model)
    gone = [c for c in changes.items if c.decision_after is None]
    assert gone  # the summary: everything fits, nothing is summarised
    for change in gone:  # items only the recording has are listed, marked as gone
        index = model.index_for(change.section, change.id, SectionTreeModel.C_DECISION)
        assert index.isValid() and "not in the replay" in index.data()
    proxy = ChangeFilterProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)
    proxy.set_only_changes(True)
    qtmodeltester.check(proxy)
    count = sum(proxy.rowCount(proxy.index(s, 0)) for s in range(proxy.rowCount()))
    assert count == len(changes.changes) > 0
    model.set_result(None)
    qtmodeltester.check(proxy)


def test_bars_reuse_their_plot_items_and_name_each_lane(replaying, qtbot, fixtures_dir):
    window = replaying(fixtures_dir / DEMO)
    bar, chart = window.bar, window.replay_panel.whatif
    bar_items = list(bar.plot.getPlotItem().items)
    chart_items = list(chart.plot.getPlotItem().items)
    for limit in (900, 950, 1000):
        window.replay_panel.set_limit(limit)
        settle(window, qtbot)
    assert list(bar.plot.getPlotItem().items) == bar_items
    assert list(chart.plot.getPlotItem().items) == chart_items
    recorded = bar.section_segment("evidence", lane="recorded")
    replayed = bar.section_segment("evidence")
    assert bar.hover_text(recorded).startswith(f"Recorded — Evidence: {recorded.tokens} tokens sent")
    assert bar.hover_text(replayed).startswith(f"Replayed — Evidence: {replayed.tokens} tokens sent")
    assert "limit 1,000" in bar._mark_labels[1].toPlainText() and "limit 1,050" in bar._mark_labels[0].toPlainText()
    # clicking the recording's segment selects its section, as the single bar does
    point = bar.view_to_widget(recorded.x0 + recorded.width / 2, sum(RECORDED_LANE) / 2)
    qtbot.mouseClick(bar.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.selection == ("evidence", None)


def test_only_changes_shows_everything_again_once_the_replay_is_reset(replaying, qtbot, fixtures_dir):
    window = replaying(fixtures_dir / DEMO)
    window.replay_panel.set_limit(900)
    settle(window, qtbot)
    window.only_changes.setChecked(True)
    assert window.tree_proxy.rowCount() < window.tree_model.rowCount()
    window.reset_replay()
    settle(window, qtbot)
    assert not window.only_changes.isVisible()
    assert window.tree_proxy.rowCount() == window.tree_model.rowCount() == 7
    assert sum(window.tree_proxy.rowCount(window.tree_proxy.index(s, 0)) for s in range(7)) == \
        len(window.current_row.result.trace)


def test_the_edit_lines_label_stays_inside_the_chart_at_either_edge(replaying, qtbot, fixtures_dir):
    """At the recorded limit (the chart's right edge) the edit's label is drawn left of its line, not cut off
    by the edge; at the low end, right of it; neither line's label covers the legend."""
    window = replaying(fixtures_dir / DEMO)
    chart = window.replay_panel.whatif
    values = chart.point_values()
    for value in (values[-1], values[0]):
        window.replay_panel.set_limit(value)
        settle(window, qtbot)
        qtbot.waitUntil(lambda: chart._edit.value() == value, timeout=60000)
        chart.plot.repaint()
        box, legend = chart.view.sceneBoundingRect(), chart.legend.sceneBoundingRect()
        for line in (chart._edit, chart._recorded):
            label = line.label.sceneBoundingRect()
            assert box.left() <= label.left() and label.right() <= box.right(), (value, label, box)
            assert not label.intersects(legend), (value, label, legend)  # nor over the legend (top left)


def test_an_unreadable_row_leaves_no_other_rows_limits_on_the_what_if_chart(replaying, qtbot, fixtures_dir, tmp_path):
    """The what-if chart of a row with nothing to replay is empty, and its axes are the empty chart's (0 to 1, as at
    start), not the context limits of the row shown before (700 to 1,200 tokens after the demo, seen in a screenshot
    of an unreadable JSONL line)."""
    data = json.loads((fixtures_dir / DEMO).read_text(encoding="utf-8"))
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(data) + "\n" + '{"broken": \n', encoding="utf-8")
    window = replaying(path)
    chart = window.replay_panel.whatif
    assert chart.points and chart.view.viewRange()[0][1] > 100  # the first row's sweep, its limits
    window.select_proxy_row(1)
    qtbot.waitUntil(lambda: window.replay_panel.base is None and window.is_idle(), timeout=180000)
    assert "Read-only" in window.replay_panel.note.text() and not chart.points
    (x0, x1), (y0, y1) = chart.view.viewRange()
    assert (x0, x1, y0, y1) == (0, 1, 0, 1)


def test_an_unreadable_row_shows_no_other_rows_figures_in_the_controls(replaying, qtbot, fixtures_dir, tmp_path):
    """The greyed controls of a row with nothing to replay hold no figures (a dash, no fill order), not the limits of
    the row shown before (1,050 tokens after the demo, seen in a screenshot of an unreadable JSONL line); a readable
    row selected again shows its own, a recorded 0 as 0."""
    data = json.loads((fixtures_dir / DEMO).read_text(encoding="utf-8"))
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(data) + "\n" + '{"broken": \n', encoding="utf-8")
    window = replaying(path)
    panel = window.replay_panel
    limit = panel.limit.value()
    assert limit == data["context_limit"] and panel.fill_list.count() > 0
    window.select_proxy_row(1)
    qtbot.waitUntil(lambda: panel.base is None and window.is_idle(), timeout=180000)
    for control in (panel.limit, panel.reserve, panel.margin):
        assert control.spin.text() == "—" and control.slider.maximum() == 0
    assert panel.fill_list.count() == 0 and not panel.plan_box.isVisible()
    assert window.replay_outcome is None
    window.select_proxy_row(0)
    qtbot.waitUntil(lambda: panel.base is not None and window.is_idle(), timeout=180000)
    assert panel.limit.value() == limit and panel.limit.spin.text() != "—"
    assert panel.margin.spin.text().startswith(str(data["margin"]))


def test_a_blank_limit_control_shows_a_dash_and_a_recorded_zero_after_it(qtbot):
    """``blank`` shows a dash without reporting a change; a figure loaded after it, 0 included, is shown as itself."""
    from inspector.panes.limitcontrol import LimitControl

    control = LimitControl("Margin")
    qtbot.addWidget(control)
    changes: list[int] = []
    control.valueChanged.connect(changes.append)
    control.load(32, 0, 64)
    control.blank()
    assert control.spin.text() == "—" and control.slider.maximum() == 0
    control.load(0, 0, 64)
    assert control.value() == 0 and control.spin.text() == "0 tokens" and control.slider.maximum() == 64
    assert changes == []
