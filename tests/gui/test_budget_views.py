"""The budget bar at real window sizes: fit-to-input and whole-window views, zoom limits, folded runs,
the composition table, a plan's section figures, and PNG/SVG export of the bar and the what-if chart."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

import core
from inspector.files import charts as chartexport
from inspector import theme
from inspector.files.settings import open_settings
from inspector.models.roles import DECISION_ROLE, SECTION_ROLE
from inspector.panes.budget.legend import legend_entries
from inspector.panes.budget.plot import DROP_LANE, label_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support import base_request, turn  # noqa: E402


@pytest.fixture
def big_window_file(tmp_path, fixtures_dir) -> Path:
    """The demo request in a 200,000-token window."""
    data = json.loads((fixtures_dir / "demo.request.json").read_text())
    data["context_limit"] = 200_000
    path = tmp_path / "demo_200k.request.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def long_chat_file(tmp_path) -> Path:
    """245 history turns under a 1,200-token limit: 208 turns dropped."""
    history = [m for n in range(245) for m in turn(n, words=6)]
    path = tmp_path / "long_chat.request.json"
    path.write_text(json.dumps(base_request(history=history, context_limit=1200, max_new_tokens=200, margin=16)))
    return path


def test_fit_to_input_fills_the_bar_the_window_view_shows_the_whole_window(open_and_wait, big_window_file):
    window = open_and_wait(big_window_file)
    bar, result = window.bar, window.current_row.result
    assert bar.view_mode == "fit"
    x0, x1 = bar.x_range()
    assert x0 == pytest.approx(0) and result.input_tokens <= x1 < result.input_tokens * 1.2
    # the allowance and the limit are far to the right: named at the edge
    assert bar.offscreen.isVisible()
    assert bar.offscreen.toPlainText() == f"allowance {result.input_budget:,} → · context limit 200,000 →"
    bar.view_buttons["window"].click()
    assert bar.view_mode == "window"
    x0, x1 = bar.x_range()
    assert 200_000 <= x1 < 200_000 * 1.2 and not bar.offscreen.isVisible()
    # every section is a readable width in the fit view (more than a pixel per few tokens)
    bar.set_view("fit")
    evidence = bar.section_segment("evidence")
    left, right = bar.view_to_widget(evidence.x0, 0.5), bar.view_to_widget(evidence.x1, 0.5)
    assert right.x() - left.x() > 200


def test_zoom_and_pan_move_the_token_axis_only_within_limits(open_and_wait, qtbot, big_window_file):
    window = open_and_wait(big_window_file)
    bar = window.bar
    y_before = bar.view.viewRange()[1]
    bar.view.setXRange(10, 11, padding=0)  # narrower than allowed
    x0, x1 = bar.x_range()
    assert x1 - x0 >= core.MIN_ZOOM_TOKENS - 1e-6
    bar.view.setXRange(-10_000_000, 10_000_000, padding=0)  # wider than everything
    x0, x1 = bar.x_range()
    narrow, wide = core.zoom_limits(bar.segments, [200_000])
    assert x1 - x0 <= wide * 1.2 and x0 >= -0.03 * wide
    assert bar.view.viewRange()[1] == y_before  # the lanes never move
    assert bar.view.state["mouseEnabled"] == [True, False]
    bar.reset_zoom()
    assert bar.x_range()[1] < 2000


def test_many_dropped_items_are_one_labelled_run_that_unfolds(open_and_wait, qtbot, long_chat_file):
    window = open_and_wait(long_chat_file)
    bar, result = window.bar, window.current_row.result
    dropped = [e for e in result.trace if e.decision == "dropped"]
    runs = [s for s in bar.segments if s.kind == "dropped"]
    assert len(dropped) == 208 and len(runs) == 1
    run = runs[0]
    total = sum(e.tokens for e in dropped)
    assert run.run_label() == f"History: 208 dropped, {total:,} tokens"
    assert any(d.label == run.run_label() for d in bar._bars.drawn())
    text = bar.hover_text(run)
    assert text.startswith(f"History: 208 dropped, {total:,} tokens")
    assert f"  {dropped[0].id}: {dropped[0].tokens}" in text and "… and 196 more" in text
    assert "first: does not fit" in text
    assert theme.PRICED_ALONE in text  # why the run's figure can be more than the prompt would grow by
    tree = window.tree_model
    history = next(r for r in range(tree.rowCount()) if tree.index(r, 0).data(SECTION_ROLE) == "history")
    first_dropped = next(tree.index(r, tree.C_TOKENS, tree.index(history, 0)) for r in range(tree.rowCount(
        tree.index(history, 0))) if tree.index(r, 0, tree.index(history, 0)).data(DECISION_ROLE) == "dropped")
    assert theme.PRICED_ALONE in first_dropped.data(Qt.ItemDataRole.ToolTipRole)
    # the legend says runs are folded
    assert any("folded into one, with their count" in e for e in bar.legend.entries())
    # clicking the run selects the section, not one of its items
    point = bar.view_to_widget(min(run.x0 + 20, bar.x_range()[1] - 20), sum(DROP_LANE) / 2)
    with qtbot.waitSignal(bar.segmentClicked, timeout=2000) as blocker:
        qtbot.mouseClick(bar.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert blocker.args == ["history", None]
    # the menu unfolds it: one segment per item
    menu = bar.context_menu(point)
    unfold = next(a for a in menu.actions() if a.text().startswith("Unfold History's 208 items"))
    unfold.trigger()
    assert len([s for s in bar.segments if s.kind == "dropped"]) == 208
    assert any(a.text() == "Fold History's items" for a in bar.context_menu(point).actions())


def test_newly_dropped_items_fold_into_their_own_outlined_run(open_and_wait, qtbot, tmp_path):
    history = [m for n in range(245) for m in turn(n, words=6)]
    path = tmp_path / "roomy.request.json"
    path.write_text(json.dumps(base_request(history=history, context_limit=3200, max_new_tokens=200, margin=16)))
    window = open_and_wait(path)
    window.act_replay.trigger()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    window.replay_panel.set_limit(1200)
    qtbot.waitUntil(lambda: window.bar.comparing and window.is_idle(), timeout=180000)  # a busy machine
    runs = [s for s in window.bar.segments if s.kind == "dropped"]
    newly = [s for s in runs if s.newly]
    assert len(newly) == 1 and len(newly[0].items) == 77
    assert newly[0].run_label().startswith("History: 77 newly dropped, ")
    assert sum(len(s.items) for s in runs) == 208


def test_composition_rows_add_up_and_pass_the_model_tester(open_and_wait, qtmodeltester, big_window_file):
    window = open_and_wait(big_window_file)
    bar, result = window.bar, window.current_row.result
    bar.view_buttons["composition"].click()
    assert bar.stack.currentWidget() is bar.composition and not bar.legend.isVisible()
    model = bar.composition.model()
    qtmodeltester.check(model)
    rows = model.rowCount()
    cells = {model.data(model.index(r, 0)): [model.data(model.index(r, c)) for c in range(model.columnCount())]
             for r in range(rows)}
    tokens = [int(v[1].replace(",", "")) for k, v in cells.items() if k != "Context limit (total)"]
    assert sum(tokens) == result.context_limit == 200_000
    assert cells["Context limit (total)"][1:5] == ["200,000", "100.0%", "100.0%", "100.0%"]
    assert cells["Evidence (Ev)"][1] == f"{result.sent_tokens_by_section()['evidence']:,}"
    assert cells["Free (unused allowance)"][3] == f"{result.remaining_tokens / 200_000:.1%}"
    assert cells["Template overhead (Tpl)"][3] == "<0.1%"  # small but not zero
    assert bar.composition.isColumnHidden(6)  # no plan: no share column


def test_a_plan_section_shows_share_allowance_and_decisions(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "trip_plan_drop_oldest.result.json")
    bar = window.bar
    caption = bar.caption.text()
    assert "Plan sections — " in caption
    assert "Recent: share 85%, allowance 214, drop-oldest; pinned 1, kept 15, evicted 4, summarised 0" in caption
    evicted = bar.section_segment("recent", lane="dropped")
    text = bar.hover_text(evicted)
    assert "evicted by drop-oldest: recent over its 85% share (214-token allowance)" in text
    assert "did not fit" not in text
    assert "plan section: share 85%, allowance 214" in text
    bar.set_view("composition")
    model = bar.composition.model()
    row = next(r for r in range(model.rowCount()) if model.data(model.index(r, 0)).startswith("Recent"))
    assert [model.data(model.index(row, c)) for c in range(6, 12)] == ["85%", "214", "1", "15", "4", "0"]
    assert not bar.composition.isColumnHidden(6)


def test_narrow_segments_carry_a_short_code_and_the_legend_names_it(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    bar = window.bar
    drawn = {d.label.rsplit(" ", 1)[0]: d for d in bar._bars.drawn()}
    current = drawn["Current question"]
    metrics = bar.plot.fontMetrics()
    assert label_for(metrics, current, metrics.horizontalAdvance(current.label) + 10) == current.label
    assert label_for(metrics, current, 20) == "Q"  # too narrow for its name: its code
    assert label_for(metrics, current, 4) == ""
    assert "Current question (Q)" in bar.legend.entries()


def test_palette_comes_from_core_and_sections_are_distinct():
    from inspector import theme

    assert theme.SECTION_COLOURS is core.SECTION_COLOURS
    names = list(core.SECTION_COLOURS) + ["system", "recent", "question"]
    colours = [theme.section_colour(n).name().upper() for n in names]
    assert len(set(colours)) == len(colours)
    entries = legend_entries([core.Segment("section", n, 0, 1, "main", 1) for n in names], provider=False,
                             comparing=False)
    assert len({e[1].color().name() for e in entries}) == len(names)


# ---- export


def _check_png(path: Path, width: int) -> None:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(path))
    assert not image.isNull() and image.width() == width


def _check_svg(path: Path, *texts: str) -> None:
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    body = path.read_text()
    for text in texts:
        assert text in body, text


def test_the_bar_exports_png_and_svg(open_and_wait, tmp_path, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.bar.export(tmp_path / "bar.png", "png")
    _check_png(tmp_path / "bar.png", chartexport.PNG_WIDTH)
    window.bar.export(tmp_path / "bar.svg", "svg")
    _check_svg(tmp_path / "bar.svg", "allowance", "context limit")


def test_the_what_if_chart_exports_png_and_svg(open_and_wait, qtbot, tmp_path, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.act_replay.trigger()
    chart = window.replay_panel.whatif
    qtbot.waitUntil(lambda: bool(chart.points) and window.is_idle(), timeout=180000)
    chart.export(tmp_path / "whatif.png", "png")
    _check_png(tmp_path / "whatif.png", chartexport.PNG_WIDTH)
    chart.export(tmp_path / "whatif.svg", "svg")
    _check_svg(tmp_path / "whatif.svg", "recorded")


def test_saving_asks_before_replacing_and_remembers_the_folder(open_and_wait, qtbot, tmp_path, fixtures_dir,
                                                               monkeypatch):
    """Charts go where every save goes (files/destination.py): the last save's folder, never an input's, and a
    file that exists is replaced only after a yes."""
    from inspector.files import destination
    from inspector.files.settings import Settings

    window = open_and_wait(fixtures_dir / "demo.result.json")
    bar = window.bar
    target = tmp_path / "slides" / "bar.png"
    target.parent.mkdir()
    target.write_bytes(b"mine")
    offered: list[str] = []

    def dialog(parent, title, start, pattern, options=None):
        offered.append(start)
        assert options == QFileDialog.Option.DontConfirmOverwrite  # the one prompt is ours
        return str(target), pattern

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    answers = iter([False, True])
    asked: list[Path] = []
    monkeypatch.setattr(destination, "confirm_replace",
                        lambda parent, path: asked.append(Path(path)) or next(answers))
    bar.save_chart("png")  # declined: the file stays as it was
    assert asked == [target] and target.read_bytes() == b"mine"
    assert Path(offered[0]).parent != fixtures_dir  # never the input's folder
    row = window.current_row
    assert Path(offered[0]).name == f"{row.label}.{row.strategy}.budget.png"
    with qtbot.waitSignal(bar.exported, timeout=5000) as blocker:
        bar.save_chart("png")
    assert blocker.args == [str(target)]
    _check_png(target, chartexport.PNG_WIDTH)
    assert Settings(open_settings()).save_folder() == str(target.parent)
    # the next dialog opens in that folder; cancelled, nothing is written
    target.unlink()
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, start, pattern, options=None: offered.append(start)
                                     or ("", "")))
    window.replay_panel.whatif.save_chart("svg")
    assert Path(offered[-1]).parent == target.parent and Path(offered[-1]).name == "what-if.chart.svg"
    assert not target.exists()


def test_the_tree_keeps_its_token_figures_in_view_in_a_narrow_pane(qtbot, long_chat_file, counter):
    """A long section total ("… sent · … dropped") sized the token column wider than a narrow pane, so the
    items' right-aligned figures were out of sight and the column looked empty; it is fitted into the view
    (the long totals elide), widened again when the pane grows, and a width set by hand is kept."""
    from inspector.models import SectionTreeModel
    from inspector.panes.sectiontree import MIN_TOKENS_WIDTH, SectionTreePane

    result = core.assemble(core.load_request(long_chat_file), counter)
    pane = SectionTreePane()
    qtbot.addWidget(pane)
    pane.resize(1400, 500)
    pane.show()
    pane.show_result(result, diff=None, recorded=None)
    tree, col = pane.tree, SectionTreeModel.C_TOKENS
    wide = tree.columnWidth(col)  # its content's width, with room for it

    def right_edge() -> int:
        return tree.columnViewportPosition(col) + tree.columnWidth(col)

    before = tree.columnViewportPosition(col)
    assert wide > MIN_TOKENS_WIDTH + 40  # (the long totals need the room)
    frame = pane.width() - tree.viewport().width()  # the pane's width around the view's
    narrow = frame + before + (MIN_TOKENS_WIDTH + wide) // 2  # room between the column's least and whole width
    pane.resize(narrow, 500)
    qtbot.waitUntil(lambda: tree.columnWidth(col) < wide)
    assert right_edge() <= tree.viewport().width()
    pane.resize(1400, 500)
    qtbot.waitUntil(lambda: tree.columnWidth(col) == wide)
    tree.setColumnWidth(col, wide + 40)  # the person's width
    pane.resize(narrow, 500)
    qtbot.wait(50)
    assert tree.columnWidth(col) == wide + 40
    # with the columns reordered on screen (the header's sections dragged), the room is measured where it stands
    header = tree.header()
    header.moveSection(header.visualIndex(col), header.count() - 1)
    pane.show_result(result, diff=None, recorded=None)  # a new result: every fitted column sized afresh
    pane.resize(frame + header.sectionPosition(col) + (MIN_TOKENS_WIDTH + wide) // 2, 500)
    qtbot.waitUntil(lambda: tree.columnWidth(col) < wide)
    assert header.sectionPosition(col) + tree.columnWidth(col) - header.offset() <= tree.viewport().width()
