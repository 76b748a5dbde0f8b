"""The session dock: a trace's calls as a timeline, the calls list beside the span tree, and a two-call
diff; every figure is core.open_session's. Models pass Qt's model tester."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

import core
from inspector.models.session import CALL_ROLE, SessionCallsModel, SessionDiffModel, SpanTreeModel

SESSION = "sessions/agent_compaction.langfuse.json"


@pytest.fixture
def session_window(open_and_wait, qtbot, fixtures_dir):
    window = open_and_wait(fixtures_dir / SESSION)
    window.select_first_request()
    window.act_session.trigger()
    qtbot.waitUntil(lambda: window.sessions.session is not None and window.is_idle(), timeout=180000)
    return window


def test_models_pass_the_model_tester(qtmodeltester, fixtures_dir, counter):
    session = core.open_session(fixtures_dir / SESSION, counter)
    calls, spans, diff = SessionCallsModel(), SpanTreeModel(), SessionDiffModel()
    for model, fill in ((calls, calls.set_session), (spans, spans.set_session)):
        qtmodeltester.check(model)
        fill(session)
        qtmodeltester.check(model)
    qtmodeltester.check(diff)
    diff.set_diff(session.diffs[14])
    qtmodeltester.check(diff)
    assert calls.rowCount() == 24 and spans.rowCount() == 1  # the agent span is the root
    assert diff.rowCount() == 1 + len(session.diffs[14].changes)
    assert diff.index(1, 0).data() == "compacted"


def test_session_dock_shows_the_calls_and_follows_the_selection(session_window, qtbot, fixtures_dir, counter):
    window = session_window
    pane = window.session_pane
    expected = core.open_session(fixtures_dir / SESSION, counter)
    session = window.sessions.session
    assert [c.input_tokens for c in session.calls] == [c.input_tokens for c in expected.calls]
    assert pane.calls_model.rowCount() == 24
    chart = pane.chart
    assert chart.xs == [float(i) for i in range(1, 25)]
    # bars stack each call's sections up to its input tokens; the shaded prefix is core's
    tops = [sum(c.sections.values()) for c in session.calls]
    assert tops == [c.input_tokens for c in session.calls]
    assert list(chart._cached.opts["height"]) == [float(d.prefix_tokens) if d else 0.0 for d in session.diffs]
    assert list(chart._compacted.data["data"]) == [14] and list(chart._removed.data["data"]) == [19]
    # clicking the 15th bar selects its row in the requests list, and the pane shows its diff
    qtbot.mouseClick(chart.plot.viewport(), Qt.MouseButton.LeftButton, pos=chart.call_position(14))
    qtbot.waitUntil(lambda: window.current_row is not None and window.is_idle()
                    and pane.diff_model.diff is not None and pane.diff_model.diff.later == 14, timeout=180000)
    assert window.current_row.imported.recorded.span_id == "gen-15"
    assert pane.calls.currentIndex().row() == 14
    assert pane.spans.currentIndex().data(CALL_ROLE) == 14
    assert pane.diff_model.diff.changes == expected.diffs[14].changes
    # selecting another row in the list moves the pane to that call
    window.step_request(5)
    qtbot.waitUntil(lambda: pane.calls.currentIndex().row() == window.sessions.call_of(window.current_row),
                    timeout=180000)
    # any two calls: from the first to the last
    pane.earlier.setValue(1)
    pane.later.setValue(24)
    qtbot.waitUntil(lambda: pane.diff_model.diff is not None and pane.diff_model.diff.earlier == 0
                    and pane.diff_model.diff.later == 23, timeout=180000)
    assert pane.diff_model.diff.prefix_tokens == expected.compare(0, 23).prefix_tokens


def test_timeline_by_time(session_window):
    pane = session_window.session_pane
    pane.x_axis.setCurrentIndex(1)
    starts = [c.start_time for c in session_window.sessions.session.calls]
    assert pane.chart.xs == pytest.approx([s - starts[0] for s in starts])


def test_screenshots(session_window, qtbot):
    window = session_window
    window.import_bar.limitChanged.emit("claude-sonnet-4-5", 16384)
    assert window.sessions.session.context_window == 16384
    assert window.session_pane.chart._window.value() == 16384 and window.session_pane.chart._allowance.value() == 8192
    window.session_dock.setFloating(True)
    window.session_dock.resize(1280, 800)
    pane = window.session_pane
    window.sessions.pick_call(14)
    qtbot.waitUntil(lambda: pane.diff_model.diff is not None and pane.diff_model.diff.later == 14 and window.is_idle(),
                    timeout=180000)
    qtbot.wait(50)
    assert window.session_dock.grab().save("/tmp/i17-session.png")
    pane.earlier.setValue(19)
    pane.later.setValue(20)
    qtbot.waitUntil(lambda: pane.diff_model.diff is not None and pane.diff_model.diff.earlier == 18, timeout=180000)
    qtbot.wait(50)
    assert pane.splitter.widget(2).grab().save("/tmp/i17-diff.png")
