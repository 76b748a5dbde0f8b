"""Runs replays and what-if sweeps of the selected row off the GUI thread, newest edit first: in a worker
process counting with the same counter (workers.readpool) where there is one, else in a thread here.

Edits arrive as fast as a slider moves. They are throttled (one replay per ``DEBOUNCE_MS`` while the
control keeps moving, and always one for the last value), each replay carries a generation number,
and a result older than the one shown is never shown: a burst of edits ends on the newest.
"""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer, Signal

import core
from core.replay import Edits

from ..document.reading import replay_outcome, what_if_points
from ..document.replay import ReplayOutcome, ReplayTarget
from .counters import shared_counter_cache
from .latest import LatestJobThread
from .readpool import in_worker

DEBOUNCE_MS = 120
SWEEP_DEBOUNCE_MS = 250


def _sweep_key(edits: Edits, counter: core.TokenCounter) -> tuple:
    """What a sweep depends on: every edit but the limit it sweeps, and the counter."""
    return (edits.max_new_tokens, edits.margin, edits.fill_order, tuple(sorted(edits.shares.items())),
            tuple(sorted(edits.pins.items())), counter.name, counter.identity.template_sha256)


class ReplayController(QObject):
    outcomeReady = Signal(object)  # ReplayOutcome of the current target, newer than the one shown
    sweepReady = Signal(object)  # list[SweepPoint] of the current target
    sweepStarted = Signal()

    def __init__(self, lock: threading.RLock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = lock
        self._target: ReplayTarget | None = None
        self._counter: core.TokenCounter | None = None
        self._replays = LatestJobThread(self)
        self._replays.done.connect(self._replayed)
        self._sweeps = LatestJobThread(self)
        self._sweeps.done.connect(self._swept)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._submit)
        self._sweep_timer = QTimer(self)
        self._sweep_timer.setSingleShot(True)
        self._sweep_timer.setInterval(SWEEP_DEBOUNCE_MS)
        self._sweep_timer.timeout.connect(self._submit_sweep)
        self._pending: Edits | None = None
        self._sweep_edits: Edits | None = None
        self._sweep_key: tuple | None = None
        self._generation = self._shown = self._received = 0
        self._sweep_generation = self._sweep_received = 0
        self.replays_run = 0  # replays that reached a worker (a burst of edits runs far fewer than it has)
        self.in_processes = True  # replays and sweeps run in worker processes (workers.readpool) when they can

    @property
    def target(self) -> ReplayTarget | None:
        return self._target

    @property
    def generation(self) -> int:
        return self._generation

    def set_target(self, target: ReplayTarget | None, counter: core.TokenCounter | None) -> None:
        """Replay another row (or none): whatever is still running for the previous one is ignored."""
        self._target = target
        self._counter = counter
        self._timer.stop()
        self._sweep_timer.stop()
        self._pending = self._sweep_edits = None
        self._sweep_key = None
        self.cancel()
        self._sweep_generation += 1
        self._sweep_received = self._sweep_generation

    def set_counter(self, counter: core.TokenCounter | None) -> None:
        self._counter = counter
        self._sweep_key = None

    def cancel(self) -> None:
        """Show no replay result that is still on its way (the view went back to the recording)."""
        self._timer.stop()
        self._pending = None
        self._generation += 1
        self._shown = self._received = self._generation

    def request(self, edits: Edits) -> None:
        """Replay under ``edits`` soon; edits that follow within the interval replace these."""
        self._pending = edits
        if not self._timer.isActive():
            self._timer.start()

    def _submit(self) -> None:
        target, counter, edits = self._target, self._counter, self._pending
        self._pending = None
        if target is None or counter is None or edits is None:
            return
        self._generation += 1
        lock = self._lock

        spec = self._spec_of(counter)

        def job(generation: int) -> ReplayOutcome:
            self.replays_run += 1
            return in_worker(spec, counter, replay_outcome, target, generation, edits,
                             fallback=lambda: target.outcome(generation, edits, counter, lock))

        self._replays.submit(self._generation, job)

    def _spec_of(self, counter: core.TokenCounter) -> str | None:
        """The spec a worker process builds the same counter from (None: the replay runs in a thread here)."""
        return shared_counter_cache().spec_of(counter) if self.in_processes else None

    def _replayed(self, generation: int, outcome: object) -> None:
        self._received = max(self._received, generation)
        if not isinstance(outcome, ReplayOutcome) or generation <= self._shown:
            return
        self._shown = generation
        self.outcomeReady.emit(outcome)

    # ---- what-if

    def request_sweep(self, edits: Edits) -> None:
        """Sweep the context limit under the other edits, unless the shown sweep already is that one."""
        if self._target is None or self._counter is None:
            return
        if _sweep_key(edits, self._counter) == self._sweep_key:
            return
        self._sweep_edits = edits
        self._sweep_timer.start()  # restarted by each edit: a sweep is many replays, worth waiting for

    def _submit_sweep(self) -> None:
        target, counter, edits = self._target, self._counter, self._sweep_edits
        if target is None or counter is None or edits is None:
            return
        self._sweep_key = _sweep_key(edits, counter)
        self._sweep_generation += 1
        lock, sweeps = self._lock, self._sweeps
        self.sweepStarted.emit()
        spec = self._spec_of(counter)
        self._sweeps.submit(self._sweep_generation, lambda g: in_worker(
            spec, counter, what_if_points, target, edits,
            fallback=lambda: target.what_if(edits, counter, lock, stale=lambda: sweeps.is_stale(g))))

    def _swept(self, generation: int, points: object) -> None:
        self._sweep_received = max(self._sweep_received, generation)
        if generation != self._sweep_generation or not isinstance(points, list):
            return
        self.sweepReady.emit(points)

    # ---- state

    def is_idle(self) -> bool:
        return (not self._timer.isActive() and not self._sweep_timer.isActive()
                and self._received >= self._generation and self._sweep_received >= self._sweep_generation)

    def shutdown(self) -> None:
        self._timer.stop()
        self._sweep_timer.stop()
        self._replays.stop()
        self._sweeps.stop()
