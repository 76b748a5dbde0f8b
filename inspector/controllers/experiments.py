"""The Experiments pane's work: an answers file opened (read and graded in a worker), a cell picked (the
window selects that variant's request and the pane shows the answer), a live experiment run in a
worker with progress and cancel. Answers files are detected by content, not by name."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

import core

from ..document.experiments import ExperimentView, variant_label
from ..workers.experiments import AnswersThread, ExperimentThread

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class ExperimentsController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.view: ExperimentView | None = None
        self._threads: list[AnswersThread] = []
        self.run_thread: ExperimentThread | None = None
        pane = window.experiments_pane
        pane.cellPicked.connect(self.pick)
        pane.runRequested.connect(self.run_dialog)
        pane.cancelRequested.connect(self.cancel)

    # ---- an answers file

    def files_opened(self, paths: list[str]) -> None:
        for path in paths:
            if core.sniff_answers(path):
                self.open_answers(str(Path(path).expanduser().resolve()))

    def open_answers(self, path: str) -> None:
        thread = AnswersThread(path, self)
        thread.loaded.connect(self._loaded)
        thread.finished.connect(lambda t=thread: self._threads.remove(t) if t in self._threads else None)
        self._threads.append(thread)
        thread.start()

    def _loaded(self, path: str, view: ExperimentView | None, error: str) -> None:
        if view is None:
            self.window.report("error", error)
            return
        self.view = view
        self.window.show_experiment(view)
        if view.problem:
            self.window.report("warning", f"{Path(path).name}: not graded: {view.problem}")

    def pick(self, variant: str, seed: int) -> None:
        view = self.view
        if view is None:
            return
        label = variant_label(view.path, variant)
        row = next((r for r in self.window.request_model.rows() if r.source == view.path and r.label == label), None)
        if row is not None and row is not self.window.current_row:
            self.window.select_row(row, origin="experiment")
        self.window.experiments_pane.show_answer(variant, seed)

    # ---- a live experiment

    def run_dialog(self) -> None:
        from ..panes.experimentdialog import ExperimentDialog

        w = self.window
        row = w.current_row
        request = row.request if row is not None else None
        if request is None or row.plan_request is not None:
            w.report("warning", "Select a request (or a recorded result that carries its request) to experiment on")
            return
        default = str(Path(row.source).with_suffix("").with_suffix("")) + ".answers.jsonl"
        dialog = ExperimentDialog(row.label, default, w)
        if not dialog.exec():
            return
        self.start(request, dialog.values())

    def start(self, request: core.Request, values: dict) -> bool:
        """Build the experiment (a bad value is reported, nothing is sent) and run it in a worker."""
        w = self.window
        if self.run_thread is not None:
            w.report("warning", "An experiment is already running")
            return False
        if w.counter is None:
            w.report("error", "No token counter yet; wait for it or pick one")
            return False
        try:
            endpoint = core.Endpoint(values["endpoint"], values["model"], api=values["api"],
                                     api_key_env=values.get("api_key_env"), timeout=values.get("timeout", 120.0))
            experiment = core.Experiment(subject=core.Subject(request=request, relevant=values.get("relevant")),
                                         endpoint=endpoint, variants=list(values["variants"]),
                                         seeds=list(range(1, int(values["seeds"]) + 1)))
        except (ValueError, core.ContextInspectorError) as exc:
            w.report("error", f"Experiment not started: {exc}")
            return False
        if not values.get("model"):
            w.report("error", "Experiment not started: name the model")
            return False
        thread = ExperimentThread(experiment, w.counter, values["output"], w.counter_cache.lock, self)
        thread.progress.connect(w.experiments_pane.show_progress)
        thread.done.connect(self._run_done)
        self.run_thread = thread
        w.experiments_pane.show_progress(0, len(experiment.variants) * len(experiment.seeds), "starting")
        w.show_experiments_dock()
        thread.start()
        return True

    def cancel(self) -> None:
        if self.run_thread is not None:
            self.run_thread.cancel()

    def _run_done(self, output: str, error: str) -> None:
        thread, self.run_thread = self.run_thread, None
        if thread is not None:
            thread.wait()
        self.window.experiments_pane.run_finished()
        if error:
            self.window.report("error", f"Experiment stopped: {error}")
        if Path(output).is_file() and core.sniff_answers(output):
            self.window.open_files([output])

    def is_idle(self) -> bool:
        return self.run_thread is None and not self._threads

    def wait(self) -> None:
        if self.run_thread is not None:
            self.run_thread.cancel()
            self.run_thread.wait()
        for thread in list(self._threads):
            thread.wait()
