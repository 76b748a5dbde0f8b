"""Background jobs where only the newest call matters (a replay, a recount, a re-assembly)."""
from __future__ import annotations

import logging
import threading
from typing import Callable

from PySide6.QtCore import QObject, QThread, Signal

log = logging.getLogger("inspector")


class LatestJobThread(QThread):
    """Runs jobs one at a time off the GUI thread; a job submitted while another waits replaces it, so
    the newest request always runs next and a burst of edits costs one run, not one per edit.

    ``done(generation, value)`` reports what a job returned; a job is called with its generation.
    """

    done = Signal(int, object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._job: tuple[int, object] | None = None
        self._stopping = False
        self.latest = 0

    def submit(self, generation: int, job) -> None:
        with self._cond:
            self._job = (generation, job)
            self.latest = generation
            self._cond.notify()
        if not self.isRunning():
            self.start()

    def is_stale(self, generation: int) -> bool:
        """A newer job was submitted after ``generation`` (a long job checks this to stop early)."""
        return generation != self.latest or self._stopping

    def run(self) -> None:
        while True:
            with self._cond:
                while self._job is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                generation, job = self._job
                self._job = None
            try:
                value = job(generation)
            except Exception as exc:  # jobs report their own errors; this is a bug, kept off the person's screen
                log.exception("background job %d", generation)
                value = exc
            self.done.emit(generation, value)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._job = None
            self._cond.notify()
        self.wait()


class LatestJob(QObject):
    """One kind of background job (a recount, a re-assembly): runs off the GUI thread, newest call
    first, and reports only the newest call's value (``finished``); an older one still running is
    superseded. A job that raises reports the exception as its value (it is logged too)."""

    finished = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread = LatestJobThread(self)
        self._thread.done.connect(self._done)
        self._submitted = 0
        self._received = 0

    def submit(self, job: Callable[[], object]) -> None:
        self._submitted += 1
        self._thread.submit(self._submitted, lambda _generation: job())

    def _done(self, generation: int, value: object) -> None:
        if generation != self._submitted:
            return
        self._received = generation
        self.finished.emit(value)

    def is_idle(self) -> bool:
        return self._received == self._submitted

    def stop(self) -> None:
        self._received = self._submitted
        self._thread.stop()
