"""Agent transcripts (Claude Code, Codex CLI rollouts) and OpenTelemetry JS span lists: our synthetic
fixtures, the real files in ../shared/realworld2 (read in place), bad input and fuzzing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats_fuzz import import_or_refuse, mutations
from hypothesis import HealthCheck, given, settings
from support import FIXTURES, default_counter

from core.formats import FormatError, count_imported, import_file

FORMATS_DIR = FIXTURES / "formats"
REALWORLD2 = Path(__file__).resolve().parents[2] / "shared" / "realworld2"


def roles(request) -> str:
    return "".join(m.role[0] for m in request.messages)


def notes(request) -> str:
    return "\n".join(str(w) for w in request.warnings)


def lines(name):
    return [json.loads(line) for line in (FORMATS_DIR / name).read_text().splitlines() if line.strip()]


def real(relative: str) -> Path:
    path = REALWORLD2 / relative
    if not path.is_file():
        pytest.skip(f"the shared real-world files are absent ({path} not found)")
    return path


# ------------------------------------------------------------------------------------------
# Claude Code


def test_claude_code_turns_chains_sidechain_and_compaction():
    imported = import_file(FORMATS_DIR / "claude_code_session.jsonl")
    assert imported.format.name == "claude-code-transcript"
    first, second, side, fourth, after = imported.requests
    # one call per assistant turn: four lines sharing message.id msg_01 are one turn
    assert roles(first) == "uu" and "[image: image/png, 8 bytes]" in first.messages[1].content
    assert first.output[0].content.startswith("[thinking:") and [c.id for c in first.output[0].tool_calls] == [
        "toolu_read1", "toolu_read2"]
    r = first.recorded
    assert (r.input_tokens, r.cached_input_tokens, r.cache_write_tokens, r.output_tokens) == (12803, 12000, 800, 90)
    assert (r.started_at, r.entry_id, r.parent_id, r.session_id) == ("2026-03-01T10:00:05.000Z", "a1", "u1b",
                                                                   "sess-cc-1")
    assert r.reconstructed and r.model == "claude-sonnet-4-5-20250929" and r.finish_reason == "tool_use"
    assert "reconstructed from a Claude Code transcript" in notes(first)
    # the merged assistant turn, then one tool message per result; no empty user message for them
    assert roles(second) == "uuatt" and len(second.messages[2].tool_calls) == 2
    assert [m.tool_call_id for m in second.messages[3:]] == ["toolu_read1", "toolu_read2"]
    assert roles(side) == "u" and "sidechain" in side.label and "a sub-agent's conversation" in notes(side)
    # the API-error line Claude Code wrote itself is neither a call nor part of the input
    assert roles(fourth) == "uuattat" and "model <synthetic>" in notes(fourth)
    assert any("written by Claude Code itself" in str(w) for w in imported.warnings)
    # after the compaction the chain starts from the summary
    assert roles(after) == "uu" and after.messages[0].content.startswith("This session is being continued")
    assert "the compaction summary stands in" in notes(after) and "compacted here" in notes(after)
    assert any("session summary 'Fix the flaky date test'" in str(w) for w in imported.warnings)
    assert count_imported(second, default_counter()).input_tokens > 0


def test_claude_code_real_session():
    imported = import_file(real("agent-transcripts/claude-code-viewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
    # 262 assistant lines carry 170 distinct message ids: 170 turns, 161 of them in sidechains
    assert len(imported.requests) == 170
    assert sum("sidechain" in r.label for r in imported.requests) == 161
    last = imported.requests[-1]
    # its chain: 31 lines, 8 assistant turns, 3 user messages, 11 tool results (read from the file)
    assert roles(last).count("a") == 8 and roles(last).count("u") == 3 and roles(last).count("t") == 11
    assert sum(len(m.tool_calls) for m in last.messages) == 11
    r = last.recorded
    assert (r.input_tokens, r.cached_input_tokens, r.cache_write_tokens) == (6 + 1004 + 20542, 20542, 1004)
    assert r.model == "claude-sonnet-4-20250514" and r.session_id == "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    calls = {c.id for q in imported.requests for m in q.messages + q.output for c in m.tool_calls}
    results = {m.tool_call_id for q in imported.requests for m in q.messages if m.role == "tool"}
    assert len(calls) == 167 and results <= calls  # every tool_use of the file, each result paired


def test_claude_code_schema_fixture():
    imported = import_file(real("agent-transcripts/agent-sessions-stage0-claude-small.jsonl"))
    assert imported.format.name == "claude-code-transcript" and imported.requests
    text = "\n".join(str(w) for w in imported.warnings)
    assert "model <synthetic>" in text and "attachment" in text and "sidechain" in text
    assert all(r.recorded.reconstructed for r in imported.requests)


# ------------------------------------------------------------------------------------------
# Codex CLI


def test_codex_rollout_turns_usage_and_compaction():
    imported = import_file(FORMATS_DIR / "codex_rollout.jsonl")
    assert imported.format.name == "codex-rollout"
    first, second, third, after = imported.requests
    assert roles(first) == "ssuu" and first.messages[0].content == "You are Codex, a coding agent."
    assert first.messages[1].content == "<permissions>workspace-write</permissions>"  # developer message
    assert first.output[0].content.startswith("[reasoning:") and first.output[0].tool_calls[0].id == "call_ls"
    r = first.recorded
    assert (r.model, r.input_tokens, r.cached_input_tokens, r.output_tokens) == ("gpt-5-codex", 5200, 4096, 40)
    assert r.reconstructed and r.session_id == "sess-cx-1" and r.started_at == "2026-04-02T09:00:02.000Z"
    assert roles(second) == "ssuuat" and second.messages[5].tool_call_id == "call_ls"
    assert second.recorded.cached_input_tokens == 5120
    assert roles(third) == "ssuuatau" and third.output[0].tool_calls[0].name == "apply_patch"
    assert "[web_search_call:" in third.output[0].content
    assert roles(after) == "suuu" and after.messages[2].content == "Summary: util.py patched."
    assert "compacted here" in notes(after) and after.recorded.input_tokens == 900
    assert any("1 response_item/ghost_snapshot" in str(w) for w in imported.warnings)


def test_codex_real_rollouts():
    imported = import_file(real("agent-transcripts/codex-transcripts-sample_session.jsonl"))
    # 16 response items: assistant-side runs start at lines 4, 7, 9, 11, 13, 15, 17
    assert [r.label.split("(")[1].rstrip(")") for r in imported.requests] == [
        "line 4", "line 7", "line 9", "line 11", "line 13", "line 15", "line 17"]
    last = imported.requests[-1]
    assert roles(last) == "suuatauauauauau" and last.messages[0].content == "(instructions omitted)"
    assert [c.id for m in last.messages for c in m.tool_calls] == ["call_1"]
    assert "[image: image/gif, 43 bytes]" in last.messages[8].content
    imported = import_file(real("agent-transcripts/agent-sessions-stage0-codex-small.jsonl"))
    assert imported.format.name == "codex-rollout" and imported.requests
    text = "\n".join(str(w) for w in imported.warnings)
    assert "another session_meta" in text and "compacted here" in text
    assert imported.requests[2].recorded.input_tokens == 16341


# ------------------------------------------------------------------------------------------
# OpenTelemetry JS spans (Vercel AI SDK)


def test_otel_js_spans_of_the_vercel_ai_sdk():
    imported = import_file(FORMATS_DIR / "otel_js_spans.json")
    assert imported.format.name == "otel-js-spans"
    (request,) = imported.requests
    assert roles(request) == "suat" and request.recorded.format == "otel-js-spans/vercel-ai"
    assert "[image: image/png, 8 bytes]" in request.messages[1].content
    assert request.messages[2].tool_calls[0].id == "tc_1" and request.messages[3].tool_call_id == "tc_1"
    assert [t.name for t in request.tools] == ["getWeather"]
    r = request.recorded
    assert (r.model, r.input_tokens, r.cached_input_tokens, r.span_id, r.parent_id) == (
        "gpt-4o-mini", 96, 0, "b7ad6b7169203331", "00f067aa0ba902b7")
    assert r.started_at == "2026-03-01T09:23:20.100000Z"
    assert any("not model calls and were skipped: ai.generateText, ai.toolCall" in str(w) for w in imported.warnings)


def test_otel_js_spans_as_json_lines(tmp_path):
    spans = json.loads((FORMATS_DIR / "otel_js_spans.json").read_text())
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    imported = import_file(path)
    assert imported.format.name == "otel-js-spans" and roles(imported.requests[0]) == "suat"
    assert imported.requests[0].recorded.source_place == "line 2.attributes"


# ------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("name, line, fmt, place", [
    ("claude_code_session.jsonl", 3, "claude-code-transcript", "line 3.message.content[1]"),
    ("codex_rollout.jsonl", 13, "codex-rollout", "line 13.payload.content"),
])
def test_a_broken_transcript_line_names_format_and_place(tmp_path, name, line, fmt, place):
    rows = lines(name)
    target = rows[line - 1]
    if fmt == "claude-code-transcript":
        target["message"]["content"][1] = 7
    else:
        target["payload"]["content"] = 7
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imported = import_file(path)  # only the calls that include the line are unreadable: the rest open
    assert any(str(w).startswith(place) and "could not be read" in str(w) for w in imported.warnings)
    assert imported.failed and all(f.place.startswith(place) for f in imported.failed)  # rows of their own
    assert imported.requests and imported.format.name == fmt


@pytest.mark.parametrize("name, fmt", [("claude_code_session.jsonl", "claude-code-transcript"),
                                       ("codex_rollout.jsonl", "codex-rollout"),
                                       ("otel_js_spans.json", "otel-js-spans")])
def test_truncated_transcripts_name_format_and_line(tmp_path, name, fmt):
    text = (FORMATS_DIR / name).read_text()
    path = tmp_path / name
    cut = text[:len(text) // 2]
    path.write_text(cut)
    with pytest.raises(FormatError) as info:
        import_file(path)
    assert info.value.format_name == fmt and info.value.line is not None


def test_a_transcript_line_that_is_not_an_object(tmp_path):
    path = tmp_path / "t.jsonl"
    rows = lines("claude_code_session.jsonl")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "[1, 2]\n")
    with pytest.raises(FormatError) as info:
        import_file(path)
    assert (info.value.format_name, info.value.place) == ("claude-code-transcript", "line 20")


# ------------------------------------------------------------------------------------------
# fuzzing


FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(mutations(lines("claude_code_session.jsonl")))
def test_fuzzed_claude_code_transcripts(rows):
    import_or_refuse(rows, "jsonl")


@FUZZ
@given(mutations(lines("codex_rollout.jsonl")))
def test_fuzzed_codex_rollouts(rows):
    import_or_refuse(rows, "jsonl")


@FUZZ
@given(mutations(json.loads((FORMATS_DIR / "otel_js_spans.json").read_text())))
def test_fuzzed_otel_js_spans(spans):
    import_or_refuse(spans)
