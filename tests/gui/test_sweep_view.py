"""The sweep view: a SWEEP.json opened like any file shows its settings, histograms and buckets' requests."""
from __future__ import annotations

import json
import shutil

import core
from core.sweep import settings_from


def _sweep(tmp_path, fixtures_dir):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(fixtures_dir / "recorded.results.jsonl", corpus)
    shutil.copy(fixtures_dir / "demo.request.json", corpus)
    output = tmp_path / "SWEEP.json"
    sweep = core.run_sweep([str(corpus)], settings_from("700,recorded", None, None), output=output, workers=1)
    output.write_text(json.dumps(sweep, indent=1), encoding="utf-8")
    return output, sweep


def test_a_sweep_opens_in_its_view_and_a_bucket_lists_its_requests(open_and_wait, qtbot, tmp_path, fixtures_dir):
    output, sweep = _sweep(tmp_path, fixtures_dir)
    window = open_and_wait(output)
    pane = window.sweep_pane
    assert window.sweep_dock.isVisible() and window.request_model.rowCount() == 0  # not read as requests
    assert pane.table.rowCount() == 2
    assert pane.table.item(0, 0).text() == "limit 700" and pane.table.item(1, 0).text() == "recorded limit"
    assert pane.table.item(0, 1).text() == str(sweep["settings"][0]["requests"])
    window.resize(1280, 800)
    window.sweep_dock.setMinimumHeight(360)
    # the fullest input-token bucket of the tight setting: its requests are listed
    buckets = sweep["settings"][0]["histograms"]["input_tokens"]
    fullest = max(range(len(buckets)), key=lambda i: buckets[i]["count"])
    histogram = pane.histograms["input_tokens"]
    b = buckets[fullest]
    assert histogram.bucket_at((b["lo"] + b["hi"]) / 2) == fullest
    histogram.bucketPicked.emit(fullest)
    qtbot.waitUntil(lambda: pane.members.count() == b["count"], timeout=180000)
    window.grab().save("/tmp/i19-sweep-view.png")
    # a request of the bucket opens as usual, replayed under that setting
    pane.members.itemActivated.emit(pane.members.item(0))
    qtbot.waitUntil(lambda: window.current_row is not None and window.replay_outcome is not None, timeout=180000)
    assert window.replay_panel.limit.value() == 700
    assert window.replay_outcome.result.context_limit == 700
    window.grab().save("/tmp/i19-sweep-opened.png")


def test_a_kept_items_lost_bucket_lists_the_requests_that_lose(open_and_wait, qtbot, tmp_path, fixtures_dir):
    output, sweep = _sweep(tmp_path, fixtures_dir)
    window = open_and_wait(output)
    buckets = sweep["settings"][0]["histograms"]["kept_items_lost"]
    losing = next(i for i, b in enumerate(buckets) if b["lo"] > 0 and b["count"])
    window.sweep_pane.histograms["kept_items_lost"].bucketPicked.emit(losing)
    qtbot.waitUntil(lambda: window.sweep_pane.members.count() == buckets[losing]["count"], timeout=180000)
    assert "kept items lost" in window.sweep_pane.members_caption.text()
