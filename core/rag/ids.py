"""Constants, the refusal error and the content-derived identifiers of the RAG window adapter."""
from __future__ import annotations
import hashlib
import json
from typing import Any, Mapping, NoReturn
from ..errors import RequestError


SCHEMA_VERSION = 1
EXPANSION_MODE = "offline-explicit-seed-expansion"
RAG_KIND = "rag-windows"
DEFAULT_INSTRUCTIONS = ("Answer the current question only from the supplied reference passages and cite the "
                        "passage id you used. If the passages do not answer it, say so.")
SCOPE = ("whole-window admission; complete serialized request includes source labels, wrappers, chat template "
         "and generation prefix")


class WindowError(RequestError):
    """A chunk index, expansion record or ranked seed list that does not hold up; refused before assembly.

    ``rule`` names the broken rule (``text-mismatch``, ``seed-ranking``...), ``window_id`` and
    ``chunk_id`` the items concerned (full ids; the message shortens them).
    """

    def __init__(self, problems: list[tuple[str, str]], *, source: str | None = None, rule: str = "contract",
                 window_id: str | None = None, chunk_id: str | None = None):
        super().__init__(problems, source=source)
        self.rule = rule
        self.window_id = window_id
        self.chunk_id = chunk_id

    def with_source(self, source: str) -> "WindowError":
        return WindowError(self.problems, source=source, rule=self.rule, window_id=self.window_id,
                           chunk_id=self.chunk_id)


def _refuse(where: str, message: str, rule: str, *, window_id: str | None = None,
            chunk_id: str | None = None) -> NoReturn:
    raise WindowError([(where, message)], rule=rule, window_id=window_id, chunk_id=chunk_id)


def short(identifier: str | None) -> str:
    """An id as messages show it: 8 characters and an ellipsis."""
    if identifier is None:
        return "nothing"
    return identifier[:8] + "…" if len(identifier) > 12 else identifier


# --------------------------------------------------------------------------------------------
# identifiers


def canonical_sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_revision(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def section_id(source_id: str, revision: str, title: str, start: int, end: int) -> str:
    return canonical_sha256({"source_id": source_id, "document_revision": revision, "title": title,
                             "start": start, "end": end})


def chunk_id(source_id: str, revision: str, start: int, end: int, text: str) -> str:
    return canonical_sha256({"source_id": source_id, "document_revision": revision, "start": start, "end": end,
                             "text": text})


def content_id(record: Mapping[str, Any], id_key: str) -> str:
    """sha256 of every field but the id itself (``index_id``, ``window_id``)."""
    return canonical_sha256({k: v for k, v in record.items() if k != id_key})
