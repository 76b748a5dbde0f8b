"""What a chat template does with whitespace at a message's edges, learned once per assembly from tiny requests.

A history turn's shape (``core.assembly_fast``) is the roles of its messages and the whitespace at their edges
that the template keeps: whether it trims a role's edges is learned from three tiny requests, and whether kept
whitespace beside a control token costs its own text tokens and no more from four more.
"""
from __future__ import annotations

from .contracts import ChatMessage

# Whitespace a template either keeps (it adds tokens) or trims from a message's edge.
_EDGE_PROBE = " \t "


class TemplateEdges:
    """The default builder's probes of a template's edges (``FastBuilder`` holds ``counter``, ``_trims``,
    ``_apart`` and ``_synthetic``, the count of a tiny request)."""

    def _role_count(self, role: str, content: str) -> int:
        """Complete count of a tiny conversation with one ``role`` message of ``content`` in it."""
        messages = [ChatMessage(role="user", content="Word"), ChatMessage(role="assistant", content="Word"),
                    ChatMessage(role="user", content="Word")]
        messages[0 if role == "user" else 1] = ChatMessage(role=role, content=content)
        return self._synthetic(messages)

    def _trimmed(self, role: str) -> tuple[bool, bool] | None:
        """Whether the template trims ``role``'s leading and trailing whitespace (None: unknown)."""
        if role not in self._trims:
            try:
                base = self._role_count(role, "Word")
                self._trims[role] = (self._role_count(role, _EDGE_PROBE + "Word") == base,
                                     self._role_count(role, "Word" + _EDGE_PROBE) == base)
            except Exception:  # a template that refuses the tiny request: keep to untouched edges
                self._trims[role] = None
        return self._trims[role]

    def _edge_apart(self, role: str, side: int) -> bool:
        """Whether whitespace kept at this edge (0 leading, 1 trailing) of a ``role`` message costs its own
        text tokens and no more (Mistral's control tokens; not Qwen's ``user\n`` header, which a leading
        newline joins): then the edge need not be part of the shape. Only where the template writes an added
        (control) token right beside that edge: the tokenizer cuts its input there before anything else, so no
        whitespace of any length joins the template's own text (a header ending in a newline, whose whitespace
        runs a pre-tokeniser joins, passes the four probes by chance for some tokenizers and fails on others)."""
        key = (role, side)
        if key not in self._apart:
            try:
                if not self._edge_beside_token(role, side):
                    self._apart[key] = False
                    return False
                base, text = self._role_count(role, "Word"), self.counter.text_count("Word")
                contents = [(ws + "Word") if side == 0 else ("Word" + ws) for ws in (" ", "\n", "\n\n", _EDGE_PROBE)]
                self._apart[key] = all(
                    self._role_count(role, c) - base == self.counter.text_count(self._form(role, c)) - text
                    for c in contents)
            except Exception:
                self._apart[key] = False
        return self._apart[key]

    def _edge_beside_token(self, role: str, side: int) -> bool:
        """Whether the rendered text has an added token right before (0) or after (1) a ``role`` message's content."""
        marker = "Qzxv"
        messages = [ChatMessage(role="user", content="Word"), ChatMessage(role="assistant", content="Word"),
                    ChatMessage(role="user", content="Word")]
        messages[0 if role == "user" else 1] = ChatMessage(role=role, content=marker)
        text = self.counter.render_text(messages, [])
        at = text.find(marker)
        if at < 0 or text.find(marker, at + 1) >= 0:
            return False
        tokens = [t for t in {*self.counter.control_token_strings(), *self.counter.untrusted_spellings()} if t]
        return any(text[:at].endswith(t) for t in tokens) if side == 0 else \
            any(text.startswith(t, at + len(marker)) for t in tokens)

    def _form(self, role: str, content: str) -> str | None:
        """``content`` as the template tokenises it, or None when that is not known."""
        trims = self._trimmed(role)
        if trims is None:
            return content if content == content.strip() else None
        if trims[0]:
            content = content.lstrip()
        if trims[1]:
            content = content.rstrip()
        return content
