"""Work put off to a later turn of the event loop, so what is waiting there (timers, input, the repaint the
work before asked for) runs first.

``QTimer.singleShot(0, fn)`` is not a timer: Qt delivers it as a posted event, in the same pass over posted
events as the ones already queued (a batch of rows, the window's repaint) and as any that pass posts, so a
chain of zero-delay steps is still one burst in which no timer fires (measured here: two 40 ms steps chained
that way kept a 10 ms heartbeat away for 82 ms; one millisecond apart, for 48). A timer of one millisecond
is handled with the other timers, after the pending events.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, QTimer

LATER_MS = 1


def in_a_later_turn(fn: Callable[[], object], context: QObject | None = None) -> None:
    """Call ``fn`` on the GUI thread after the event loop has handled what is pending now; not at all if
    ``context`` (the object ``fn`` works on) is deleted meanwhile (a window closed in between)."""
    if context is None:
        QTimer.singleShot(LATER_MS, fn)
    else:
        QTimer.singleShot(LATER_MS, context, fn)
