"""The budget bar: segment widths are the core's section totals; clicking a segment selects its section."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPalette

import core
from inspector import theme
from inspector.panes.budget.plot import section_code
from inspector.panes.budgetbar import BudgetBar
from inspector.models import ITEM_ID_ROLE, SECTION_ROLE


@pytest.mark.parametrize("name", ["demo.result.json", "demo.baseline.json", "rag_tight.result.json",
                                  "tool_exchange.result.json", "trip_plan_summarise_span.result.json"])
def test_segment_widths_equal_section_totals(open_and_wait, fixtures_dir, name):
    window = open_and_wait(fixtures_dir / name)
    result = core.load_result(fixtures_dir / name)
    bar = window.bar
    bar.set_view("window")
    sent = {s.key: s.width for s in bar.segments if s.kind == "section"}
    assert sent == {k: v for k, v in result.sent_tokens_by_section().items() if v > 0}
    # what was not sent (dropped, or summarised: replaced by a summary) is drawn below the bar
    dropped_entries = [e for e in result.trace if e.decision in core.NOT_SENT]
    not_sent: dict[str, int] = {}
    for e in dropped_entries:
        not_sent[e.section] = not_sent.get(e.section, 0) + e.tokens
    assert bar.dropped_by_section() == not_sent
    # a section with more than core.FOLD_AT items not sent is one run with their count; unfolded, one
    # hatched segment per item, its width the item's marginal tokens
    for seg in (s for s in bar.segments if s.folded):
        assert len(seg.items) > core.FOLD_AT and seg.run_label().startswith(
            f"{theme.section_title(seg.key)}: {len(seg.items)} ")
    for section in not_sent:
        bar.unfold(section)
    assert sorted((s.key, s.items[0], s.width) for s in bar.segments if s.kind == "dropped") == \
        sorted((e.section, e.id, e.tokens) for e in dropped_entries)
    # sent segments are stacked from 0 in prompt order and end at input_tokens
    main = [s for s in bar.segments if s.kind == "section"]
    assert main[0].x0 == 0
    assert all(a.x1 == b.x0 for a, b in zip(main, main[1:]))
    assert main[-1].x1 == result.input_tokens
    reserve = {s.kind: s for s in bar.segments if s.kind in ("free", "margin", "reserve")}
    assert reserve["reserve"].width == result.max_new_tokens
    assert reserve["reserve"].x1 == result.context_limit
    if result.margin:
        assert reserve["margin"].width == result.margin
    if result.remaining_tokens > 0:
        assert reserve["free"].width == result.remaining_tokens
    # dropped items start at the allowance line: the part that did not fit
    drops = [s for s in bar.segments if s.kind == "dropped"]
    if drops:
        assert drops[0].x0 == result.input_budget
    assert bar._allowance.value() == result.input_budget
    assert bar._limit.value() == result.context_limit
    assert bar._allowance.label.toPlainText() == f"allowance {result.input_budget:,}"
    assert bar._limit.label.toPlainText() == f"context limit {result.context_limit:,}"
    if any(e.decision == "summarised" for e in result.trace):
        assert "Summarised: 9 items" in bar.caption.text()
        folded = next(seg for seg in bar.segments if seg.kind == "dropped" and seg.summarised)
        assert "summarised (replaced by a summary)" in bar.hover_text(folded)
        assert window.current_row.kept_count == sum(e.decision in ("kept", "pinned") for e in result.trace
                                                     if e.section != "template")


def test_clicking_a_segment_selects_the_section(open_and_wait, qtbot, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    bar = window.bar
    for section in ("evidence", "tools"):
        segment = bar.section_segment(section)
        point = bar.view_to_widget(segment.x0 + segment.width / 2, 0.5)
        with qtbot.waitSignal(bar.segmentClicked, timeout=2000) as blocker:
            qtbot.mouseClick(bar.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
        assert blocker.args == [section, None]
        assert window.selection == (section, None)
        current = window.tree.currentIndex()
        assert current.data(SECTION_ROLE) == section and current.data(ITEM_ID_ROLE) is None
    # a dropped segment selects that item (and so its section)
    dropped = bar.section_segment("history", lane="dropped")
    point = bar.view_to_widget(dropped.x0 + dropped.width / 2, -0.5)
    qtbot.mouseClick(bar.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.selection == ("history", dropped.items[0])
    current = window.tree.currentIndex()
    assert (current.data(SECTION_ROLE), current.data(ITEM_ID_ROLE)) == ("history", dropped.items[0])


def test_hover_names_section_tokens_and_share(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    result = core.load_result(fixtures_dir / "demo.result.json")
    bar = window.bar
    evidence = bar.section_segment("evidence")
    text = bar.hover_text(evidence)
    tokens = result.sent_tokens_by_section()["evidence"]
    assert f"Evidence: {tokens} tokens sent" in text
    assert f"{100 * tokens / result.context_limit:.1f}% of the {result.context_limit:,}-token context limit" in text
    assert "rb-disk-full" in text
    found = bar.segment_at(evidence.x0 + 1, 0.5)
    assert found == evidence
    dropped = bar.hover_text(bar.section_segment("evidence", lane="dropped"))
    # a dropped item says why, in the core's words
    assert dropped.startswith("Evidence / rb-backups: 57 tokens dropped: does not fit: needs 57, 43 left")
    # the mouse moving over the segment shows the same text
    centre = bar.view.mapViewToScene(QPointF(evidence.x0 + evidence.width / 2, 0.5))
    bar.plot.scene().sigMouseMoved.emit(centre)
    assert bar.last_hover_text == text


def test_legend_lists_sections_reserve_and_dropped(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json")
    entries = window.bar.legend.entries()
    for section in ("template", "instructions", "tools", "history", "current", "tool_exchanges", "evidence"):
        # each section's entry names the short code a narrow segment carries: colour is not the only cue
        assert f"{theme.section_title(section)} ({section_code(section)})" in entries
    assert theme.RESERVE_TITLES["reserve"] in entries
    assert theme.RESERVE_TITLES["margin"] in entries
    assert any(e.startswith("Dropped") for e in entries)


def test_plot_items_are_reused_between_rows(open_and_wait, fixtures_dir):
    window = open_and_wait(fixtures_dir / "demo.result.json", fixtures_dir / "rag_tight.result.json")
    bar = window.bar
    items = list(bar.plot.getPlotItem().items)
    window.select_proxy_row(1)
    window.select_proxy_row(0)
    assert list(bar.plot.getPlotItem().items) == items


def test_bar_follows_the_palette(qtbot):
    bar = BudgetBar()
    qtbot.addWidget(bar)
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#18191a"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e8eaed"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e8eaed"))
    bar.setPalette(dark)
    assert bar.plot.backgroundBrush().color() == QColor("#18191a")
    assert bar._limit.pen.color() == QColor("#e8eaed")


def _contrast(a: QColor, b: QColor) -> float:
    def lum(c: QColor) -> float:
        def chan(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
        return 0.2126 * chan(c.redF()) + 0.7152 * chan(c.greenF()) + 0.0722 * chan(c.blueF())
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_section_tints_keep_text_readable_in_light_and_dark(scheme):
    pal = QPalette()
    if scheme == "dark":
        pal.setColor(QPalette.ColorRole.Window, QColor("#202124"))
        pal.setColor(QPalette.ColorRole.Base, QColor("#18191a"))
        pal.setColor(QPalette.ColorRole.Text, QColor("#e8eaed"))
    else:
        pal.setColor(QPalette.ColorRole.Window, QColor("#efefef"))
        pal.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
        pal.setColor(QPalette.ColorRole.Text, QColor("#000000"))
    text = pal.color(QPalette.ColorRole.Text)
    colours = [theme.section_colour(s) for s in list(theme.SECTION_COLOURS) + ["some_unknown_section"]]
    colours += [QColor(c) for c in theme.FALLBACK_COLOURS]  # every colour a plan's section may get
    for colour in colours:
        background = theme.tint(colour, pal, 0.30)
        assert _contrast(background, text) >= 4.5, (colour.name(), scheme)


def _legend_sections(bar) -> list[str]:
    titles = {theme.section_title(s) for s in core.SECTION_ORDER}
    return [text.rsplit(" (", 1)[0] for text in bar.legend.entries() if text.rsplit(" (", 1)[0] in titles]


def test_legend_holds_only_the_shown_rows_entries_after_switching_rows(open_and_wait, qtbot, fixtures_dir):
    """Each row's legend replaces the last one at once: no old entry stays behind the new ones."""
    window = open_and_wait(fixtures_dir / "formats" / "otlp_traces.json", fixtures_dir / "demo.result.json")
    rows = window.request_model.rows()
    # rows with different sections: four model calls of a trace, then an assembled request with evidence
    assert len({frozenset(e.section for e in r.result.trace) for r in rows}) >= 3
    for row in rows + rows[::-1]:
        window.select_row(row)
        bar = window.bar
        shown = theme.section_order(s.key for s in bar.segments if s.kind in ("section", "dropped"))
        assert _legend_sections(bar) == [theme.section_title(s) for s in shown]
        swatches = bar.legend.swatches()
        assert len(swatches) == len(bar.legend.entries())  # nothing left over from the previous row
        assert all(w.isVisible() for w in swatches)
        qtbot.wait(1)  # the layout places them
        # laid out side by side: no two entries overlap
        rects = sorted((w.geometry() for w in swatches), key=lambda r: (r.y(), r.x()))
        assert not any(a.intersects(b) for n, a in enumerate(rects) for b in rects[n + 1:])


def test_the_context_limit_label_stays_inside_the_bar_when_the_pane_narrows(open_and_wait, qtbot, fixtures_dir):
    """With the replay panel open the bar narrows over the same token range: the limit's label, right of its
    line, ran off the edge ("context limit" with its figure cut off); it now reads left of the line there (clear
    of the allowance's label, which reads left of its own line)."""
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.resize(1280, 800)
    window.act_replay.trigger()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    bar = window.bar
    label, allowance = bar.marks.limit.label, bar.marks.allowance.label
    qtbot.waitUntil(lambda: label.sceneBoundingRect().right() <= bar.view.sceneBoundingRect().right(), timeout=5000)
    assert not label.sceneBoundingRect().intersects(allowance.sceneBoundingRect())


def test_an_empty_bar_shows_its_axis_from_zero(qtbot):
    """Nothing to draw (no row, or a row that could not be read): the token axis starts at 0, as every bar's does
    (it ran from -6 to 1: the narrowest zoom was wider than the widest)."""
    bar = BudgetBar()
    qtbot.addWidget(bar)
    bar.resize(900, 200)
    bar.show_row(None)
    low, high = bar.x_range()
    assert low == 0 and high >= core.MIN_ZOOM_TOKENS
    bar.reset_zoom()
    assert bar.x_range()[0] == 0
