"""The Experiments pane: an answers file opened offline (detected by content), the variants-by-seeds
grid of grades, a click showing that variant's request and the answer with its rule, the position
curve, and a live experiment run off the GUI thread with progress and cancel."""
from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model_server import FakeModelServer  # noqa: E402

import core  # noqa: E402
from core.cli import main  # noqa: E402

RULES = {"must_cite_one_of": ["rb-disk-full"], "must_contain": ["logrotate"]}


def first_passage(body):
    user = next(m["content"] for m in body["messages"] if m["role"] == "user" and "<evidence" in (m["content"] or ""))
    return user.split('<evidence id="')[1].split('"')[0]


@pytest.fixture
def answers(tmp_path, fixtures_dir):
    """A positions experiment recorded from a fake model that answers right only when the passage is first."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    out = tmp_path / "positions.log"  # any name: the file is detected by its content
    with FakeModelServer(lambda b: "logrotate -f (rb-disk-full)" if first_passage(b) == "rb-disk-full" else "?") as s:
        assert main(["experiment", str(fixtures_dir / "demo.request.json"), "--endpoint", s.url, "--model", s.model,
                     "--variants", "positions", "--seeds", "2", "--context-limit", "4000", "--rules", str(rules),
                     "-o", str(out)]) == 0
    return out


def test_an_answers_file_fills_the_grid_and_a_click_shows_the_request_and_the_answer(qtbot, window, answers):
    window.open_files([str(answers)])
    qtbot.waitUntil(lambda: window.experiments_pane.view is not None and window.is_idle(), timeout=180000)
    pane = window.experiments_pane
    assert window.experiments_dock.isVisible()
    grid = pane.grid
    assert grid.rowCount() == 6 and grid.columnCount() == 2 + 3
    assert [grid.verticalHeaderItem(r).text() for r in range(6)] == [f"position={k}" for k in range(1, 7)]
    assert [grid.item(0, c).text() for c in range(5)] == ["✓", "✓", "2", "0", "0"]
    assert [grid.item(3, c).text() for c in range(5)] == ["✕", "✕", "0", "2", "0"]
    assert "must_cite_one_of" in grid.item(3, 0).toolTip()
    # the variants' requests are rows of the list, like recorded results
    labels = [r.label for r in window.request_model.rows()]
    assert labels == [f"positions.log · position={k}" for k in range(1, 7)]
    pane.select("position=4", 2)
    qtbot.waitUntil(lambda: window.current_row is not None and window.current_row.label.endswith("position=4"),
                    timeout=180000)
    shown = window.current_row.result
    assert shown.kept_evidence.index("rb-disk-full") == 3  # the bar, tree and request show that variant's request
    assert pane.answer_title.text().startswith("position=4, seed 2: fail")
    assert "must_cite_one_of" in pane.answer_title.text()
    assert pane.answer_text.toPlainText() == "?"
    assert "server 321" in pane.provenance.text()
    # the position curve
    assert pane.chart.isVisible()
    assert [(p.position, p.n, p.passes) for p in pane.chart.points] == [(1, 2, 2)] + [(k, 2, 0) for k in range(2, 7)]
    assert "not a measure of answer quality" in pane.chart.caption.text()
    window.resize(1280, 800)
    window.grab().save("/tmp/i18-experiments-window.png")


def test_a_live_experiment_runs_off_the_gui_thread_with_progress_and_can_be_cancelled(qtbot, window, tmp_path,
                                                                                        fixtures_dir):
    request = core.load_request(fixtures_dir / "demo.request.json")
    release = threading.Event()
    seen: list[tuple[int, int, str]] = []
    window.experiments_pane.progress.valueChanged.connect(lambda v: seen.append(v))
    with FakeModelServer(lambda b: (release.wait(10), "logrotate rb-disk-full")[1]) as server:
        out = tmp_path / "live.answers.jsonl"
        assert window.experiments.start(request, {"endpoint": server.url, "model": server.model, "api": "openai",
                                                  "variants": ["default", "baseline"], "seeds": 2,
                                                  "output": str(out)})
        assert window.experiments_pane.cancel_button.isVisible()  # the GUI thread is free while the model works
        release.set()
        qtbot.waitUntil(lambda: window.experiments.run_thread is None, timeout=180000)
        qtbot.waitUntil(lambda: window.experiments_pane.view is not None and window.is_idle(), timeout=180000)
    assert len(core.load_answers(out).answers) == 4
    assert max(seen) == 4 and not window.experiments_pane.cancel_button.isVisible()

    stuck = threading.Event()
    with FakeModelServer(lambda b: (stuck.wait(10), "late")[1]) as server:
        out2 = tmp_path / "cancelled.answers.jsonl"
        assert window.experiments.start(request, {"endpoint": server.url, "model": server.model, "api": "openai",
                                                  "variants": ["default"], "seeds": 3, "output": str(out2)})
        qtbot.waitUntil(lambda: any(r["body"] for r in server.received), timeout=180000)
        window.experiments_pane.cancel_button.click()
        qtbot.waitUntil(lambda: window.experiments.run_thread is None, timeout=180000)
        stuck.set()
    assert any("cancelled" in text for level, text in window.messages if level == "error")
    assert core.load_answers(out2).answers == []  # header and variants written, no answer


def test_a_bad_endpoint_is_reported_and_nothing_runs(window, fixtures_dir, tmp_path):
    request = core.load_request(fixtures_dir / "demo.request.json")
    assert not window.experiments.start(request, {"endpoint": "ftp://x", "model": "m", "api": "openai",
                                                  "variants": ["default"], "seeds": 1,
                                                  "output": str(tmp_path / "x.jsonl")})
    assert window.messages[-1][0] == "error" and "http(s) URL" in window.messages[-1][1]
    assert window.experiments.run_thread is None
