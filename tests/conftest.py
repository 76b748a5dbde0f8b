"""Shared pytest fixtures."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Nothing in the test suite may reach the Hugging Face hub: set before transformers/huggingface_hub
# are imported (huggingface_hub reads these once, at import).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

_TESTS_DIR = Path(__file__).resolve().parent
if str(_TESTS_DIR) not in sys.path:  # tokenizer_factory is importable with or without tests/__init__.py
    sys.path.insert(0, str(_TESTS_DIR))

import tokenizer_factory  # noqa: E402


# --------------------------------------------------------------------------------------------
# Hugging Face tokenizer directories built locally (tests/tokenizer_factory.py)


@pytest.fixture(scope="session")
def toy_tokenizer_dir(tmp_path_factory) -> Path:
    """A local tokenizer directory with our toy chat template. Shared: do not modify it
    (build your own with ``tokenizer_factory.build_toy_tokenizer_dir(tmp_path / ...)``)."""
    return tokenizer_factory.build_toy_tokenizer_dir(tmp_path_factory.mktemp("toy-tokenizer"))


@pytest.fixture(scope="session")
def real_template_tokenizer_dir(tmp_path_factory):
    """``build(key) -> Path``: a test tokenizer carrying a real chat template (read from
    ../shared/realworld/chat-templates) and that template's special tokens; one directory per key
    per session. Skips when the real-world templates are absent. Keys: ``tokenizer_factory.REAL_TEMPLATES``."""
    built: dict[str, Path] = {}

    def build(key: str) -> Path:
        spec = tokenizer_factory.REAL_TEMPLATES[key]
        if not spec.path.is_file():
            pytest.skip(f"real-world chat template {spec.filename} not found in "
                        f"{tokenizer_factory.CHAT_TEMPLATES_DIR} (the shared realworld folder is absent)")
        if key not in built:
            built[key] = tokenizer_factory.build_real_tokenizer_dir(tmp_path_factory.mktemp(f"tok-{key}"), key)
        return built[key]

    return build


# --------------------------------------------------------------------------------------------
# tiktoken's cache (../shared/tokenizers/tiktoken-cache: cl100k_base and o200k_base)

SHARED_TIKTOKEN_CACHE = _TESTS_DIR.parent / ".." / "shared" / "tokenizers" / "tiktoken-cache"


@pytest.fixture
def tiktoken_cache(monkeypatch) -> Path:
    """``TIKTOKEN_CACHE_DIR`` pointed at the shared cache; skips when it is absent."""
    if not (SHARED_TIKTOKEN_CACHE / "fb374d419588a4632f3f557e76b4b70aebbca790").is_file():
        pytest.skip(f"the shared tiktoken cache is absent ({SHARED_TIKTOKEN_CACHE}): openai: counters cannot load")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(SHARED_TIKTOKEN_CACHE.resolve()))
    return SHARED_TIKTOKEN_CACHE.resolve()
