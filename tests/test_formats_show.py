"""``context-assembler show FILE [--json]``: what was read, call by call, and files where some model
calls cannot be read (they are rows with their own error; exit 0 unless no call at all was read)."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, default_counter

import core.cli
from core.cli import main
from core.formats import import_file
from core.formats.show import show_json

FORMATS_DIR = FIXTURES / "formats"


def run(capsys, *argv):
    code = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_json_has_exactly_the_documented_keys(capsys):
    path = FORMATS_DIR / "anthropic_body.json"
    code, out, err = run(capsys, "show", path, "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert set(doc) == {"file", "format", "requests", "notes"}
    assert doc["file"] == str(path) and doc["format"] == "anthropic-messages"
    (call,) = doc["requests"]
    assert set(call) == {"label", "format", "model", "messages", "tools", "provider_input_tokens", "notes"}
    assert call["model"] == "claude-sonnet-4-5" and call["tools"] == ["search_fares"]
    roles = [m["role"] for m in call["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]  # the tool_result is not also a user turn
    assistant, tool = call["messages"][2], call["messages"][3]
    assert assistant["tool_calls"] == [{"id": "toolu_fares_01", "name": "search_fares"}]
    assert assistant["chars"] == len("Let me look up Friday's fares.")  # its text stays beside its call
    assert tool["tool_call_id"] == "toolu_fares_01" and tool["tool_calls"] == []
    assert any("web_search" in n for n in call["notes"])  # the built-in tool that was not kept is named
    assert show_json(import_file(path)) == doc  # the same document without the CLI


def test_show_text_names_each_call_message_and_tool(capsys):
    code, out, _ = run(capsys, "show", FORMATS_DIR / "anthropic_body.json")
    assert code == 0
    assert "1 model call(s) read" in out
    assert "calls search_fares (toolu_fares_01)" in out and "result of toolu_fares_01" in out
    assert "tools (1): search_fares" in out


def _bodies_file(tmp_path, lines):
    path = tmp_path / "bodies.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


GOOD = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello there"}]}
BROKEN = {"model": "gpt-4o-mini", "messages": [{"role": "robot", "content": "beep"}]}


def test_a_file_with_one_unreadable_call_opens_the_others(tmp_path, capsys, monkeypatch):
    path = _bodies_file(tmp_path, [GOOD, BROKEN, GOOD])
    imported = import_file(path)
    assert len(imported.requests) == 2
    (failed,) = imported.failed
    assert failed.position == 1 and failed.place == "line 2.messages[0].role"
    assert "unknown message role 'robot'" in failed.reason
    code, out, _ = run(capsys, "show", path, "--json")
    assert code == 0
    doc = json.loads(out)
    assert [("error" in c) for c in doc["requests"]] == [False, True, False]  # a row in its place
    assert "unknown message role 'robot'" in doc["requests"][1]["error"]
    assert any("could not be read" in n for n in doc["notes"])
    monkeypatch.setattr(core.cli, "make_counter", lambda spec=None: default_counter())
    code, out, _ = run(capsys, "count", path)
    assert code == 0 and "not read: request line 2" in out


def test_a_file_where_no_call_can_be_read_is_refused(tmp_path, capsys):
    path = _bodies_file(tmp_path, [BROKEN, BROKEN])
    code, out, err = run(capsys, "show", path)
    assert code == 2 and out == ""
    assert "line 1.messages[0].role: unknown message role 'robot' (1 more model calls failed too)" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", sorted(p.name for p in FORMATS_DIR.iterdir()
                                        if p.is_file() and "broken" not in p.name))
def test_every_fixture_shows(name, capsys):
    code, out, err = run(capsys, "show", FORMATS_DIR / name, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["requests"] and all(c["messages"] for c in doc["requests"] if "error" not in c)
