"""The Tokens tab: the selected item's text as the counter's tokens, each a chip in alternating
colours with its id below, as tiktokenizer shows them, so a surprising count can be explained. The
tokens come from ``core.token_view``; this only draws them."""
from __future__ import annotations

import html
import threading
from contextlib import nullcontext

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QTextBrowser, QVBoxLayout, QWidget

import core

from ..document import ItemContent

CHIP_COLOURS = ("#C9E4FF", "#FFE2B8", "#D5F5D0", "#F6D0EA", "#E3DCFF")  # light: the chip text is always dark
MAX_TOKENS = 5000  # drawn; a longer text says how many more there are


def item_text(content: ItemContent | None) -> str:
    """The text an item carries: its blocks, one after the other."""
    if content is None:
        return ""
    return "\n".join(text for _title, text in content.blocks)


def chips_html(pieces: list[core.TokenPiece]) -> str:
    out = []
    for n, piece in enumerate(pieces[:MAX_TOKENS]):
        shown = piece.text.replace(" ", "\u00b7").replace("\t", "\u2192").replace("\n", "\u21b5\n")
        tip = (f"id {piece.id} · characters {piece.start}–{piece.end}" + (" · part of one character" if piece.shared
                                                                          else "")
               + (" · with text beside it that no token's offsets cover" if piece.widened else ""))
        out.append(f'<span title="{html.escape(tip)}" style="background:{CHIP_COLOURS[n % len(CHIP_COLOURS)]};'
                   f'color:#111111">{html.escape(shown) or "&nbsp;"}</span>')
    more = f"<p>… and {len(pieces) - MAX_TOKENS} more tokens</p>" if len(pieces) > MAX_TOKENS else ""
    return f'<pre style="white-space:pre-wrap">{"".join(out)}</pre>{more}'


class TokenView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Tokens of the selected item")
        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setAccessibleName("Token count")
        self.chips = QTextBrowser(self)
        self.chips.setAccessibleName("Token boundaries")
        self.ids = QPlainTextEdit(self)
        self.ids.setReadOnly(True)
        self.ids.setAccessibleName("Token ids")
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.chips)
        split.addWidget(self.ids)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(split, 1)
        self.pieces: list[core.TokenPiece] = []
        self.show_text("", None, None, None)

    def show_text(self, text: str, counter: core.TokenCounter | None, lock: threading.RLock | None,
                  title: str | None, counted: int | None = None) -> None:
        """``text`` as ``counter``'s tokens; ``counted`` is what the item costs in the request (its marginal
        count: the rendered form, role markers and separators included)."""
        self.pieces = []
        if not text or counter is None:
            self.header.setText("Select an item (a message, a passage, a tool) to see its text as tokens."
                                if counter is not None else "No token counter yet.")
            self.chips.setHtml("")
            self.ids.setPlainText("")
            return
        try:
            with lock if lock is not None else nullcontext():
                self.pieces = core.token_view(counter, text)
        except core.ContextInspectorError as exc:
            self.header.setText(f"{title}: the tokens cannot be shown: {exc}")
            self.chips.setHtml("")
            self.ids.setPlainText("")
            return
        cost = f"; in the request it costs {counted} (its rendered form, role markers included)" \
            if counted is not None else ""
        self.header.setText(f"{title}: {len(self.pieces)} tokens of its text with {counter.name}{cost}. "
                            "Hover a token for its id; the ids in order are below.")
        self.chips.setHtml(chips_html(self.pieces))
        self.ids.setPlainText(", ".join(str(p.id) for p in self.pieces))
