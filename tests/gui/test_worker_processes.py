"""Replays and what-if sweeps run in a worker process counting with the same counter (the GUI process's
interpreter stays free for the window), show exactly core's replay, and fall back to a thread here when
no worker can run them."""
from __future__ import annotations

import core
from core.replay import Edits, replay
from inspector.document.replay import ReplayTarget

DEMO = "demo.result.json"


def _replay_at(window, qtbot, limit: int) -> None:
    window.replay_panel.limit.slider.setValue(limit)
    qtbot.waitUntil(lambda: window.is_idle() and window.replay_outcome is not None
                    and window.replay_outcome.edits.context_limit == limit, timeout=60000)


def test_a_replay_runs_in_a_worker_process_and_shows_core_replay(open_and_wait, qtbot, fixtures_dir, counter,
                                                                 monkeypatch):
    here = []
    outcome, what_if = ReplayTarget.outcome, ReplayTarget.what_if
    monkeypatch.setattr(ReplayTarget, "outcome", lambda self, *a, **k: here.append("replay") or outcome(self, *a, **k))
    monkeypatch.setattr(ReplayTarget, "what_if", lambda self, *a, **k: here.append("sweep") or what_if(self, *a, **k))
    window = open_and_wait(fixtures_dir / DEMO)
    window.act_replay.trigger()
    qtbot.waitUntil(lambda: window.is_idle() and bool(window.replay_panel.whatif.points), timeout=180000)
    _replay_at(window, qtbot, 900)
    assert here == []  # neither ran in this process
    recorded = core.load_result(fixtures_dir / DEMO)
    expected = replay(recorded, edits=Edits(context_limit=900), counter=counter)
    shown = window.replay_outcome
    assert shown.error is None and shown.result.messages == expected.messages
    assert shown.result.trace == expected.trace and shown.result.input_tokens == expected.input_tokens


def test_without_worker_processes_the_replay_runs_here(open_and_wait, qtbot, fixtures_dir, counter, monkeypatch):
    from inspector.workers import readpool

    def no_processes(spec):
        raise OSError("no processes in this sandbox")

    monkeypatch.setattr(readpool, "replay_pool", no_processes)
    here = []
    outcome = ReplayTarget.outcome
    monkeypatch.setattr(ReplayTarget, "outcome", lambda self, *a, **k: here.append(1) or outcome(self, *a, **k))
    window = open_and_wait(fixtures_dir / DEMO)
    window.act_replay.trigger()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    _replay_at(window, qtbot, 900)
    assert here  # run in this process, in the replay thread
    expected = replay(core.load_result(fixtures_dir / DEMO), edits=Edits(context_limit=900), counter=counter)
    assert window.replay_outcome.result.trace == expected.trace


def test_reading_with_auto_and_replaying_with_the_embedded_counter_share_one_pool():
    """``auto`` counts our own files with the embedded counter: its rows' replays run in the pool that reads
    them, not in a second set of processes each building the same counter beside the first."""
    from inspector.workers import readpool

    try:
        reading = readpool.read_pool(core.AUTO)
        assert readpool.replay_pool(core.DEFAULT_COUNTER) is reading
        assert readpool.replay_pool(core.AUTO) is reading
    finally:
        readpool.shutdown_read_pools()


def test_the_app_starts_its_worker_processes_once_its_counter_is_built(qtbot, counter):
    """``MainWindow(warm_workers=True)`` (what the app opens) starts the pool for its counter as soon as the
    counter is built, so the first replay or large file does not wait seconds for processes to start."""
    from inspector.mainwindow import MainWindow
    from inspector.workers import readpool

    readpool.shutdown_read_pools()
    win = MainWindow(counter_spec=counter.name, warm_workers=True)
    qtbot.addWidget(win)
    try:
        qtbot.waitUntil(lambda: win.is_idle() and not win.counters.warming(), timeout=180000)
        pool = readpool._pools.get(readpool.CounterCache.built_as(counter.name))
        assert pool is not None
        assert len(pool._executor._processes) == pool.workers  # every worker process started
    finally:
        win.shutdown()
        readpool.shutdown_read_pools()


def test_a_pool_whose_processes_cannot_start_is_discarded_with_a_warning(caplog, counter, monkeypatch):
    from inspector.workers import readpool

    def no_processes(self, fn, *args):
        raise OSError("no processes in this sandbox")

    monkeypatch.setattr(readpool.ReadPool, "submit_call", no_processes)
    try:
        with caplog.at_level("WARNING", logger="inspector"):
            readpool.warm_pool(counter.name).join(timeout=180)
        assert readpool.CounterCache.built_as(counter.name) not in readpool._pools  # later work runs here
        assert any("did not start" in r.getMessage() and "no processes" in r.getMessage() for r in caplog.records)
    finally:
        readpool.shutdown_read_pools()
