"""The records of the chunk index and the expansion record (pydantic models, parsed strictly)."""
from __future__ import annotations

from typing import Any, Literal, Mapping, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ..contracts import problems_from
from .ids import WindowError, _refuse


# --------------------------------------------------------------------------------------------
# shapes: strict, unknown keys refused, so an id covers everything a record carries


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Section(_Record):
    section_id: str
    title: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Document(_Record):
    source_id: str = Field(min_length=1)
    version: str
    path: str
    url: str | None = None
    document_revision: str
    text: str
    sections: list[Section]


class Chunk(_Record):
    chunk_id: str
    source_id: str
    section_id: str
    order: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = Field(min_length=1)


class ChunkIndex(_Record):
    schema_version: Literal[1]
    index_id: str
    documents: list[Document]
    chunks: list[Chunk]


class SeedRank(_Record):
    chunk_id: str
    rank: int = Field(ge=1)


class Member(_Record):
    chunk_id: str
    role: Literal["seed", "neighbor"]
    retrieval_rank: int | None


class Window(_Record):
    window_id: str
    source_id: str
    version: str
    document_revision: str
    section_id: str
    section_title: str
    start_order: int = Field(ge=0)
    end_order: int = Field(ge=0)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    chunk_ids: list[str]
    seed_ids: list[str]
    seed_ranks: list[SeedRank]
    members: list[Member]
    text: str


class ExpansionRecord(_Record):
    schema_version: Literal[1]
    execution_mode: Literal["offline-explicit-seed-expansion"]
    index_id: str
    radius: int = Field(ge=0)
    seed_ids: list[str]
    groups: list[Window]


class SourceDocument(_Record):
    """A document as ``build_index`` takes it; ``## `` headings open its sections."""

    source_id: str = Field(min_length=1)
    version: str
    path: str
    url: str | None = None
    text: str


_Model = TypeVar("_Model", bound=_Record)


def _parse(model: type[_Model], data: Any, where: str) -> _Model:
    if isinstance(data, BaseModel):
        data = data.model_dump()
    if not isinstance(data, Mapping):
        _refuse(where, f"must be a JSON object, not {type(data).__name__}", "contract")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise WindowError([(f"{where}.{path}" if path else where, msg) for path, msg in problems_from(exc)],
                          rule="contract") from None
