"""``--chat-template-kwargs`` reaches every command that counts: session, experiment and sweep too."""
from __future__ import annotations

import argparse
import json

import pytest
from support import FIXTURES, SHARED

from core.cli import main
from core.commands.sweep import _spec
from core.errors import RequestError

QWEN = SHARED / "tokenizers" / "hf" / "qwen3"


@pytest.mark.skipif(not QWEN.is_dir(), reason="../shared/tokenizers/hf/qwen3 is absent")
def test_session_counts_with_the_template_switches_given(capsys):
    path = str(FIXTURES / "sessions" / "agent_compaction.langfuse.json")
    figures = {}
    for switch in ("", "enable_thinking=false"):
        argv = ["session", path, "--counter", f"hf:{QWEN}", "--json"] + (["--chat-template-kwargs", switch] if switch else [])
        assert main(argv) == 0
        data = json.loads(capsys.readouterr().out)
        figures[switch] = (data["counter"], data["calls"][0]["input_tokens"])
    assert figures["enable_thinking=false"][0].endswith("?enable_thinking=false")
    assert figures["enable_thinking=false"][1] == figures[""][1] + 4  # Qwen3's empty <think></think> block


def test_sweep_carries_the_switches_in_the_spec_its_workers_build():
    spec = _spec(argparse.Namespace(counter="hf:/tok", chat_template_kwargs="enable_thinking=true"))
    assert spec == "hf:/tok?enable_thinking=true"
    assert _spec(argparse.Namespace(counter="hf:/tok?a=1", chat_template_kwargs="b=2")) == "hf:/tok?a=1,b=2"
    with pytest.raises(RequestError, match="hf:"):
        _spec(argparse.Namespace(counter="mistral:tekken_240911", chat_template_kwargs="enable_thinking=true"))
