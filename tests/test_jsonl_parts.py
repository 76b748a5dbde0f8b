"""A JSONL index made in parts side by side (``core.plan_parts``, ``index_part``, ``joined_index``: what the
inspector's worker processes do with a large file) is the index ``index_jsonl`` makes in one pass: the same rows,
line numbers, offsets, kinds, labels and problems, wherever the cuts fall (blank and whitespace-only lines, CRLF,
no final newline, a line longer than a part, bad lines)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core

LINES = st.sampled_from([
    json.dumps({"id": "r1", "current": "Why?", "context_limit": 100}),  # a request with an id
    json.dumps({"current": "No id here", "context_limit": 100}),  # labelled by its row number
    json.dumps({"request_id": "x", "strategy": "fast", "messages": [], "trace": [{"decision": "kept"}],
                "input_tokens": 3, "input_budget": 9}),  # a result's keys
    json.dumps({"kind": "plan", "id": "p"}), json.dumps({"error": "RequiredContextTooLarge"}), "[1, 2]",
    '{"broken": ', "not json", "\xff-not-utf8", "", " ", "\t", "  \r", "\x0b\x0c",
    json.dumps({"current": "long " * 400, "context_limit": 100}),
])


def write(path, lines: list[str], ending: str, final: bool) -> None:
    data = ending.join(lines) + (ending if final and lines else "")
    path.write_bytes(data.encode("utf-8", "surrogateescape").replace("\xff".encode(), b"\xff"))


def parted(path, count: int) -> core.JsonlIndex:
    return core.joined_index(path, [core.index_part(path, part) for part in core.plan_parts(path, count)])


@given(st.lists(LINES, max_size=40), st.sampled_from(["\n", "\r\n"]), st.booleans(), st.integers(1, 9))
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_index_in_parts_is_the_index_in_one_pass(tmp_path, lines, ending, final, count):
    path = tmp_path / "f.jsonl"
    write(path, lines, ending, final)
    whole = core.index_jsonl(path)
    assert parted(path, count).rows == whole.rows
    parts = core.plan_parts(path, count)
    assert parts[0].start == 0 and parts[-1].end == path.stat().st_size
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))
    assert len(parts) <= count


def test_a_file_of_blank_lines_and_an_empty_file(tmp_path):
    for data in (b"", b"\n\n \n\t\r\n", b"\n" * 50 + b'{"current": "q", "context_limit": 9}'):
        path = tmp_path / "f.jsonl"
        path.write_bytes(data)
        assert parted(path, 4).rows == core.index_jsonl(path).rows


def test_parts_are_refused_as_the_index_is(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"current": "q"}\n' * 10)
    with pytest.raises(core.InputFileError, match="over the 20-byte limit"):
        core.plan_parts(path, 2, max_bytes=20)
    with pytest.raises(core.InputFileError):
        core.plan_parts(tmp_path, 2)  # a folder


def test_lines_counted_a_small_block_at_a_time(tmp_path, monkeypatch):
    """The counts of lines before each part are read a block at a time, each completed to its line's end."""
    from core import jsonl_parts

    monkeypatch.setattr(jsonl_parts, "BLOCK", 7)
    lines = ['{"current": "q", "context_limit": 9}', "", "  ", '{"id": "a", "current": "q", "context_limit": 9}',
             "\t", "bad", '{"current": "' + "w " * 30 + '", "context_limit": 9}'] * 5
    for ending in ("\n", "\r\n"):
        path = tmp_path / "f.jsonl"
        write(path, lines, ending, final=False)
        for count in (2, 3, 5, 11):
            assert parted(path, count).rows == core.index_jsonl(path).rows
