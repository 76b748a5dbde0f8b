"""The budget bar's layout (core.barlayout), the composition table (core.composition) and the shared
palette (core.palette): what the inspector draws and the HTML report writes, without Qt."""
from __future__ import annotations

import math
from functools import lru_cache

import pytest
from support import FIXTURES, base_request, default_counter, turn

from core import assemble, load_result, parse_request
from core.barlayout import (FOLD_AT, MIN_ZOOM_TOKENS, content_extent, result_segments, view_extent,
                            zoom_limits)
from core.composition import composition, percent, section_figures
from core.palette import FALLBACK_COLOURS, RESERVE_COLOURS, SECTION_COLOURS, SectionPalette


@lru_cache(maxsize=None)
def many_drops():
    """A long conversation under a tight limit: about 200 history turns dropped."""
    history = [m for n in range(245) for m in turn(n, words=6)]
    return assemble(parse_request(base_request(history=history, context_limit=1200, max_new_tokens=200, margin=16)),
                    default_counter())


@lru_cache(maxsize=None)
def big_window():
    """A small request in a 200,000-token window."""
    data = base_request(context_limit=200_000, max_new_tokens=4096, margin=64)
    return assemble(parse_request(data), default_counter())


def test_many_dropped_items_fold_into_one_labelled_run_per_section():
    result = many_drops()
    dropped = [e for e in result.trace if e.decision == "dropped"]
    assert len(dropped) >= 200
    runs = [s for s in result_segments(result) if s.kind == "dropped"]
    assert len(runs) == 1 and runs[0].folded
    run = runs[0]
    assert run.items == tuple(e.id for e in dropped) and run.item_tokens == tuple(e.tokens for e in dropped)
    assert run.tokens == run.width == sum(e.tokens for e in dropped)
    assert run.run_label() == f"History: {len(dropped)} dropped, {run.tokens:,} tokens"
    # unfolded on request: one segment per item again, end to end
    apart = [s for s in result_segments(result, unfolded={"history"}) if s.kind == "dropped"]
    assert [s.items[0] for s in apart] == list(run.items)
    assert all(a.x1 == b.x0 for a, b in zip(apart, apart[1:]))


def test_a_few_dropped_items_stay_one_segment_each():
    result = load_result(FIXTURES / "demo.result.json")
    dropped = [e for e in result.trace if e.decision == "dropped"]
    by_section = {s: [e for e in dropped if e.section == s] for s in {e.section for e in dropped}}
    assert all(len(v) <= FOLD_AT for v in by_section.values())
    assert sorted(s.items[0] for s in result_segments(result) if s.kind == "dropped") == sorted(e.id for e in dropped)


def test_newly_dropped_items_fold_apart_from_those_dropped_before():
    result = many_drops()
    dropped = [e for e in result.trace if e.decision == "dropped"]
    newly = frozenset(("history", e.id) for e in dropped[:77])
    runs = [s for s in result_segments(result, newly=newly) if s.kind == "dropped"]
    assert [(len(s.items), s.newly) for s in runs] == [(len(dropped) - 77, False), (77, True)]
    assert runs[1].run_label().startswith("History: 77 newly dropped, ")


def test_fit_to_input_shows_the_request_and_the_window_view_the_whole_window():
    result = big_window()
    window = result_segments(result, view="window")
    fit = result_segments(result, view="fit")
    assert view_extent(window, "window", allowances=[result.input_budget], limits=[result.context_limit]) == 200_000
    right = view_extent(fit, "fit", allowances=[result.input_budget], limits=[result.context_limit])
    assert right == content_extent(fit) == result.input_tokens  # the allowance is far off: not squashed in
    # a few hundred tokens fill the fit view; in the window view they are a sliver
    assert result.input_tokens / right == 1.0 and result.input_tokens / 200_000 < 0.01


def test_fit_view_draws_what_was_dropped_after_what_was_sent():
    result = load_result(FIXTURES / "trip_plan_pin_and_fold.result.json")
    fit = result_segments(result, view="fit")
    drops = [s for s in fit if s.kind == "dropped"]
    assert drops[0].x0 == result.input_tokens
    # 62 sent + 256 evicted against a 272-token allowance and a 400-token limit: near enough to be shown
    right = view_extent(fit, "fit", allowances=[result.input_budget], limits=[result.context_limit])
    assert right == max(content_extent(fit), result.input_budget, result.context_limit) == 400
    window = result_segments(result, view="window")
    assert [s for s in window if s.kind == "dropped"][0].x0 == result.input_budget


def test_zoom_limits_are_a_few_tokens_to_everything():
    result = many_drops()
    segments = result_segments(result)
    narrow, wide = zoom_limits(segments, [result.context_limit])
    assert narrow == MIN_ZOOM_TOKENS
    assert wide >= max(s.x1 for s in segments) and wide >= result.context_limit


@pytest.mark.parametrize("name", ["demo.result.json", "rag_tight.result.json", "trip_plan_pin_and_fold.result.json",
                                  "trip_plan_summarise_span.result.json", "demo.baseline.json"])
def test_composition_adds_up_to_the_window_and_the_allowance(name):
    result = load_result(FIXTURES / name)
    rows = composition(result)
    assert sum(r.tokens for r in rows) == result.context_limit
    assert math.isclose(sum(r.of_window for r in rows), 1.0)
    assert math.isclose(sum(r.of_allowance for r in rows if r.of_allowance is not None), 1.0)
    sections = [r for r in rows if r.kind == "section"]
    assert {r.key: r.tokens for r in sections if r.tokens} == {k: v for k, v in
                                                                result.sent_tokens_by_section().items() if v}
    assert sum(r.not_sent_tokens for r in sections) == sum(e.tokens for e in result.trace
                                                           if e.decision in ("dropped", "summarised"))


def test_plan_sections_show_share_allowance_and_decisions():
    result = load_result(FIXTURES / "trip_plan_drop_oldest.result.json")
    recent = section_figures(result)["recent"]
    assert (recent.share, recent.allowance, recent.compaction) == (0.85, 214, "drop-oldest")
    assert (recent.pinned, recent.kept, recent.evicted, recent.summarised) == (1, 15, 4, 0)
    assert recent.describe() == "share 85%, allowance 214, drop-oldest; pinned 1, kept 15, evicted 4, summarised 0"
    summary = section_figures(load_result(FIXTURES / "trip_plan_summarise_span.result.json"))["recent"]
    assert summary.summarised == 9


def test_percent_never_shows_a_nonzero_share_as_zero():
    assert percent(0.0002) == "<0.1%" and percent(0.0) == "0.0%" and percent(0.25) == "25.0%"
    assert percent(198877 / 198912) == ">99.9%" and percent(1.0) == "100.0%" and percent(0.999) == "99.9%"
    assert percent(0.9999999999999999) == "100.0%"  # a total summed from shares, 1 within float error


# ---- the palette: distinct for everyone, on light and dark


def _linear(hex_colour: str) -> tuple[float, float, float]:
    def chan(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return tuple(chan(int(hex_colour[i:i + 2], 16)) for i in (1, 3, 5))  # type: ignore[return-value]


# Viénot, Brettel & Mollon (1999): dichromat simulation in linear RGB
CVD = {
    "normal": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "protan": ((0.11238, 0.88762, 0.0), (0.11238, 0.88762, 0.0), (0.00401, -0.00401, 1.0)),
    "deutan": ((0.29275, 0.70725, 0.0), (0.29275, 0.70725, 0.0), (-0.02234, 0.02234, 1.0)),
}


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    r, g, b = rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _seen(hex_colour: str, kind: str) -> tuple[float, float, float]:
    rgb = _linear(hex_colour)
    m = CVD[kind]
    return _lab(tuple(max(0.0, min(1.0, sum(m[i][j] * rgb[j] for j in range(3)))) for i in range(3)))


@pytest.mark.parametrize("kind", list(CVD))
def test_section_colours_stay_apart_for_colour_blind_readers(kind):
    """Every pair of sections that can share a bar differs by a visible amount (CIE76 distance) as a
    protanope and a deuteranope see it: the known sections among themselves, a plan's first sections
    among themselves."""
    for group in (list(SECTION_COLOURS.values()), list(FALLBACK_COLOURS[:4])):
        for n, a in enumerate(group):
            for b in group[n + 1:]:
                assert math.dist(_seen(a, kind), _seen(b, kind)) >= 8, (kind, a, b)


def test_a_plans_sections_get_different_colours_and_keep_them():
    palette = SectionPalette()
    colours = palette.colours(["system", "recent", "question", "history"])
    assert len(set(colours.values())) == 4 and colours["history"] == SECTION_COLOURS["history"]
    assert palette.colour("recent") == colours["recent"]
    assert set(RESERVE_COLOURS) == {"free", "margin", "reserve", "required"}
