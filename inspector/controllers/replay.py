"""The replay of the selected recording: points the replay panel and the ``ReplayController`` at the row,
keeps the panel's edits across a reload, and turns each replayed result into the row the bar, the tree
and the detail tabs show (marked against the recording) until the edits are reset."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

import core
from core.replay import Edits

from ..document import Row
from ..document.replay import ReplayOutcome, ReplayTarget
from ..panes.replaypanel import outcome_summary
from ..turns import in_a_later_turn

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


def replay_note(row: Row, target: ReplayTarget) -> str:
    what = {"plan": "plan request", "rag": "RAG windows request", "request": "request"}.get(
        row.entry_kind or "", "recorded result")
    if row.result is None:
        return (f"{row.label}: the recording was rejected ({row.summary().removeprefix('rejected: ')}). "
                "Edit the limits to see what would fit.")
    source = "its plan request" if target.is_plan else "its request"
    return (f"Replaying {row.label} ({row.strategy}, from a {what}) from {source} with the current counter; "
            "the tree and the bars mark what changes against the recording.")


class ReplayWiring(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._key: tuple | None = None
        self._kept_edits: tuple[tuple | None, Edits] = (None, Edits())  # the last row's edits, by its key
        self.view: Row | None = None  # the replayed result shown in place of the recording
        self.outcome: ReplayOutcome | None = None
        self._due: list = []  # the rest of a replay's redraw, one step an event-loop turn (_show_next)
        self._stepping = False  # a _show_next is queued
        panel, controller = window.replay_panel, window.replay
        panel.editsChanged.connect(self.edits_changed)
        panel.resetRequested.connect(self.reset)
        panel.whatif.limitPicked.connect(panel.set_limit)
        window.replay_dock.visibilityChanged.connect(self._dock_shown)
        controller.outcomeReady.connect(self._on_replayed)
        controller.sweepReady.connect(self._on_sweep)
        controller.sweepStarted.connect(panel.whatif.set_computing)

    def _set_view(self, view: Row | None, outcome: ReplayOutcome | None) -> None:
        self.view, self.outcome = view, outcome
        self._due = []  # whoever sets the view redraws it
        self.window.replay_panel.set_replayed(view is not None)
        self.window.act_save_replayed.setEnabled(view is not None)

    def setup(self, row: Row | None) -> None:
        """Point the replay at ``row``: the panel shows its recorded values (or why it is read-only).
        The same recording read again (a reload, a new counter) keeps the edits the panel holds."""
        w = self.window
        panel, controller = w.replay_panel, w.replay
        if panel.base is not None and self._key is not None:
            self._kept_edits = (self._key, panel.edits())
        key = (row.source, row.index, row.strategy) if row is not None else None
        if key is not None:
            self._key = key
        self._set_view(None, None)
        if row is None:
            controller.set_target(None, w.counter)
            panel.set_read_only("Select a request or a recorded result to replay it under other limits.")
            return
        if row.imported is not None:
            controller.set_target(None, w.counter)
            panel.set_read_only(
                f"{row.label} is a provider's request: there is no assembly to replay. Re-assemble it "
                f"({w.act_reassemble.shortcut().toString()}) to see what the core assembler keeps under its "
                "context limit, then edit the limits here.")
            return
        try:
            target = ReplayTarget(row)
        except core.ContextInspectorError as exc:  # ReplayUnavailable: opens read-only
            controller.set_target(None, w.counter)
            panel.set_read_only(f"Read-only: {exc}.")
            return
        controller.set_target(target, w.counter)
        panel.load(target.base(), replay_note(row, target))
        kept_key, kept = self._kept_edits
        if kept_key == key and not kept.is_empty():
            panel.apply_edits(kept)
        self.edits_changed()

    def edits_changed(self) -> None:
        """The panel's controls moved (or the row or the counter changed): replay, or show the recording."""
        w = self.window
        panel, target = w.replay_panel, w.replay.target
        if target is None or w.counter is None:
            return
        edits = panel.edits()
        panel.whatif.set_edit_limit(panel.limit.value())
        if edits.is_empty() and not target.counter_differs(w.counter):
            w.replay.cancel()
            panel.show_summary("Showing the recording: no edits yet.")
            if self.view is not None:
                self._set_view(None, None)
                w.refresh_view()
        else:
            w.replay.request(edits)
        if w.replay_dock.isVisible():
            w.replay.request_sweep(edits)

    def _dock_shown(self, visible: bool) -> None:
        if visible and self.window.replay.target is not None:
            self.window.replay.request_sweep(self.window.replay_panel.edits())

    def _on_replayed(self, outcome: ReplayOutcome) -> None:
        w = self.window
        row, target = w.current_row, w.replay.target
        if row is None or target is None or target.row is not row:
            return
        if not outcome.ok:
            # shown in place; the last good view stays
            w.replay_panel.show_problem(outcome.error or "the replay failed")
            w.report("info", f"Replay of {row.label}: {outcome.error}")
            return
        assert outcome.result is not None
        counter = w.counter
        view = Row(source=row.source, index=row.index, line=row.line, kind="replayed",
                   label=f"{row.label} (replayed)", request=outcome.result.request,
                   result=outcome.result, findings=outcome.findings,
                   counter_name=counter.name if counter is not None else None,
                   entry_kind=row.entry_kind, plan_request=row.plan_request, rag=row.rag)
        self._set_view(view, outcome)
        w.replay_panel.show_summary(outcome_summary(row.result, outcome.result, outcome.diff))
        self.redraw_in_steps()

    def redraw_in_steps(self, *, bar_now: bool = True) -> None:
        """The bar now (the slider's answer; ``bar_now=False``: in the next turn, as where no hand waits for it),
        the tree and then the detail tabs each in a later turn of the event loop, so the loop (its timers,
        input, painting) runs between them and no burst is all three; a newer redraw meanwhile starts again
        (each step draws what is current when it runs)."""
        w = self.window
        if bar_now:
            w.refresh_bar()
        self._due = ([] if bar_now else [w.refresh_bar]) + [w.refresh_tree, w.refresh_details]
        self._step_later()

    def _step_later(self) -> None:
        if self._due and not self._stepping:
            self._stepping = True
            in_a_later_turn(self._show_next, self)

    def _show_next(self) -> None:
        self._stepping = False
        if self._due:
            self._due.pop(0)()
        self._step_later()

    def is_idle(self) -> bool:
        """No part of a replay's redraw (or of the what-if chart's last sweep) is still to come."""
        return not self._due and self.window.replay_panel.whatif.is_idle()

    def _on_sweep(self, points: list) -> None:
        w = self.window
        target = w.replay.target
        if target is None:
            return
        panel = w.replay_panel
        base = panel.base
        recorded = target.recorded
        order = [e.section for e in recorded.trace] if recorded is not None else []
        panel.whatif.set_points(points, base.context_limit if base is not None else None, order)
        panel.whatif.set_edit_limit(panel.limit.value())
        if points:
            top = max(p.value for p in points)
            if top > panel.limit.slider.maximum():
                panel.limit.slider.setMaximum(top)

    def reset(self) -> None:
        """Every control back to the recorded value: the view shows the recording again."""
        w = self.window
        target = w.replay.target
        if target is None or w.current_row is None:
            return
        w.replay_panel.load(target.base(), replay_note(w.current_row, target))
        self.edits_changed()
