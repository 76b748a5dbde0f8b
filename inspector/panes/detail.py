"""Detail tabs: Item (the selected item's text and metadata), Request (rendered), Audit (findings), JSON."""
from __future__ import annotations

import html
import json
import threading
from typing import Any

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtGui import QFontDatabase, QIcon
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QPlainTextEdit, QTableView, QTabWidget,
                               QTextBrowser, QVBoxLayout, QWidget)

import core

from .. import theme
from ..document import ItemContent, Row, find_entry, item_content, receipt_fields, section_summary
from ..models import FindingsModel
from ..document.imported import imported_fields, imported_notes
from .findbar import FindBar
from .requestview import RequestView
from .tokenview import TokenView, item_text


def _badge(decision: str) -> str:
    style = theme.decision_style(decision)
    return (f'<span style="background-color:{style.colour}; color:#ffffff; font-weight:bold">'
            f"&nbsp;{html.escape(style.glyph)} {html.escape(decision)}&nbsp;</span>")


def content_html(content: ItemContent, section: str | None = None) -> str:
    """HTML for the Item tab. Text colours are left to the palette; only badges and swatches carry colour."""
    swatch = ""
    if section is not None:
        swatch = f'<span style="color:{theme.section_colour(section).name()}">&#9632;</span> '
    out = [f"<h3>{swatch}{html.escape(content.title)}</h3>", '<table cellspacing="2" cellpadding="2">']
    for key, value in content.fields:
        shown = _badge(value) if key == "Decision" else html.escape(value)
        out.append(f'<tr><td valign="top"><b>{html.escape(key)}</b></td><td>{shown}</td></tr>')
    out.append("</table>")
    for text in content.prose:
        out.append(f"<p>{html.escape(text)}</p>")
    receipts = [fields for fields in (receipt_fields(r) for r in content.receipts) if fields]
    if content.receipts:  # where the passage came from: before its text, which can be long
        out.append(f"<h4>RAG window receipt{'s' if len(content.receipts) != 1 else ''}</h4>")
    for fields in receipts:
        out.append('<table cellspacing="2" cellpadding="2">')
        for key, value in fields:
            shown = html.escape(value).replace("\n", "<br>")
            out.append(f'<tr><td valign="top"><b>{html.escape(key)}</b></td><td>{shown}</td></tr>')
        out.append("</table>")
    for title, text in content.blocks:
        out.append(f"<h4>{html.escape(title)}</h4>")
        out.append(f'<pre style="white-space: pre-wrap">{html.escape(text)}</pre>')
    if content.receipts:
        out.append("<h4>Receipt as recorded (JSON)</h4>")
        out.append(f'<pre style="white-space: pre-wrap">'
                   f"{html.escape(json.dumps(content.receipts, indent=2, ensure_ascii=False))}</pre>")
    return "\n".join(out)


def row_content(row: Row, counter_name: str | None) -> ItemContent:
    """The Item tab when a request is selected but no item: what the row is and its figures."""
    fields: list[tuple[str, str]] = [("Request", row.label), ("Kind", row.kind), ("Strategy", row.strategy),
                                     ("Where", row.where)]
    blocks: list[tuple[str, str]] = []
    prose: list[str] = []
    if row.imported is not None:
        fields += imported_fields(row)
        blocks += imported_notes(row)
    elif row.derived_from is not None:
        fields.append(("Re-assembled from", f"{row.derived_from.label} ({row.derived_from.format_name})"))
    if row.result is not None:
        r = row.result
        fields += [("Input tokens", f"{r.input_tokens:,} of {r.input_budget:,} allowed")]
        if row.imported is None:  # an imported request's limit is listed above, with where it came from
            fields.append(("Context limit", f"{r.context_limit:,} (output reserve {r.max_new_tokens:,}, "
                                            f"margin {r.margin:,})"))
        fields += [("Free", f"{r.remaining_tokens:,}"),
                   ("Items", f"{row.kept_count} sent, {row.dropped_count} dropped"),
                   ("Audit", row.status_text()),
                   ("Counted with", (r.counter.name if r.counter else None) or row.counter_name or "not recorded")]
        if row.kind == "assembled":
            fields.append(("Assembled here with", row.counter_name or counter_name or "-"))
        prose.append("Pick a section or an item in the tree, or a segment of the budget bar, to see its text "
                     "and metadata here.")
    elif row.kind == "rejected":
        prose.append(row.summary().capitalize() + ". Nothing was sent: the required sections alone exceed the "
                     "input allowance.")
    elif row.kind == "pending":
        prose.append("Reading this entry from the file…")
    elif row.kind == "uncounted" and row.imported is not None:
        prose.append("This model call was read from the file but the counter could not count it; the importer's "
                     "view of it is in the JSON tab.")
    elif row.kind == "uncounted":
        blocks.append(("Could not be counted", row.error or "the counter refused it"))
        prose.append("The file was read, but the counter refused this request. Count it with another counter "
                     "(File ▸ Use Embedded Counter, or Counter…).")
    else:
        blocks.append(("Could not be read", row.error or "unknown problem"))
    prose.extend(row.notes)
    return ItemContent(title=row.label, fields=fields, blocks=blocks, prose=prose)


class AuditPane(QWidget):
    """Findings like Wireshark's Expert Info; activating one (double-click or Enter) jumps to it."""

    findingActivated = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FindingsModel(self)
        self.summary = QLabel(self)
        self.summary.setAccessibleName("Audit summary")
        self.summary.setWordWrap(True)  # a rejection's summary is long; it wraps instead of widening the window
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setAccessibleName("Audit findings")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(FindingsModel.C_MESSAGE, QHeaderView.ResizeMode.Stretch)
        self.table.activated.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)

    def set_findings(self, findings: list[core.Finding], row: Row | None) -> None:
        self.model.set_findings(findings)
        for col in (FindingsModel.C_SEVERITY, FindingsModel.C_RULE, FindingsModel.C_LOCATION, FindingsModel.C_ITEM):
            self.table.resizeColumnToContents(col)
        if row is None:
            self.summary.setText("No request selected.")
        elif row.result is None:
            self.summary.setText("Nothing to audit: " + row.summary())
        else:
            self.summary.setText(f"{row.status_text().capitalize()}. Double-click a finding (or press Enter) "
                                 "to see its place in the rendered request.")

    def _activated(self, index: QModelIndex) -> None:
        finding = self.model.finding_at(index.row())
        if finding is not None:
            self.findingActivated.emit(finding)


class DetailTabs(QTabWidget):
    ITEM, REQUEST, AUDIT, JSON, TOKENS = range(5)
    NAMES = ("Item", "Request", "Audit", "JSON", "Tokens")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Details")
        self.item = QTextBrowser(self)
        self.item.setAccessibleName("Selected item")
        self.item.setOpenLinks(False)
        self.request = RequestView(self)
        self.audit = AuditPane(self)
        self.json = QPlainTextEdit(self)
        self.json.setReadOnly(True)
        self.json.setAccessibleName("Raw result JSON")
        self.json.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.json_find = FindBar(self.json, "the JSON", self)
        json_page = QWidget(self)
        json_layout = QVBoxLayout(json_page)
        json_layout.setContentsMargins(0, 0, 0, 0)
        json_layout.addWidget(self.json)
        json_layout.addWidget(self.json_find)
        self.tokens = TokenView(self)
        self.addTab(self.item, "&Item")
        self.addTab(self.request, "&Request")
        self.addTab(self.audit, "&Audit")
        self.addTab(json_page, "&JSON")
        self.addTab(self.tokens, "&Tokens")
        self._counter: core.TokenCounter | None = None
        self._lock: threading.RLock | None = None
        self._row: Row | None = None
        self._counter_name: str | None = None
        self._shown: tuple[str | None, str | None] = (None, None)
        self._content: ItemContent | None = None

    def show_row(self, row: Row | None, counter: core.TokenCounter | None, lock: threading.RLock | None) -> None:
        self._row = row
        self._counter_name = counter.name if counter is not None else None
        self._counter, self._lock = counter, lock
        self._shown = (None, None)
        self.request.show_row(row, counter, lock)
        self.audit.set_findings(row.findings if row is not None else [], row)
        self.audit_title()
        self.json.setPlainText(row.display_json() if row is not None else "")
        self._show_item_html()

    def audit_title(self) -> None:
        row = self._row
        count = len(row.findings) if row is not None else 0
        self.setTabText(self.AUDIT, f"&Audit ({count})" if count else "&Audit")
        self.setTabIcon(self.AUDIT, theme.severity_icon(row.status) if row is not None and count else QIcon())

    def show_item(self, section: str | None, item_id: str | None) -> None:
        self._shown = (section, item_id)
        self._show_item_html()

    def shown_item(self) -> tuple[str | None, str | None]:
        return self._shown

    def item_text(self) -> str:
        return self.item.toPlainText()

    def item_fields(self) -> list[tuple[str, str]]:
        """The metadata pairs the Item tab shows now (for tests and tooling)."""
        return list(self._content.fields) if self._content is not None else []

    def refresh(self) -> None:
        self.request.refresh()
        self._show_item_html()

    def _show_item_html(self) -> None:
        row = self._row
        section, item_id = self._shown
        self._content = None
        if row is None:
            self.item.setHtml("<p>Open a request or result file (Ctrl+O), drop one here, or open the demo "
                              "(Ctrl+D).</p>")
            return
        content: Any = None
        if section is not None and item_id is not None:
            content = item_content(row, section, item_id)
        elif section is not None:
            content = section_summary(row, section)
        if content is None:
            content = row_content(row, self._counter_name)
            section = None
        self._content = content
        self.item.setHtml(content_html(content, section))
        self._show_tokens(row, content if item_id is not None else None)

    def _show_tokens(self, row: Row, content: ItemContent | None) -> None:
        section, item_id = self._shown
        entry = find_entry(row.result, section, item_id) if row.result is not None and section and item_id else None
        self.tokens.show_text(item_text(content), self._counter, self._lock, content.title if content else None,
                              entry.tokens if entry is not None else None)

    def find_bar(self) -> FindBar | None:
        """The find bar of the tab shown (the rendered request or the JSON), if it has one."""
        return {self.REQUEST: self.request.find_bar, self.JSON: self.json_find}.get(self.currentIndex())

    def open_find(self) -> FindBar:
        """Find in the rendered request or the JSON (the Request tab when another tab is shown)."""
        if self.find_bar() is None:
            self.setCurrentIndex(self.REQUEST)
        bar = self.find_bar()
        assert bar is not None
        bar.open_bar()
        return bar
