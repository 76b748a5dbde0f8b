"""RAG request files: an index, its windows and a question, read from disk and assembled."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping, NamedTuple

from pydantic import Field, ValidationError, model_validator
from ..assembly import assemble
from ..contracts import Request, problems_from
from ..counting import TokenCounter
from ..errors import RequestError
from ..loading import read_json
from ..result import AssemblyResult
from .ids import DEFAULT_INSTRUCTIONS, RAG_KIND
from .records import _Record
from .request import finish_rag_result, make_request, rag_extras


# --------------------------------------------------------------------------------------------
# RAG request files


class RagRequestFile(_Record):
    """``{"kind": "rag-windows", ...}``: the index (inline or by path), the expansion record, the ranked
    seeds, the question and the budget. Paths are relative to the file."""

    kind: Literal["rag-windows"]
    id: str | None = Field(default=None, min_length=1)
    index: dict[str, Any] | None = None
    index_path: str | None = Field(default=None, min_length=1)
    windows: dict[str, Any] | None = None
    windows_path: str | None = Field(default=None, min_length=1)
    ranked_seed_ids: list[str]
    question: str = Field(min_length=1)
    instructions: str = Field(default=DEFAULT_INSTRUCTIONS, min_length=1)
    context_limit: int
    max_new_tokens: int
    margin: int = 0

    @model_validator(mode="after")
    def _one_of_each(self) -> "RagRequestFile":
        if (self.index is None) == (self.index_path is None):
            raise ValueError("give the chunk index either inline ('index') or by path ('index_path'), exactly once")
        if self.windows is not None and self.windows_path is not None:
            raise ValueError("give the expansion record either inline ('windows') or by path ('windows_path'), "
                             "not both")
        return self


class LoadedRag(NamedTuple):
    """A RAG request file, validated: the request to assemble, its window receipts and the extra
    result fields (``index_id``, ``ranked_seed_ids``). Unpacks as ``request, receipts, extras``."""

    request: Request
    receipts: list[dict[str, Any]]
    extras: dict[str, Any]


def is_rag_request(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == RAG_KIND


def rag_request_from(data: Any, *, base_dir: str | Path = ".", source: str | None = None,
                     windows: Mapping[str, Any] | None = None) -> LoadedRag:
    """Validate a decoded RAG request object; ``windows`` (e.g. from ``--windows``) replaces its record."""
    try:
        return _rag_request_from(data, Path(base_dir), windows)
    except RequestError as exc:
        raise exc.with_source(source) if source else exc


def _rag_request_from(data: Any, base_dir: Path, windows: Mapping[str, Any] | None) -> LoadedRag:
    if not is_rag_request(data):
        raise RequestError([("kind", f"a RAG request is a JSON object with \"kind\": \"{RAG_KIND}\"")])
    try:
        spec = RagRequestFile.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc)) from None
    index = spec.index if spec.index is not None else read_json(base_dir / str(spec.index_path))
    if windows is None:
        windows = spec.windows if spec.windows is not None else (
            read_json(base_dir / spec.windows_path) if spec.windows_path is not None else None)
    if windows is None:
        raise RequestError([("windows", "no expansion record: give 'windows', 'windows_path' or --windows")])
    request, receipts = make_request(index, windows, spec.ranked_seed_ids, spec.question,
                                     context_limit=spec.context_limit, max_new_tokens=spec.max_new_tokens,
                                     margin=spec.margin, instructions=spec.instructions, request_id=spec.id)
    return LoadedRag(request, receipts, rag_extras(windows))


def load_rag_request(path: str | Path, *, windows_path: str | Path | None = None) -> LoadedRag:
    """Read and validate a RAG request file; ``windows_path`` supplies or replaces its expansion record."""
    path = Path(path)
    windows = read_json(windows_path) if windows_path is not None else None
    source = str(path) if windows_path is None else f"{path} (windows from {windows_path})"
    return rag_request_from(read_json(path), base_dir=path.parent, source=source, windows=windows)


def assemble_rag(loaded: LoadedRag, counter: TokenCounter, *, reference: bool = False,
                 stats: dict[str, int] | None = None) -> AssemblyResult:
    """Assemble a loaded RAG request and attach its receipts; ``loaded._replace(request=...)`` may
    first change the budget (the windows and receipts stay valid)."""
    request, receipts, extras = loaded
    result = assemble(request, counter, reference=reference, stats=stats)
    return finish_rag_result(result, request, receipts, counter, extras)


def assemble_rag_file(path: str | Path, counter: TokenCounter, *, windows_path: str | Path | None = None,
                      reference: bool = False) -> AssemblyResult:
    """``load_rag_request`` then ``assemble_rag``: the whole path for one file."""
    return assemble_rag(load_rag_request(path, windows_path=windows_path), counter, reference=reference)
