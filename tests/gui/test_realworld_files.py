"""Real files from other projects (../shared/realworld, read in place) open without errors: one row per
model call, each counted by core. Skipped when the shared files are absent."""
from __future__ import annotations

from pathlib import Path

import pytest

import core

REALWORLD = Path(__file__).resolve().parents[3] / "shared" / "realworld"
# the request bodies, cassettes, span files and platform exports (not the JSON schemas or chat templates)
FILES = sorted([*(REALWORLD / "anthropic-messages").glob("*.yaml"), *(REALWORLD / "openai-chat").glob("*"),
                *(REALWORLD / "platform-exports").glob("*.json"),
                *(p for p in (REALWORLD / "otlp-genai").glob("*.json") if not p.name.startswith("semconv-"))]) \
    if REALWORLD.is_dir() else []

pytestmark = [pytest.mark.realworld,
              pytest.mark.skipif(not FILES, reason=f"the shared real-world files are absent ({REALWORLD})")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_real_world_file_opens_without_errors(path, open_and_wait, counter, qtbot):
    window = open_and_wait(path)
    errors = [text for level, text in window.messages if level == "error"]
    assert errors == []
    imported = core.import_file(path)
    rows = window.request_model.rows()
    assert len(rows) == len(imported.requests)
    for row, request in zip(rows, imported.requests):
        assert row.kind == "imported" and row.result is not None
        assert row.result.input_tokens == core.count_imported(request, counter).input_tokens
        window.select_row(row)
        qtbot.waitUntil(window.is_idle, timeout=180000)  # the Request tab renders off the GUI thread
        assert window.detail.request.view is not None  # rendered with the counter's template
    if not imported.requests:  # a trace without model calls says so, as a warning
        assert any("no model calls" in text for level, text in window.messages if level == "warning")
