"""The Request tab: the complete rendered request as the model sees it.

Section regions are tinted in their section colour, control tokens are bold on grey, escaped
evidence boundaries are highlighted (tooltip: the passage and the original literal), and audit
findings are underlined in wavy red. The text and every span come from ``core.render_view``.
"""
from __future__ import annotations

import bisect
import logging
import re
import threading

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QToolTip, QVBoxLayout, QWidget

import core

from .. import theme
from ..document import Row
from ..workers.latest import LatestJob
from ..workers.rendering import render_off_the_gui
from .findbar import FindBar

log = logging.getLogger("inspector")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f]")  # below U+0020, but for tab and newline
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # two UTF-16 units each


def _displayable(text: str) -> str:
    """Control characters other than newline and tab become their visible symbol (same length, so the
    spans from core still line up), e.g. a carriage return shows as U+240D."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(lambda m: chr(0x2400 + ord(m.group())), text)


class _Utf16:
    """Python indexes code points; QTextDocument indexes UTF-16 units. Maps one to the other."""

    def __init__(self, text: str) -> None:
        self._prefix: list[int] | None = None
        if _ASTRAL.search(text) is not None:
            prefix = [0]
            for c in text:
                prefix.append(prefix[-1] + (2 if ord(c) > 0xFFFF else 1))
            self._prefix = prefix

    def __call__(self, index: int) -> int:
        if self._prefix is None:
            return index
        return self._prefix[max(0, min(index, len(self._prefix) - 1))]

    def back(self, position: int) -> int:
        if self._prefix is None:
            return position
        return max(0, bisect.bisect_right(self._prefix, position) - 1)


class RequestView(QWidget):
    """Rendered request text with its spans; ``regionClicked`` names the item under a click."""

    regionClicked = Signal(str, object)  # section, item id (or None)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setAccessibleName("Rendered request summary")
        self.editor = QPlainTextEdit(self)
        self.editor.setReadOnly(True)
        self.editor.setAccessibleName("Rendered request text")
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.editor.viewport().installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.find_bar = FindBar(self.editor, "the rendered request", self)
        layout.addWidget(self.header)
        layout.addWidget(self.editor)
        layout.addWidget(self.find_bar)
        self.view: core.RenderedView | None = None
        self._map = _Utf16("")
        self._row: Row | None = None
        self._counter: core.TokenCounter | None = None
        self._lock: threading.RLock | None = None
        self._job = LatestJob(self)  # the render runs off the GUI thread (workers.rendering)
        self._wanted: tuple[str | None, str | None, core.Finding | None] | None = None  # selected while rendering
        self._job.finished.connect(self._rendered)

    # ---- content

    def show_row(self, row: Row | None, counter: core.TokenCounter | None, lock: threading.RLock | None) -> None:
        self._row, self._counter, self._lock = row, counter, lock
        self._render()

    def refresh(self) -> None:
        """Re-apply formats (after a palette change)."""
        self._render()

    def _render(self) -> None:
        row, counter = self._row, self._counter
        self.view = None
        self._wanted = None
        if row is None or row.result is None:
            self.header.setText("No rendered request: " + (row.summary() if row is not None else "no request selected."))
            self.editor.setPlainText("")
            return
        if counter is None:
            self.header.setText("No token counter is available to render the request (see the log).")
            self.editor.setPlainText("")
            return
        self.header.setText(f"Rendering the request as {counter.name} renders it…")  # the text shown stays until then
        result, findings, lock = row.result, list(row.findings), self._lock

        def job() -> tuple[Row, core.TokenCounter, object]:
            try:
                view: object = render_off_the_gui(result, findings, counter, lock)
            except core.ContextInspectorError as exc:
                view = exc
            except Exception as exc:  # a failure inside the renderer: one line in the pane, the traceback to the log
                log.exception("rendering %s", row.where)
                view = exc
            return row, counter, view

        self._job.submit(job)

    def stop(self) -> None:
        """End the rendering thread (the window is closing)."""
        self._job.stop()

    def is_idle(self) -> bool:
        """No rendering is under way (what is shown is the selected row's rendered request)."""
        return self._job.is_idle()

    def _rendered(self, value: object) -> None:
        """A render finished: shown if it is the newest one's (the job reports only that) and of the row shown."""
        row, counter = self._row, self._counter
        if isinstance(value, Exception):  # a bug in the job itself: logged there
            self.header.setText(f"The request cannot be rendered: {type(value).__name__}: {value}")
            self.editor.setPlainText("")
            return
        rendered_row, rendered_counter, view = value
        if rendered_row is not row or rendered_counter is not counter or row is None or row.result is None:
            return
        if isinstance(view, Exception):
            what = str(view) if isinstance(view, core.ContextInspectorError) else f"{type(view).__name__}: {view}"
            self.header.setText(f"The request cannot be rendered with {counter.name}: {what}")
            self.editor.setPlainText("")
            return
        self.view = view
        text = view.text
        self._map = _Utf16(text)
        self.editor.setPlainText(_displayable(text))
        self._apply_formats()
        recorded = row.result.counter.name if row.result.counter else None
        parts = [f"As {counter.name} renders it: {len(text):,} characters, {len(view.control_tokens)} control tokens",
                 f"{len(view.regions)} regions, {len(view.escaped)} escaped boundaries, "
                 f"{len(view.finding_spans)} findings placed"]
        if view.note:
            parts.append(view.note)
        elif recorded and recorded != counter.name:
            parts.append(f"recorded with {recorded}")
        self.header.setText("; ".join(parts) + ".")
        wanted, self._wanted = self._wanted, None
        if wanted is not None:  # what was asked for while the text was being rendered (a finding, else its item)
            section, item_id, finding = wanted
            if (finding is None or not self.select_finding(finding)) and section is not None:
                self.select_item(section, item_id)

    def _format_span(self, start: int, end: int, fmt: QTextCharFormat) -> None:
        if end <= start:
            return
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(self._map(start))
        cursor.setPosition(self._map(end), QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(fmt)

    def _apply_formats(self) -> None:
        view = self.view
        pal = self.palette()
        cursor = QTextCursor(self.editor.document())
        cursor.beginEditBlock()
        for region in view.regions:
            fmt = QTextCharFormat()
            fmt.setBackground(theme.tint(theme.section_colour(region.section), pal, theme.REGION_TINT))
            self._format_span(region.start, region.end, fmt)
        control = QTextCharFormat()
        control.setFontWeight(700)
        control.setBackground(theme.tint(QColor(theme.CONTROL_TINT[0]), pal, theme.CONTROL_TINT[1]))
        control.setForeground(pal.color(pal.ColorRole.Text))
        for start, end, _literal in view.control_tokens:
            self._format_span(start, end, control)
        escaped = QTextCharFormat()
        escaped.setBackground(theme.tint(QColor(theme.ESCAPED_TINT[0]), pal, theme.ESCAPED_TINT[1]))
        escaped.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        escaped.setUnderlineColor(QColor(theme.ESCAPED_UNDERLINE))
        escaped.setFontWeight(700)
        for item in view.escaped:
            self._format_span(item.start, item.end, escaped)
        finding = QTextCharFormat()
        finding.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        finding.setUnderlineColor(QColor(theme.SEVERITY_COLOURS["error"]))
        for _f, start, end in view.finding_spans:
            self._format_span(start, end, finding)
        cursor.endEditBlock()

    # ---- spans at a position

    def format_at(self, index: int) -> QTextCharFormat:
        """The character format at a code-point index of the text (for tests and tooltips)."""
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(self._map(index) + 1)
        return cursor.charFormat()

    def region_at(self, index: int) -> core.Region | None:
        if self.view is None:
            return None
        inside = [r for r in self.view.regions if r.start <= index < r.end]
        return min(inside, key=lambda r: r.end - r.start) if inside else None

    def tooltip_at(self, index: int) -> str:
        if self.view is None:
            return ""
        lines: list[str] = []
        for item in self.view.escaped:
            if item.start <= index < item.end:
                lines.append(f"Escaped evidence boundary in passage {item.passage_id!r}: the passage text had "
                             f"{item.original!r}, sent as {item.escaped!r} so it cannot close or open a block.")
        for f, start, end in self.view.finding_spans:
            if start <= index < end:
                lines.append(f"{f.severity} [{f.rule}]: {f.message}")
        for start, end, literal in self.view.control_tokens:
            if start <= index < end:
                lines.append(f"Control token {literal}")
        region = self.region_at(index)
        if region is not None:
            where = theme.section_title(region.section)
            lines.append(f"{where}: {region.item_id}" if region.item_id else where)
        return "\n".join(lines)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.editor.viewport():
            if event.type() == QEvent.Type.ToolTip:
                index = self._map.back(self.editor.cursorForPosition(event.pos()).position())
                text = self.tooltip_at(index)
                if text:
                    QToolTip.showText(event.globalPos(), text, self.editor)
                else:
                    QToolTip.hideText()
                return True
            if event.type() == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton \
                    and not self.editor.textCursor().hasSelection():
                index = self._map.back(self.editor.cursorForPosition(event.position().toPoint()).position())
                region = self.region_at(index)
                if region is not None:
                    self.regionClicked.emit(region.section, region.item_id)
        return super().eventFilter(watched, event)

    # ---- navigation

    def select_span(self, start: int, end: int) -> None:
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(self._map(start))
        cursor.setPosition(self._map(end), QTextCursor.MoveMode.KeepAnchor)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def selected_span(self) -> tuple[int, int]:
        cursor = self.editor.textCursor()
        return self._map.back(cursor.selectionStart()), self._map.back(cursor.selectionEnd())

    def select_item(self, section: str, item_id: str | None) -> bool:
        if self.view is None:
            if not self._job.is_idle():  # rendering: selected once the text is there
                self._wanted = (section, item_id, None)
                return True
            return False
        regions = [r for r in self.view.regions if r.section == section and (item_id is None or r.item_id == item_id)]
        if not regions:
            return False
        self.select_span(regions[0].start, regions[0].end)
        return True

    def select_finding(self, finding: core.Finding) -> bool:
        if self.view is None:
            if not self._job.is_idle():  # rendering: placed once the text is there
                self._wanted = (finding.section, finding.item_id, finding)
                return True
            return False
        for f, start, end in self.view.finding_spans:
            if f == finding:
                self.select_span(start, end)
                return True
        return False
