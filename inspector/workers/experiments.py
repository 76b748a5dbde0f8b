"""Experiments off the GUI thread: reading and grading an answers file, and running a live experiment
(every answer written as it comes, progress reported, cancel honoured between and during calls)."""
from __future__ import annotations

import threading

from PySide6.QtCore import QThread, Signal

import core

from ..document.experiments import experiment_view
from .failures import failure_text


class AnswersThread(QThread):
    """Reads and grades one answers file; ``loaded(path, view or None, error or "")``."""

    loaded = Signal(str, object, str)

    def __init__(self, path: str, parent=None) -> None:
        super().__init__(parent)
        self.path = path

    def run(self) -> None:
        try:
            self.loaded.emit(self.path, experiment_view(self.path), "")
        except Exception as exc:
            self.loaded.emit(self.path, None, failure_text(exc, f"{self.path}: cannot be read", "reading answers %s",
                                                           self.path))


class ExperimentThread(QThread):
    """Runs ``core.run_experiment``; ``progress(done, total, what)`` after each answer,
    ``done(output, error or "")`` at the end (cancelled: error says so; the file keeps what was recorded)."""

    progress = Signal(int, int, str)
    done = Signal(str, str)

    def __init__(self, experiment: core.Experiment, counter: core.TokenCounter, output: str, lock,
                 parent=None) -> None:
        super().__init__(parent)
        self.experiment = experiment
        self.counter = counter
        self.output = output
        self.lock = lock
        self.cancel_event = threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    def run(self) -> None:
        try:
            with self.lock:  # the counter is shared with the other workers: held while assembling only
                results = core.build_experiment(self.experiment, self.counter)
            core.run_experiment(self.experiment, self.counter, self.output, results=results,
                                progress=lambda d, t, w: self.progress.emit(d, t, w), cancel=self.cancel_event)
        except Exception as exc:
            self.done.emit(self.output, failure_text(exc, "the experiment failed", "running an experiment"))
        else:
            self.done.emit(self.output, "")
