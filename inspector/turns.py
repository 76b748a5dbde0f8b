"""Work put off to a later turn of the event loop, so what is waiting there (timers, input, the repaint the
work before asked for) runs first, and paced: one queue of such steps, taken a few milliseconds at a time.

``QTimer.singleShot(0, fn)`` is not a timer: Qt delivers it as a posted event, in the same pass over posted
events as the ones already queued (a batch of rows, the window's repaint) and as any that pass posts, so a
chain of zero-delay steps is still one burst in which no timer fires (measured here: two 40 ms steps chained
that way kept a 10 ms heartbeat away for 82 ms; one millisecond apart, for 48). A timer of one millisecond
is handled with the other timers, after the pending events.

One timer each is not enough either: timers that came due during a long burst all fire in the same pass, and
signals queued from a thread meanwhile (ten batches of rows while the window waited for a core) are all
delivered in one pass of posted events. So the steps wait in one queue, in the order they were put off, and
each turn of the event loop takes those put off before it began until ``SLICE_S`` has passed (at least one),
then leaves the rest to the next turn: whatever else is waiting (input, painting, other timers) runs between.
"""
from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, QTimer
from shiboken6 import isValid

LATER_MS = 1
SLICE_S = 0.008  # the steps one turn takes, by the wall clock (a step is never cut short)


class _Paced:
    """The queue of steps put off (``in_a_later_turn``): one per application, on its thread."""

    def __init__(self, app: QCoreApplication) -> None:
        self.app = app
        self.steps: deque[tuple[Callable[[], object], QObject | None, int]] = deque()  # (step, context, turn put off)
        self.turn = 0  # turns begun
        self.timer = QTimer()
        self.timer.setSingleShot(True)
        self.timer.setInterval(LATER_MS)
        self.timer.timeout.connect(self.run)

    def add(self, fn: Callable[[], object], context: QObject | None) -> None:
        self.steps.append((fn, context, self.turn))
        if not self.timer.isActive():
            self.timer.start()

    def run(self) -> None:
        self.turn += 1
        now = self.turn  # (a step put off during this turn is for a later one)
        end = time.perf_counter() + SLICE_S
        steps = self.steps
        while steps and steps[0][2] < now:
            fn, context, _ = steps.popleft()
            if steps:  # armed before the step: one that runs an event loop of its own (a dialog) lets the rest
                self.timer.start()  # run in it, as separate timers would
            if context is None or isValid(context):  # (not if what it works on was deleted meanwhile)
                try:
                    fn()
                except Exception:  # as a slot's: to the application's hook, and the queue goes on
                    sys.excepthook(*sys.exc_info())
            if time.perf_counter() >= end:
                break
        if steps and not self.timer.isActive():
            self.timer.start()


_paced: _Paced | None = None


def in_a_later_turn(fn: Callable[[], object], context: QObject | None = None) -> None:
    """Call ``fn`` on the GUI thread after the event loop has handled what is pending now, after every step
    put off before it; not at all if ``context`` (the object ``fn`` works on) is deleted meanwhile (a window
    closed in between)."""
    global _paced
    app = QCoreApplication.instance()
    if app is None or threading.current_thread() is not threading.main_thread():
        # (no event loop of ours to pace: as Qt's own single shot, in the context's thread)
        if context is None:
            QTimer.singleShot(LATER_MS, fn)
        else:
            QTimer.singleShot(LATER_MS, context, fn)
        return
    if _paced is None or _paced.app is not app or not isValid(_paced.timer):
        _paced = _Paced(app)
    _paced.add(fn, context)


def pending_steps() -> int:
    """How many steps put off are still to run (0 without an application)."""
    return len(_paced.steps) if _paced is not None and _paced.app is QCoreApplication.instance() else 0
