"""The status bar's permanent parts: the file of the selected row, the loading progress and its Cancel
button, the input tokens against the allowance, and the counter the shown result was counted with."""
from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar, QPushButton, QStatusBar

import core

from ..document import Row
from ..document.imported import format_title
from ..document.figures import figure, signed
from ..turns import in_a_later_turn
from .elidedlabel import ElidedLabel

PROGRESS_INTERVAL = 0.5  # seconds between two shown values of one job's progress (each a repaint)


class StatusLine:
    def __init__(self, status: QStatusBar) -> None:
        # the three texts give up width before the window grows past the screen (whole text on hover)
        self.counter_label = ElidedLabel(status, minimum=160)
        self.counter_label.setAccessibleName("Token counter")
        self.tokens_label = ElidedLabel(status, minimum=160)
        self.tokens_label.setAccessibleName("Input tokens of the allowance")
        self.file_label = ElidedLabel(status, minimum=120)
        self.file_label.setAccessibleName("File")
        self.progress = QProgressBar(status)
        self.progress.setAccessibleName("Loading progress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self._progress_shown = 0.0
        self.cancel_button = QPushButton("Cancel", status)
        self.cancel_button.setAccessibleName("Cancel loading")
        self.cancel_button.hide()
        status.addWidget(self.file_label, 1)
        status.addPermanentWidget(self.progress)
        status.addPermanentWidget(self.cancel_button)
        status.addPermanentWidget(self.tokens_label)
        status.addPermanentWidget(self.counter_label)
        self._status = status
        self._permanent = (self.progress, self.cancel_button, self.tokens_label, self.counter_label)
        self._message: tuple[str, str, float | None] = ("", "", None)  # the passing message, as shown, until when
        status.messageChanged.connect(self._message_changed)

    # ---- a passing message

    def show_message(self, text: str, timeout_ms: int) -> None:
        """``text`` for ``timeout_ms`` where the status bar shows a passing message (left of the permanent
        parts, which would clip it): elided to that room, the whole text on hover; elided again to the room left
        when a permanent part's text changes while it shows (``refit_message``)."""
        status = self._status
        shown = self._elided(text)
        status.showMessage(shown, timeout_ms)
        status.setToolTip(text if shown != text else "")
        self._message = (text, shown, time.monotonic() + timeout_ms / 1000 if timeout_ms > 0 else None)

    def refit_message(self) -> None:
        """The passing message shown now, elided again to the room the permanent parts leave it now (after the
        status bar's layout, a turn of the event loop later: "Loaded x.json in 0.2 s" was cut to "Loaded x.js"
        once the token count beside it grew)."""
        text, shown, until = self._message
        status = self._status
        if not text or status.currentMessage() != shown:
            return
        if self._elided(text) == shown:
            return  # the room it has still fits it as shown: nothing to redraw
        left = None if until is None else int((until - time.monotonic()) * 1000)
        if left is None or left > 0:
            self.show_message(text, left or 0)

    def _elided(self, text: str) -> str:
        return self._status.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, max(40, self.message_room()))

    def message_room(self) -> int:
        """The width a passing message is drawn in: from the left margin to the first permanent part shown
        (as ``QStatusBar`` lays it out), less a little room for the elision."""
        status = self._status
        right = status.width() - 12
        shown = [w.x() for w in self._permanent if w.isVisible()]
        if shown:
            right = min(right, min(shown) - 2)
        return right - 6 - 8

    def _message_changed(self, text: str) -> None:
        if not text:
            self._status.setToolTip("")

    # ---- progress

    def show_busy(self, text: str) -> None:
        self.progress.setRange(0, 0)
        self.progress.setFormat(text)
        self.progress.show()

    def show_loading(self, text: str) -> None:
        """A job started: the progress (unknown length until the thread reports) and its Cancel button."""
        self.show_busy(text)
        self.cancel_button.show()

    def show_progress(self, done: int, total: int, text: str) -> None:
        if total > 0:
            shown = text if "%" in text else f"{text}: %v of %m"
            now = time.monotonic()
            # QProgressBar repaints at once on every new value (milliseconds each): a long job's many reports
            # are shown a few times a second, its last one and a new stage always
            if (done < total and shown == self.progress.format() and total == self.progress.maximum()
                    and now - self._progress_shown < PROGRESS_INTERVAL):
                return
            self._progress_shown = now
            # its updates off meanwhile: no repaint at once (that would paint everything the window has to
            # paint, in this event); turned on again, it is painted with the window's next paint
            self.progress.setUpdatesEnabled(False)
            try:
                self.progress.setRange(0, total)
                self.progress.setValue(min(done, total))
                self.progress.setFormat(shown)
            finally:
                self.progress.setUpdatesEnabled(True)
        else:
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"Reading {text}")

    def hide_busy(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()

    # ---- what is shown

    def show_counter(self, identity: core.CounterIdentity | None, spec: str, pending: bool) -> None:
        if identity is not None:
            sha = (identity.template_sha256 or "")[:12] or "none"
            what = identity.model or identity.name
            why = ("its own counter cannot be used here" if "cannot be used here" in (identity.notes or "")
                   else "no public tokenizer")  # auto's fallback, or a model whose tokenizer is not published
            if identity.kind == "estimate":
                what += f" (an estimate: {why})"
            if spec == core.AUTO:
                what = f"auto, by each request's model: {identity.name}" + (
                    f" (an estimate: {why})" if identity.kind == "estimate" else "")
            self.counter_label.setText(f"Counter: {what} · {identity.revision or 'no revision'} · template {sha}")
            self.counter_label.setToolTip(f"{identity.name} ({identity.kind})\nmodel {identity.model}\n"
                                          f"revision {identity.revision}\ntemplate sha256 {identity.template_sha256}"
                                          + (f"\n{identity.notes}" if identity.notes else ""))
        elif pending:
            self.counter_label.setText(f"Counter: building {spec}…")
        else:
            self.counter_label.setText(f"Counter: unavailable ({spec})")

    def show_tokens(self, row: Row | None, replayed: Row | None) -> None:
        if replayed is not None and replayed.result is not None:
            recorded = f" (recorded {figure(row.input_tokens)} / {figure(row.allowance)})" if row is not None and \
                row.input_tokens is not None else ""
            self.tokens_label.setText(f"Replayed: input {figure(replayed.result.input_tokens)} / "
                                      f"{figure(replayed.result.input_budget)} tokens{recorded}")
        elif row is not None and row.input_tokens is not None:
            if row.kind == "rejected":
                self.tokens_label.setText(f"Rejected: needs {figure(row.input_tokens)}, "
                                          f"allowance {figure(row.allowance)}")
            elif row.count_drift is not None:
                theirs = (row.result.model_extra or {}).get("provider_input_tokens")
                if core.bar_basis(row.result).provider:  # ours is an estimate: the provider's figure first
                    self.tokens_label.setText(f"Input {figure(theirs)} / {figure(row.allowance)} tokens (the "
                                              f"provider's) · our estimate {figure(row.input_tokens)} · drift "
                                              f"{signed(row.count_drift)}")
                else:
                    self.tokens_label.setText(f"Input {figure(row.input_tokens)} / {figure(row.allowance)} tokens · "
                                              f"provider {figure(theirs)} · drift {signed(row.count_drift)}")
            else:
                self.tokens_label.setText(f"Input {figure(row.input_tokens)} / {figure(row.allowance)} tokens")
        else:
            self.tokens_label.setText("")
        # a result the fast count handed to the reference method says so (and why, on hover)
        result = replayed.result if replayed is not None and replayed.result is not None else \
            (row.result if row else None)
        note = getattr(result, "counting_note", None) if result is not None else None
        if note and self.tokens_label.text():
            self.tokens_label.setText(self.tokens_label.text() + " · counted by the reference method")
        self.tokens_label.setToolTip(note or "")
        if self._message[0] and self._status.currentMessage():  # a passing message beside it: fit it again
            in_a_later_turn(self.refit_message, self._status)

    def show_file(self, row: Row | None, total_rows: int) -> None:
        if row is not None:
            where = f"File: {row.where}"
            if row.format_name:
                info = row.import_source.info if row.import_source is not None else None
                where += f" · {format_title(info.name if info else row.format_name)} (read as {row.format_name})"
            self.file_label.setText(where)
            self.file_label.setToolTip(where)
        else:
            self.file_label.setToolTip("")
            self.file_label.setText(f"{total_rows} rows loaded" if total_rows else "No file open")
