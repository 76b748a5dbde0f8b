"""What the window's controllers do, asked of the window by name (by its menus, the command line, tests and
other controllers): each passes the ask to the controller that does it, so the window itself keeps only its
layout, its selection and the connections between its panes."""
from __future__ import annotations

import core


class ControllerCalls:
    """Mixed into ``MainWindow``: the controllers it holds (``counters``, ``opener``, ``experiments``,
    ``saver``, ``imports``, ``replaying``) asked by name."""

    @property
    def counter(self) -> core.TokenCounter | None:
        return self.counters.counter

    @property
    def counter_spec(self) -> str:
        return self.counters.spec

    def set_counter_spec(self, spec: str) -> None:
        self.counters.set_spec(spec)

    def open_files(self, paths: list[str]) -> None:
        self.opener.open_files(paths)
        self.experiments.files_opened(paths)  # an answers file also fills the Experiments pane

    def show_experiment(self, view) -> None:
        self.experiments_pane.show_view(view)
        self.show_experiments_dock()

    def show_experiments_dock(self) -> None:
        self.experiments_dock.show()
        self.experiments_dock.raise_()

    def open_demo(self) -> None:
        self.opener.open_demo()

    def reload(self) -> None:
        self.opener.reload()

    def close_current_file(self) -> None:
        self.opener.close_current_file()

    def cancel_loading(self) -> None:
        self.opener.cancel()

    def save_result_to(self, path: str) -> bool:
        return self.saver.save_result_to(path)

    def save_replayed_to(self, path: str) -> bool:
        return self.saver.save_replayed_to(path)

    def export_dialog(self):
        return self.saver.export_dialog()

    def export_to(self, path: str, kind: str, *, redact: bool = False) -> bool:
        return self.saver.export_to(path, kind, redact=redact)

    def context_limit_for(self, model: str) -> int | None:
        return self.imports.context_limit_for(model)

    def set_context_limit(self, model: str, limit: int) -> None:
        self.imports.set_context_limit(model, limit)

    def reassemble_current(self) -> None:
        self.imports.reassemble_current()

    def reset_replay(self) -> None:
        self.replaying.reset()

    @property
    def replay_outcome(self):
        """The replay shown now (None while the recording is)."""
        return self.replaying.outcome if self.replaying.view is not None else None
