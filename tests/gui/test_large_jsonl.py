"""A large JSONL loads off the GUI thread (its rows read in worker processes), in batches, with progress and a
working cancel. No timing is asserted: the event loop is shown to keep running (its heartbeat ticks while
rows are still being read); tests/benchmarks/bench_inspector.py measures how long its gaps are."""
from __future__ import annotations

import json
import time

import core

from PySide6.QtCore import QTimer
from inspector.models import ITEM_ID_ROLE


def _write_requests(path, count: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            request = {
                "id": f"req-{i:04d}",
                "instructions": "Answer from the passages. Cite the passage id.",
                "current": f"What is the status of service {i}?",
                "evidence": [{"id": f"p{i}-{k}", "source": f"docs/{k}.md",
                              "text": f"Service {i} note {k}. " * (4 + 6 * k), "score": 1 - k / 10}
                             for k in range(3)],
                "context_limit": 300, "max_new_tokens": 64, "margin": 8,
            }
            handle.write(json.dumps(request) + "\n")


class GapMeter:
    """Ticks every 10 ms on the GUI thread and records the longest time between two ticks."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = 0.0
        self.max_gap = 0.0
        self.ticks = 0
        self.during = None  # a condition: ticks while it holds are counted in ticks_during
        self.ticks_during = 0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.max_gap = max(self.max_gap, now - self.last)
        self.last = now
        self.ticks += 1
        if self.during is not None and self.during():
            self.ticks_during += 1

    def start(self) -> None:
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()


def test_thousand_requests_load_without_blocking_the_event_loop(window, qtbot, tmp_path, monkeypatch):
    from inspector.workers import jsonl, readpool

    read_here = []
    real_read = jsonl.read_pending
    monkeypatch.setattr(jsonl, "read_pending", lambda *a, **k: read_here.append(1) or real_read(*a, **k))
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 1000)
    meter = GapMeter()
    model = window.request_model
    meter.during = lambda: model.rowCount() == 1000 and any(model.row_at(i).pending for i in (0, 500, 999))
    meter.start()
    started = time.perf_counter()
    window.open_files([str(path)])
    qtbot.waitUntil(lambda: window.progress.isVisible(), timeout=180000)
    qtbot.waitUntil(lambda: window.request_model.rowCount() > 0, timeout=180000)
    first_rows = time.perf_counter() - started
    # the index lists every line at once, from its summary; each is read and assembled afterwards
    assert window.request_model.rowCount() == 1000
    assert window.request_model.row_at(999).label == "req-0999"
    qtbot.waitUntil(window.is_idle, timeout=180000)
    meter.stop()
    total = time.perf_counter() - started
    print(f"\n1000 requests: first rows after {first_rows * 1000:.0f} ms, all in {total:.1f} s; "
          f"longest event-loop gap {meter.max_gap * 1000:.0f} ms over {meter.ticks} ticks")
    assert window.request_model.rowCount() == 1000
    assert all(window.request_model.row_at(i).kind == "assembled" for i in range(0, 1000, 97))
    assert window.current_row is window.request_model.row_at(0)  # the first row was selected as it arrived
    assert not window.progress.isVisible()
    # read in worker processes, not in the window's process; its event loop ran while they read
    assert read_here == []
    (pool,) = readpool._pools.values()
    assert pool.spec == (window.counters.spec or core.DEFAULT_COUNTER)
    assert meter.ticks_during > 0


def test_when_the_worker_processes_break_the_rest_is_read_in_the_window_process(window, qtbot, tmp_path,
                                                                                monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    from inspector.workers import readpool

    def broken(future):
        raise BrokenProcessPool("a worker process died")

    monkeypatch.setattr(readpool.ReadPool, "rows", staticmethod(broken))
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 400)
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    assert model.rowCount() == 400 and all(model.row_at(i).kind == "assembled" for i in range(400))
    assert any(level == "warning" and "the worker processes stopped" in text for level, text in window.messages)


def test_cancel_keeps_what_was_read_and_a_selected_row_is_still_read(window, qtbot, tmp_path, counter):
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 1000)
    window.open_files([str(path)])
    model = window.request_model
    # the first row is read first (it is selected); cancel while the others are still being read
    qtbot.waitUntil(lambda: model.rowCount() > 0 and not model.row_at(0).pending, timeout=180000)
    assert window.cancel_button.isVisible() and window.act_cancel.isEnabled()
    window.cancel_button.click()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert model.rowCount() == 1000  # every line is listed from the index at once
    unread = [i for i in range(1000) if model.row_at(i).pending]
    assert 0 < len(unread) < 1000
    assert "Loading cancelled" in window.message_bar.message()
    assert f"{len(unread)} not read yet" in window.message_bar.message()
    assert not window.cancel_button.isVisible()
    pending = model.row_at(unread[-1])
    assert model.index(unread[-1], model.C_AUDIT).data() == "not read yet"
    window.select_row(pending)
    qtbot.waitUntil(lambda: not pending.pending and window.is_idle(), timeout=180000)
    assert pending.kind == "assembled" and window.current_row is pending
    assert window.tree_model.result is pending.result
    assert pending.result.request.id == pending.label


def test_a_recorded_result_read_in_a_worker_shows_its_full_detail(window, qtbot, tmp_path, fixtures_dir, counter,
                                                                   monkeypatch):
    """A large results JSONL is read in worker processes, which send the window each row's list values, findings
    and line bytes: selecting a row still shows its sections, its trace, its audit findings, its rendered request
    and its JSON, each the reference's (the file's line validated by core, audited by core.audit)."""
    from inspector.panes.detail import DetailTabs
    from inspector.workers import jsonl

    read_here = []
    real_read = jsonl.read_pending
    monkeypatch.setattr(jsonl, "read_pending", lambda *a, **k: read_here.append(1) or real_read(*a, **k))
    lines = [line for line in (fixtures_dir / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    copies = -(-(jsonl.POOL_ROWS + 40) // len(lines))
    path = tmp_path / "many.results.jsonl"
    path.write_text("\n".join(lines * copies) + "\n", encoding="utf-8")
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    assert model.rowCount() == len(lines) * copies
    assert read_here == []  # every row was read in the worker processes
    results = [core.parse_result(json.loads(line)) for line in lines]
    audits = [core.audit(r, counter) for r in results]
    # a row far from the first (read by a worker, not selected as it arrived), whose audit finds something
    k = next(i for i, found in enumerate(audits) if found)
    number = len(lines) * (copies - 1) + k
    row = model.row_at(number)
    assert row.kind == "result" and row.label == results[k].request_id
    assert "_line" in row.__dict__  # the worker sent its bytes: the result is validated when first shown
    assert model.index(number, model.C_AUDIT).data()  # listed from the worker's findings before it is shown
    window.select_row(row)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.current_row is row and row.result == results[k] and row.findings == audits[k]
    assert window.tree_model.result is row.result
    sections = {e.section for e in results[k].trace}
    assert set(window.tree_model.sections()) == sections
    shown = [window.tree_model.index(r, 0, window.tree_model.index(s, 0)).data(ITEM_ID_ROLE)
             for s in range(window.tree_model.rowCount())
             for r in range(window.tree_model.rowCount(window.tree_model.index(s, 0)))]
    assert sorted(shown, key=str) == sorted((e.id for e in results[k].trace), key=str)
    window.detail.setCurrentIndex(DetailTabs.AUDIT)
    findings = window.detail.audit.model
    assert [findings.finding_at(r) for r in range(findings.rowCount())] == audits[k]
    window.detail.setCurrentIndex(DetailTabs.REQUEST)
    qtbot.waitUntil(lambda: bool(window.detail.request.editor.toPlainText()), timeout=180000)
    expected = core.render_view(results[k], counter, findings=audits[k]).text
    assert window.detail.request.editor.toPlainText() == expected
    assert json.loads(window.detail.json.toPlainText()) == json.loads(results[k].to_json())
    window.resize(1280, 800)
    window.grab().save("/tmp/i17b-worker-row.png")


def test_a_large_file_is_indexed_in_parts_by_the_ready_worker_processes(window, qtbot, tmp_path, monkeypatch):
    """Where the worker processes are ready, a file of ``PARALLEL_INDEX_BYTES`` or more is indexed in parts side by
    side in them (``core.plan_parts``): the list is the one ``core.index_jsonl`` gives, every row then read."""
    from inspector.workers import jsonl, readpool

    readpool.warm_pool(window.counters.spec or core.DEFAULT_COUNTER).join(timeout=180)
    monkeypatch.setattr(jsonl, "PARALLEL_INDEX_BYTES", 1)
    here = []
    real_index = core.index_jsonl
    monkeypatch.setattr(jsonl.core, "index_jsonl", lambda *a, **k: here.append(1) or real_index(*a, **k))
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 300)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n  \n{broken\n" + json.dumps({"current": "no id", "context_limit": 300}) + "\n")
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    expected = real_index(path).rows
    assert here == []  # not indexed in the window's process
    assert model.rowCount() == len(expected) == 302
    assert [model.row_at(i).line for i in range(302)] == [s.line for s in expected] == list(range(1, 301)) + [303, 304]
    assert [model.row_at(i).label for i in range(300)] == [s.label for s in expected[:300]]
    assert model.row_at(300).kind == model.row_at(301).kind == "invalid"  # a broken line; a request without fields
    assert all(not model.row_at(i).pending for i in range(302))


def _die(source, part):
    """Stands in for ``index_part_rows`` in a worker process: the process dies (as if the OOM killer took it)."""
    import os

    os._exit(3)


def test_a_worker_that_dies_while_indexing_leaves_no_row_unread(window, qtbot, tmp_path, monkeypatch):
    """Its part is indexed here, the broken pool is given up (said once), and every row is still read. Before, the
    reading took the same broken pool and stopped with 299 rows pending (found by a review)."""
    from inspector.workers import jsonl, readpool

    readpool.warm_pool(window.counters.spec or core.DEFAULT_COUNTER).join(timeout=180)
    monkeypatch.setattr(jsonl, "PARALLEL_INDEX_BYTES", 1)
    monkeypatch.setattr(jsonl, "index_part_rows", _die)
    model = _every_row_read(window, qtbot, tmp_path)
    assert [model.row_at(i).label for i in range(300)] == [f"req-{i:04d}" for i in range(300)]
    assert any(level == "warning" and "the worker processes stopped" in text for level, text in window.messages)


def test_a_pool_broken_while_idle_still_lists_and_reads_a_large_file(window, qtbot, tmp_path, monkeypatch):
    """A ready pool whose worker was killed meanwhile: the file is indexed here and read by a new pool. Before, the
    file failed as "cannot be read (BrokenProcessPool ...)" with nothing listed (found by a review)."""
    import os
    import signal

    from inspector.workers import jsonl, readpool

    spec = window.counters.spec or core.DEFAULT_COUNTER
    readpool.warm_pool(spec).join(timeout=180)
    monkeypatch.setattr(jsonl, "PARALLEL_INDEX_BYTES", 1)
    pool = readpool.read_pool(spec)
    os.kill(next(iter(pool._executor._processes)), signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(pool._executor._broken), timeout=60000)
    _every_row_read(window, qtbot, tmp_path)


def _every_row_read(window, qtbot, tmp_path):
    """300 requests opened, the window left to finish: every row listed and read. The list model."""
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 300)
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    assert model.rowCount() == 300 and not any(model.row_at(i).pending for i in range(300))
    return model
