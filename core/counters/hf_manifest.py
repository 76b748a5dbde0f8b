"""An ``hf:`` tokenizer directory's manifest (``tokenizer-manifest.json``): every file transformers may read, and
its chat template, pinned by sha256; read and checked when the counter loads, written by ``tokenizers pin``. And
transformers imported quietly (offline, no advisory warnings), and a counter's template arguments as written."""
from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Mapping

from ..errors import CounterError
from .base import sha256_file, sha256_text

MANIFEST_NAME = "tokenizer-manifest.json"


def read_manifest(directory: Path) -> dict | None:
    path = directory / MANIFEST_NAME
    if not path.exists() and not path.is_symlink():
        return None
    from ..errors import InputFileError
    from ..loading import read_json

    try:
        data = read_json(path)  # the input layer: a directory, FIFO or unreadable file is a clean refusal
    except InputFileError as exc:
        raise CounterError(f"not a readable JSON manifest: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise CounterError(f"{path}: a manifest needs a 'files' object of filename -> sha256")
    bad = [key for key in ("model", "revision", "template_sha256") if data.get(key) is not None
           and not isinstance(data[key], str)]
    bad += [f"files.{name}" for name, digest in data["files"].items() if not isinstance(digest, str)]
    if bad:
        raise CounterError(f"{path}: manifest field {bad[0]} must be a string")
    return data


EXTRA_TEMPLATES_DIR = "additional_chat_templates"  # transformers loads named templates (e.g. tool_use) from here


def _tokenizer_files(directory: Path) -> dict[str, str]:
    """sha256 of each file transformers may read: the directory's files and its named chat templates."""
    paths = [p for p in directory.iterdir() if p.is_file() and p.name != MANIFEST_NAME]
    extra = directory / EXTRA_TEMPLATES_DIR
    if extra.is_dir():
        paths += [p for p in extra.glob("*.jinja") if p.is_file()]
    return {p.relative_to(directory).as_posix(): sha256_file(p)
            for p in sorted(paths, key=lambda p: p.relative_to(directory).as_posix())}


def files_on_disk(directory: Path) -> dict[str, str]:
    """``_tokenizer_files``, a file that cannot be read a ``CounterError`` naming the directory."""
    try:
        return _tokenizer_files(directory)
    except OSError as exc:
        raise CounterError(f"hf:{directory}: cannot read its files ({type(exc).__name__}: {exc})") from None


def _template_sha256(template: str | dict) -> str:
    """One template: the sha256 of its text. Named templates (``default``, ``tool_use``...): the sha256 of
    all of them, since transformers picks ``tool_use`` by itself whenever tools are passed."""
    if isinstance(template, dict):
        return sha256_text(json.dumps(template, sort_keys=True, ensure_ascii=False))
    return sha256_text(template)


def write_manifest(directory: str | Path, *, model: str, revision: str | None = None) -> dict:
    """Pin every file of a tokenizer directory (and its chat template) in a manifest."""
    directory = Path(directory)
    files = _tokenizer_files(directory)
    from .hf import HFCounter

    counter = HFCounter(directory, verify=False)
    manifest = {"model": model, "revision": revision, "files": files,
                "template_sha256": counter.identity.template_sha256}
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


LOADED_KEPT = 4  # tokenizers kept loaded in this process, the most recently asked for
_loaded: OrderedDict[tuple, Any] = OrderedDict()
_loading = threading.Lock()


def loaded_tokenizer(directory: Path, files: dict[str, str], load: Callable[[], Any],
                     files_now: Callable[[], dict[str, str]]) -> Any:
    """``load()``'s tokenizer for ``directory``, loaded once per process for the same ``files`` (the sha256 of every
    file transformers may read there, as the caller has just read them): a counter asked for again (a replay under
    another counter, a row of another file) does not parse the tokenizer again, seconds for a large vocabulary.
    Counters only read the tokenizer they share; each keeps its own caches. A tokenizer is kept only when
    ``files_now()`` (the files hashed again after the load) is still ``files``: one changed meanwhile is not kept."""
    key = (str(directory.resolve()), tuple(sorted(files.items())))
    with _loading:
        hit = _loaded.get(key)
        if hit is not None:
            _loaded.move_to_end(key)
            return hit
    tokenizer = load()
    if files_now() != files:
        return tokenizer
    with _loading:
        _loaded[key] = tokenizer
        while len(_loaded) > LOADED_KEPT:
            _loaded.popitem(last=False)
    return tokenizer


def format_template_kwargs(kwargs: Mapping[str, Any]) -> str:
    """``{"enable_thinking": True}`` -> ``enable_thinking=true`` (the spelling ``--chat-template-kwargs`` reads)."""
    return ",".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(kwargs.items()))


def _quiet_transformers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import logging

    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        import transformers
    except ImportError:  # the standalone (PyInstaller) application leaves it out
        raise CounterError("hf: counters need the 'transformers' package, which this installation does not "
                           "include; use mistral:<tokenizer>, or a pip install of context-inspector") from None

    transformers.logging.set_verbosity_error()
    return transformers
