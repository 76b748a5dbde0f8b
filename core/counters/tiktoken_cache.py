"""tiktoken's BPE files: where they are cached, and fetching one when the person asks.

tiktoken downloads an encoding the first time it is used unless the file is already in its cache
(``TIKTOKEN_CACHE_DIR``, named by the sha1 of the file's public address). Nothing here lets it do
that: a counter checks the cache first and says how to fill it, and ``fetch`` downloads one file,
only when called (``context-assembler tokenizers fetch o200k_base``), and checks its sha256.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import CounterError

CACHE_ENV = "TIKTOKEN_CACHE_DIR"
DEFAULT_CACHE = Path("~/.cache/context-assembler/tiktoken")


@dataclass(frozen=True)
class EncodingFile:
    name: str
    url: str  # the address tiktoken itself reads (its cache file is named by this address's sha1)
    sha256: str

    @property
    def cache_name(self) -> str:
        return hashlib.sha1(self.url.encode("utf-8")).hexdigest()


_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
ENCODINGS: dict[str, EncodingFile] = {
    "cl100k_base": EncodingFile("cl100k_base", _BLOB + "cl100k_base.tiktoken",
                                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": EncodingFile("o200k_base", _BLOB + "o200k_base.tiktoken",
                               "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}


_VERIFIED: set[str] = set()  # cached files whose sha256 was checked in this process


def cache_dir() -> Path:
    """``TIKTOKEN_CACHE_DIR`` when set, else the assembler's own cache folder."""
    value = os.environ.get(CACHE_ENV)
    return Path(value).expanduser() if value else DEFAULT_CACHE.expanduser()


def encoding_file(name: str) -> EncodingFile:
    try:
        return ENCODINGS[name]
    except KeyError:
        raise CounterError(f"unknown tiktoken encoding {name!r}; known: {', '.join(sorted(ENCODINGS))}") from None


def cached_path(name: str) -> Path | None:
    path = cache_dir() / encoding_file(name).cache_name
    return path if path.is_file() else None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def _cache_env() -> Iterator[None]:
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(cache_dir())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before


def load_encoding(name: str):
    """The tiktoken ``Encoding`` from the cache; a ``CounterError`` saying how to fetch it if it is not there."""
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - a declared dependency
        raise CounterError("openai: counters need the 'tiktoken' package") from None
    spec = encoding_file(name)
    path = cached_path(name)
    if path is None:
        raise CounterError(f"the tiktoken encoding {name} is not in the cache {cache_dir()}; run "
                           f"`context-assembler tokenizers fetch {name}` once (it downloads {spec.url}), or point "
                           f"{CACHE_ENV} at a folder that holds it")
    if str(path) not in _VERIFIED and _sha256(path.read_bytes()) != spec.sha256:
        raise CounterError(f"{path}: the cached {name} file does not match its sha256 ({spec.sha256[:12]}...); "
                           f"delete it and run `context-assembler tokenizers fetch {name}`")
    _VERIFIED.add(str(path))
    with _cache_env():
        return tiktoken.get_encoding(name)


def fetch(name: str, *, url: str | None = None, timeout: float = 60.0) -> Path:
    """Download one encoding into the cache (from ``url`` if given, else its public address), check its
    sha256, and return where it was written. Does nothing if a good copy is already there."""
    spec = encoding_file(name)
    target = cache_dir() / spec.cache_name
    if target.is_file() and _sha256(target.read_bytes()) == spec.sha256:
        return target
    source = url or spec.url
    try:
        with urllib.request.urlopen(source, timeout=timeout) as response:  # noqa: S310 - the person asked
            data = response.read()
    except (OSError, ValueError) as exc:
        raise CounterError(f"cannot download {name} from {source}: {exc}") from None
    if _sha256(data) != spec.sha256:
        raise CounterError(f"{source}: the downloaded file is not {name} (sha256 {_sha256(data)[:12]}..., expected "
                           f"{spec.sha256[:12]}...); nothing was written")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
        handle.write(data)
    os.replace(handle.name, target)
    return target
