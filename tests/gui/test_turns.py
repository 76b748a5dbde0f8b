"""``in_a_later_turn``: a step put off with it runs after the timers already due, so a chain of steps lets
the event loop breathe between them (``QTimer.singleShot(0, ...)`` is a posted event and does not)."""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from inspector.turns import in_a_later_turn


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _ticks_between_steps(qtbot, later) -> list[int]:
    """A 1 ms heartbeat, and three steps each busy for 5 ms and putting off the next with ``later``: how many
    heartbeat ticks came between each step and the next."""
    ticks = [0]
    seen: list[int] = []
    heartbeat = QTimer()
    heartbeat.setInterval(1)
    heartbeat.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))

    def step() -> None:
        seen.append(ticks[0])
        _busy(0.005)
        if len(seen) < 3:
            later(step)

    heartbeat.start()
    try:
        later(step)
        qtbot.waitUntil(lambda: len(seen) == 3, timeout=10000)
    finally:
        heartbeat.stop()
    return [b - a for a, b in zip(seen, seen[1:])]


def test_the_timers_due_fire_between_two_steps(qtbot):
    assert all(n >= 1 for n in _ticks_between_steps(qtbot, in_a_later_turn))


def test_a_step_whose_object_is_deleted_meanwhile_does_not_run(qtbot):
    from PySide6.QtCore import QObject

    ran: list[str] = []
    kept, gone = QObject(), QObject()
    in_a_later_turn(lambda: ran.append("kept"), kept)
    in_a_later_turn(lambda: ran.append("gone"), gone)
    gone.deleteLater()
    qtbot.waitUntil(lambda: ran == ["kept"], timeout=5000)
    qtbot.wait(20)
    assert ran == ["kept"]


def test_steps_put_off_together_are_taken_a_slice_at_a_time(qtbot):
    """Ten steps put off at once (as a burst of batches that came while the window waited): each turn takes
    them until ``SLICE_S`` has passed, so the heartbeat ticks between every step and the one two after it
    (each step is busy longer than half a slice), and they run in the order they were put off."""
    from inspector import turns

    ticks = [0]
    seen: list[tuple[int, int]] = []
    heartbeat = QTimer()
    heartbeat.setInterval(1)
    heartbeat.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))

    def step(i: int) -> None:
        seen.append((i, ticks[0]))
        _busy(turns.SLICE_S * 0.6)

    heartbeat.start()
    try:
        for i in range(10):
            in_a_later_turn(lambda i=i: step(i))
        assert turns.pending_steps() == 10
        qtbot.waitUntil(lambda: len(seen) == 10, timeout=10000)
    finally:
        heartbeat.stop()
    assert [i for i, _ in seen] == list(range(10))
    assert all(b[1] > a[1] for a, b in zip(seen, seen[2:])), seen
    assert turns.pending_steps() == 0


def test_a_step_that_fails_is_reported_and_the_queue_goes_on(qtbot, monkeypatch):
    import sys

    reported: list[str] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, value, trace: reported.append(f"{kind.__name__}: {value}"))
    ran: list[int] = []
    in_a_later_turn(lambda: ran.append(1))
    in_a_later_turn(lambda: 1 / 0)
    in_a_later_turn(lambda: ran.append(3))
    qtbot.waitUntil(lambda: ran == [1, 3], timeout=5000)
    assert reported == ["ZeroDivisionError: division by zero"]


def test_a_step_put_off_during_a_turn_waits_for_the_next_and_a_deleted_context_is_skipped_mid_slice(qtbot):
    """A short step puts off another while the turn still has time left: it runs in a later turn, after the steps
    already waiting; a step whose object was deleted in the middle of the queue is skipped, the others run."""
    from PySide6.QtCore import QObject

    from inspector import turns

    ran: list[tuple[str, int]] = []  # (step, the turn it ran in)
    gone = QObject()

    def note(name: str) -> None:
        ran.append((name, turns._paced.turn))

    def first() -> None:
        note("first")
        in_a_later_turn(lambda: note("put off by first"))

    in_a_later_turn(first)
    in_a_later_turn(lambda: note("gone"), gone)
    in_a_later_turn(lambda: note("second"))
    gone.deleteLater()
    _delete_now()
    qtbot.waitUntil(lambda: len(ran) == 3, timeout=5000)
    qtbot.wait(20)
    assert [name for name, _ in ran] == ["first", "second", "put off by first"]
    assert ran[0][1] == ran[1][1] < ran[2][1]  # the first two in one turn (short steps), the one put off in a later


def _delete_now() -> None:
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_a_step_that_runs_an_event_loop_of_its_own_lets_the_others_run_in_it(qtbot):
    """As separate timers would: a step that opens a dialog (an event loop of its own) does not hold the queue."""
    from PySide6.QtCore import QEventLoop

    ran: list[str] = []

    def modal() -> None:
        ran.append("modal start")
        loop = QEventLoop()
        QTimer.singleShot(100, loop.quit)
        loop.exec()
        ran.append("modal end")

    in_a_later_turn(modal)
    in_a_later_turn(lambda: ran.append("other"))
    qtbot.waitUntil(lambda: "modal end" in ran, timeout=5000)
    assert ran == ["modal start", "other", "modal end"]
