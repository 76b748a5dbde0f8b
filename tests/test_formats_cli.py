"""``context-assembler count FILE``: the format found, per-message tokens, the total, the findings and
the provider's figures with the drift; exit 0, or 2 with one clear line on bad input."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, default_counter

import core.cli
from core import DEFAULT_COUNTER, make_counter
from core.cli import main
from core.formats import count_imported, import_file

FORMATS_DIR = FIXTURES / "formats"


@pytest.fixture(autouse=True)
def _one_default_counter(monkeypatch):
    """The default counter takes ~0.7 s to build: the command gets the session's own."""
    monkeypatch.setattr(core.cli, "make_counter", lambda spec=None, **kw: default_counter()
                        if spec in (None, DEFAULT_COUNTER) and not kw else make_counter(spec, **kw))


def run(capsys, *argv):
    """``count`` with the embedded counter unless the test names one (the command's own default is ``auto``:
    tests/test_counter_registry.py covers it)."""
    argv = tuple(map(str, argv))
    code = main(["count", *argv, *(() if "--counter" in argv else ("--counter", DEFAULT_COUNTER))])
    out, err = capsys.readouterr()
    return code, out, err


def test_count_prints_format_messages_total_findings_and_drift(capsys):
    path = FORMATS_DIR / "openai_request_response.json"
    code, out, err = run(capsys, path)
    assert code == 0 and err == ""
    expected = count_imported(import_file(path).requests[0], default_counter())
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: openai-chat: OpenAI Chat Completions request body")
    assert "counter: mistral:tekken_240911; 1 request(s)" in lines[1]
    assert "format openai-chat; model gpt-4o-mini; provider openai" in out
    message_rows = [line for line in lines if line.strip().startswith(("0 ", "1 ", "2 ", "3 ", "4-6 "))]
    assert len(message_rows) == 5  # four messages and the exchange costed as one
    assert f"total: {expected.input_tokens} input tokens (mistral:tekken_240911, as recorded)" in out
    drift = expected.input_tokens - 412
    assert f"provider reported: 412 input tokens; drift {drift:+d} (ours - theirs); 27 output tokens; " \
           "finish_reason stop" in out
    assert "findings: none" in out


def test_count_json_output(capsys):
    code, out, _ = run(capsys, FORMATS_DIR / "otlp_traces.json", "--json", "--context-limit", "8192")
    assert code == 0
    report = json.loads(out)
    assert report["format"] == "otlp-json" and len(report["requests"]) == 4
    first = report["requests"][0]
    assert (first["trace_id"], first["span_id"]) == ("a1" * 16, "1000000000000002")
    assert sum(e["tokens"] for e in first["entries"]) == first["input_tokens"]
    assert first["count_drift"] == first["input_tokens"] - 240
    assert any("not model calls" in w for w in report["warnings"])
    truncated = report["requests"][1]
    assert [f["rule"] for f in truncated["findings"]] == ["truncated-answer"]


def test_count_reports_adaptations_and_broken_structure(capsys):
    code, out, _ = run(capsys, FORMATS_DIR / "anthropic_body.json")
    assert code == 0
    assert "(mistral:tekken_240911, adapted)" in out and "adapted: message 2: its text (30 chars) is counted apart" in out
    code, out, _ = run(capsys, FORMATS_DIR / "openai_broken_body.json")
    assert code == 0  # findings are the report, not a failure of the command
    for rule in ("invalid-tool-arguments", "tool-call-without-result", "tool-result-without-call", "unknown-tool"):
        assert rule in out
    assert "warning: messages[3].tool_calls[0]: tool-call arguments are not valid JSON" in out


def test_a_request_the_counter_refuses_is_reported_and_the_command_succeeds(capsys, tmp_path):
    path = tmp_path / "late-system.json"
    path.write_text(json.dumps({"model": "m", "messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
        {"role": "system", "content": "Late"}, {"role": "user", "content": "Well?"}]}))
    code, out, err = run(capsys, path)
    assert code == 0 and err == ""
    assert "not counted: request body: mistral:tekken_240911 cannot count this request (message 2 is a system " \
           "message after the conversation started)" in out
    code, out, _ = run(capsys, FORMATS_DIR / "openai_request_response.json", "--context-limit", "200")
    assert code == 0 and "not counted: request body: context_limit: max_new_tokens (300) leaves no input room" in out


def test_bad_input_exits_2_with_one_line(capsys, tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text((FORMATS_DIR / "otlp_traces.json").read_text()[:500])
    cases = [
        (tmp_path / "missing.json", "no such file"),
        (cut, "otlp-json: malformed JSON"),
        (FIXTURES / "demo.request.json", "context-inspector"),
    ]
    for path, expected in cases:
        code, out, err = run(capsys, path)
        assert code == 2 and out == "", path
        assert err.count("\n") == 1 and expected in err and "Traceback" not in err
        assert err.startswith(f"context-assembler: error: {path}")
    for argv, expected in [((FORMATS_DIR / "anthropic_body.json", "--context-limit", "0"), "--context-limit"),
                           ((FORMATS_DIR / "anthropic_body.json", "--counter", "nope:x"), "unknown counter")]:
        code, out, err = run(capsys, *argv)
        assert code == 2 and expected in err and err.count("\n") == 1
