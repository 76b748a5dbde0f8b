"""Imported provider requests: the context limit set per model (remembered), counting again under a new
limit, and re-assembling a request with the core assembler. The work runs off the GUI thread; the
figures come from ``core`` through ``document.imported``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt

import core

from ..document import Row
from ..document.imported import ReassemblyRefused, needs_recount, reassemble, recount
from ..workers import LatestJob

if TYPE_CHECKING:
    from ..mainwindow import MainWindow


class ImportController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        # context limits set for the models of imported requests (remembered only when persisting)
        self.limits: dict[str, int] = window.settings.context_limits() if window.persist else {}
        self._recounter = LatestJob(self)  # imported rows counted again under a new limit
        self._reassembler = LatestJob(self)  # an imported row assembled by the core assembler
        self._restore: set[tuple[str, int]] = set()  # imported rows whose re-assembly a reload brings back
        self._restore_queue: list[Row] = []
        self._warned: set[str] = set()  # auto's fallbacks already reported
        self._recounter.finished.connect(self._on_recounted)
        self._reassembler.finished.connect(self._on_reassembled)

    def is_idle(self) -> bool:
        return self._recounter.is_idle() and self._reassembler.is_idle()

    def stop(self) -> None:
        self._recounter.stop()
        self._reassembler.stop()

    # ---- rows arriving and going

    def rows_arrived(self, rows: list[Row]) -> None:
        """A batch was listed: count again what was counted under an older limit, and bring back the
        re-assemblies a reload took away."""
        self._warn_fallbacks(rows)
        if any(needs_recount(r, self.limits) for r in rows):
            self.recount_stale()  # a limit was set while these were being counted
        if self._restore:
            again = [r for r in rows if (r.source, r.index) in self._restore and r.imported is not None]
            self._restore.difference_update((r.source, r.index) for r in again)
            self._restore_queue.extend(again)
            self._restore_next()

    def _warn_fallbacks(self, rows: list[Row]) -> None:
        """``auto`` could not build a request's own counter here and counted it as an estimate: say so in the
        message bar, once per model, with what to run (nothing is downloaded on its own)."""
        for row in rows:
            for note in row.notes:
                if note.startswith("auto picked") and note not in self._warned:
                    self._warned.add(note)
                    self.window.report("warning", f"{row.label}: {note}")

    def remember_for_reload(self, rows: list[Row]) -> None:
        # re-assembled rows are the person's work, not a file's: re-assemble them again once read
        self._restore = {(r.derived_from.source, r.derived_from.index) for r in rows if r.derived_from is not None}
        self._restore_queue.clear()

    # ---- context limits

    def context_limit_for(self, model: str) -> int | None:
        """The context limit set for ``model`` (None: core's assumed size is used)."""
        return self.limits.get(model)

    def focus_context_limit(self) -> None:
        bar = self.window.import_bar
        if bar.isVisible():
            bar.limit.setFocus(Qt.FocusReason.ShortcutFocusReason)
            bar.limit.selectAll()
        else:
            self.window.report("warning", "Select an imported provider request to set its model's context limit")

    def set_context_limit(self, model: str, limit: int) -> None:
        """Use ``limit`` for every request of ``model`` (remembered for the next time one opens; 0 forgets
        it, so core's assumed size is used again); the open requests of that model are counted again off
        the GUI thread."""
        w = self.window
        if limit > 0:
            self.limits[model] = limit
        else:
            self.limits.pop(model, None)
        if w.persist:
            if limit > 0:
                w.settings.set_context_limit(model, limit)
            else:
                w.settings.clear_context_limit(model)
        self.recount_stale()

    def recount_stale(self) -> None:
        """Count again, off the GUI thread, every imported row counted under another limit than the one now
        set for its model (one job for all of them: a newer job supersedes an older one)."""
        w = self.window
        limits = dict(self.limits)
        rows = [r for r in w.request_model.rows() if needs_recount(r, limits)]
        counter, lock = w.counter, w.counter_cache.lock
        auto = w.counter_cache.auto() if w.counter_spec == core.AUTO else None
        if not rows or counter is None:
            return
        w.status.show_busy(f"Counting {len(rows)} imported request{'s' if len(rows) != 1 else ''} again")

        def job() -> list[tuple[Row, Row]]:
            out = []
            for row in rows:
                with lock:
                    out.append((row, recount(row, counter, limits, auto=auto)))
            return out

        self._recounter.submit(job)

    def _on_recounted(self, value: object) -> None:
        w = self.window
        w.hide_busy_if_idle()
        if isinstance(value, BaseException):
            w.report("error", f"Counting again failed: {type(value).__name__}: {value}")
            return
        changed = []
        for row, new in value:
            if w.request_model.row_number(row) >= 0:
                already = row.error if row.kind == "uncounted" else None
                row.absorb(new)
                changed.append(row)
                if row.kind == "uncounted" and row.error != already:
                    w.report("error", row.error or f"{row.label}: not counted")
        w.request_model.rows_changed(changed)
        if w.current_row is not None and any(r is w.current_row for r in changed):
            w.select_row(w.current_row, origin="read")

    # ---- re-assembly

    def reassemble_current(self) -> None:
        """Re-assemble the selected imported request with the core assembler (off the GUI thread); the new
        row opens below it, in the replay panel."""
        row = self.window.current_row
        if row is not None and row.derived_from is not None:
            row = row.derived_from  # again, from the imported row (its limit may have changed)
        if row is None or row.imported is None:
            self.window.report("warning", "Select an imported provider request to re-assemble it")
            return
        self._restore_queue.clear()  # the person's own request goes first
        self._reassemble(row, restoring=False)

    def _restore_next(self) -> None:
        """Re-assemble the next row a reload is bringing back, one at a time (the job keeps only the newest)."""
        if self._restore_queue and self._reassembler.is_idle():
            self._reassemble(self._restore_queue.pop(0), restoring=True)

    def _reassemble(self, row: Row, *, restoring: bool) -> None:
        w = self.window
        if row.result is None:
            w.report("error", f"Cannot re-assemble {row.label}: it was not counted ({row.error})")
            return
        counter, lock = w.counter, w.counter_cache.lock
        auto = w.counter_cache.auto() if w.counter_spec == core.AUTO else None
        if counter is None:
            w.report("error", "No token counter to assemble with (see the log)")
            return
        w.status.show_busy(f"Re-assembling {row.label}")

        def job() -> tuple[Row, Row, bool] | ReassemblyRefused:
            try:
                with lock:
                    return row, reassemble(row, counter), restoring
            except ReassemblyRefused as exc:  # expected: shown as a message, not logged as a failure
                return exc

        self._reassembler.submit(job)

    def _on_reassembled(self, value: object) -> None:
        w = self.window
        w.hide_busy_if_idle()
        if isinstance(value, BaseException):
            w.report("error", str(value) if isinstance(value, core.ContextInspectorError)
                     else f"Re-assembly failed: {type(value).__name__}: {value}")
            self._restore_next()
            return
        anchor, row, restoring = value
        if w.request_model.row_number(anchor) < 0:
            self._restore_next()
            return  # its file was closed meanwhile
        for old in [r for r in w.request_model.rows() if r.derived_from is anchor]:
            w.request_model.remove_row(old)
        w.request_model.insert_after(anchor, row)
        if restoring:  # brought back by a reload: in its place, without taking the selection
            w.report("info", f"Re-assembled {anchor.label} again after the reload: {row.summary()}")
            self._restore_next()
            return
        w.select_row(row)
        w.replay_dock.show()
        w.replay_dock.raise_()
        w.report("info", f"Re-assembled {anchor.label}: {row.summary()}")
