"""A finding of the audit: its rule, severity, message and where in the request it points."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str  # "error" | "warning"
    message: str
    message_index: int | None = None
    start: int | None = None
    end: int | None = None
    section: str | None = None
    item_id: str | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def location(self) -> str:
        if self.message_index is None:
            return "request"
        if self.start is None:
            return f"message {self.message_index}"
        return f"message {self.message_index}, chars {self.start}-{self.end}"
