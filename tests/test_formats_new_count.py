"""``context-assembler count`` on every format added for issue 12: exit 0, one counted request per
model call, and the provider's recorded input tokens as the drift reference."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, default_counter

import core.cli
from core.cli import main
from core.counting import make_counter

FORMATS_DIR = FIXTURES / "formats"


@pytest.fixture(autouse=True)
def _one_default_counter(monkeypatch):
    monkeypatch.setattr(core.cli, "make_counter", lambda spec=None: default_counter() if spec is None
                        else make_counter(spec))


@pytest.mark.parametrize("name, fmt, recorded", [
    ("responses_body.json", "openai-responses", [None]),
    ("gemini_body.json", "gemini-generate", [None]),
    ("bedrock_body.json", "bedrock-converse", [None]),
    ("nock_bedrock.json", "nock-recording", [17]),
    ("cassette_providers.json", "vcr-cassette", [31, 1200, 4100, 5, 12]),
    ("otel_js_spans.json", "otel-js-spans", [96]),
    ("claude_code_session.jsonl", "claude-code-transcript", [12803, 13305, 2004, 13706, 2158]),
    ("codex_rollout.jsonl", "codex-rollout", [5200, 5300, None, 900]),
])
def test_count_reads_every_new_format_with_the_provider_figure(capsys, name, fmt, recorded):
    code = main(["count", str(FORMATS_DIR / name), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["format"] == fmt
    assert [r.get("provider_input_tokens") for r in report["requests"]] == recorded
    for request in report["requests"]:
        assert "error" not in request and request["input_tokens"] > 0
        if request.get("provider_input_tokens") is not None:
            assert request["count_drift"] == request["input_tokens"] - request["provider_input_tokens"]


def test_count_text_names_the_reconstruction(capsys):
    code = main(["count", str(FORMATS_DIR / "claude_code_session.jsonl")])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "provider reported: 12803 input tokens" in out and "reconstructed from a Claude Code transcript" in out
