"""Provider request bodies beyond Chat Completions and Messages: the OpenAI Responses API, Gemini /
Vertex ``generateContent`` and Bedrock Converse. Each is told by its body (a bare file) or by the URL
it was sent to (a cassette or a nock recording), and read by its module's ``import_body``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..model import ImportedRequest
from . import bedrock, gemini, responses


@dataclass(frozen=True)
class Provider:
    name: str  # the format name, a key of FORMATS
    is_body: Callable[[Any], bool]
    is_path: Callable[[str], bool]
    reader: Callable[..., ImportedRequest]
    model_from_path: Callable[[str], str | None] | None = None


PROVIDERS = (
    Provider(responses.FORMAT, responses.is_body, lambda p: p.rstrip("/").endswith("/responses"), responses.import_body),
    Provider(gemini.FORMAT, gemini.is_body, lambda p: gemini.model_from_path(p) is not None
             or p.endswith(("generateContent", "streamGenerateContent")), gemini.import_body, gemini.model_from_path),
    Provider(bedrock.FORMAT, bedrock.is_body, lambda p: bedrock.model_from_path(p) is not None, bedrock.import_body,
             bedrock.model_from_path),
)


def by_body(value: Any) -> Provider | None:
    """The provider whose request body ``value`` is (a bare body file)."""
    return next((p for p in PROVIDERS if p.is_body(value)), None)


def by_request(path: str, body: Any) -> Provider | None:
    """The provider of a recorded HTTP request: its URL path first, else its body."""
    if not isinstance(body, dict):
        return None
    return next((p for p in PROVIDERS if p.is_path(path)), None) or by_body(body)


def import_request(provider: Provider, body: Any, place: str, label: str, *, file_format: str, path: str = "",
                   response: Any = None, stream: list[dict[str, Any]] | None = None) -> ImportedRequest:
    extra: dict[str, Any] = {}
    if provider.model_from_path is not None and path:
        extra["model"] = provider.model_from_path(path)
    return provider.reader(body, place, label, file_format=file_format, response=response, stream=stream, **extra)
