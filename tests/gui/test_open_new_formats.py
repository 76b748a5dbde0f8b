"""The formats added for the Responses API, Gemini, Bedrock, OpenTelemetry JS spans and agent
transcripts open in the inspector through its public opening method: one row per model call, each
counted by core, nothing reported as an error. Our synthetic fixtures, and the real files in
../shared/realworld2 (read in place; skipped when absent)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import core

FORMATS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
REALWORLD2 = Path(__file__).resolve().parents[3] / "shared" / "realworld2"
OURS = [FORMATS_DIR / n for n in ("responses_body.json", "gemini_body.json", "bedrock_body.json",
                                  "nock_bedrock.json", "cassette_providers.json", "otel_js_spans.json",
                                  "claude_code_session.jsonl", "codex_rollout.jsonl")]
# the real files of the new formats; read by the core tests only: the 170-call Claude Code session (size), and
# agent-sessions' Codex schema fixture, whose items are a catalogue of line types rather than a conversation
# (a custom tool call answered after three later items), so the counter's template refuses some of its turns
CORE_ONLY = ("claude-code-viewer-", "agent-sessions-stage0-codex-")
REAL = sorted(p for d in ("openai-responses", "gemini-generate", "bedrock-converse", "agent-transcripts")
              for p in (REALWORLD2 / d).glob("*") if not p.name.startswith(CORE_ONLY)) if REALWORLD2.is_dir() else []


def _opens_faithfully(path, open_and_wait, counter, qtbot):
    window = open_and_wait(path)
    assert [text for level, text in window.messages if level == "error"] == []
    imported = core.import_file(path)
    rows = window.request_model.rows()
    calls = imported.calls()  # the calls read and, in their place, the ones that could not be (rows of their own)
    assert len(rows) == len(calls) > 0
    unreadable = [row for row, call in zip(rows, calls) if isinstance(call, core.FailedCall)]
    assert all(row.kind == "invalid" and call.reason in (row.error or "")
               for row, call in zip(rows, calls) if isinstance(call, core.FailedCall))
    rows = [row for row, call in zip(rows, calls) if not isinstance(call, core.FailedCall)]
    assert len(rows) == len(imported.requests) and len(unreadable) == len(imported.failed)
    for row, request in zip(rows, imported.requests):
        assert row.kind == "imported" and row.result is not None
        assert row.result.input_tokens == core.count_imported(request, counter).input_tokens
    window.select_row(rows[-1])
    qtbot.waitUntil(window.is_idle, timeout=180000)  # the Request tab renders off the GUI thread
    assert window.detail.request.view is not None
    return window


@pytest.mark.parametrize("path", OURS, ids=lambda p: p.name)
def test_new_format_fixture_opens(path, open_and_wait, counter, qtbot):
    window = _opens_faithfully(path, open_and_wait, counter, qtbot)
    family = {"claude_code_session.jsonl": "transcript", "cassette_providers.json": "providers",
              "otel_js_spans.json": "otel-js"}.get(path.name)
    if family and os.environ.get("I12A_SCREENSHOTS"):
        window.resize(1280, 800)
        window.grab().save(f"/tmp/i12a-{family}.png")


@pytest.mark.realworld
@pytest.mark.skipif(not REAL, reason=f"the shared real-world files are absent ({REALWORLD2})")
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_new_format_real_file_opens(path, open_and_wait, counter, qtbot):
    _opens_faithfully(path, open_and_wait, counter, qtbot)


def test_a_transcript_with_an_unreadable_turn_opens_the_rest(tmp_path, open_and_wait, counter, qtbot):
    rows = (FORMATS_DIR / "codex_rollout.jsonl").read_text().splitlines()
    rows[12] = rows[12].replace('"content": [{"type": "input_text", "text": "Patch util.py and look up the docs"}]',
                                '"content": 7')
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(rows) + "\n")
    imported = core.import_file(path)
    assert len(imported.requests) == 3  # the turn after the broken line is the one left out
    window = _opens_faithfully(path, open_and_wait, counter, qtbot)
    assert any("line 13.payload.content" in text for _, text in window.messages)
