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
