"""The input layer (core.inputs) and output safety (core.outputs): every reader refuses hostile input
with one clear line, and ``-o`` never writes over an input of the run or leaves a file behind."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil

import pytest
import yaml
from support import FIXTURES

from core import InputFileError, load_entries
from core.cli import main
from core.formats import FormatError, import_file
from core.inputs import MAX_NESTING, check_value, decode_json, inflate, read_bytes


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# --- what a file may be ---------------------------------------------------------------------------------

def test_devices_fifos_and_directories_are_refused_by_name(tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # opening it would block forever: it is refused before it is opened
    for path, word in ((fifo, "FIFO"), ("/dev/zero", "device"), (tmp_path, "directory")):
        with pytest.raises(InputFileError, match=word):
            read_bytes(path)
        code, _, err = run_cli(capsys, "assemble", str(path))
        assert code == 2 and word in one_error_line(err) and str(path) in err
        code, _, err = run_cli(capsys, "count", str(path))
        assert code == 2 and word in one_error_line(err)


def test_a_nul_in_a_path_and_an_empty_path_are_clear_errors(capsys):
    for path in ("a\x00b.json", ""):
        code, _, err = run_cli(capsys, "assemble", path)
        assert code == 2
        line = one_error_line(err)
        assert "NUL" in line or "empty path" in line
        assert "\x00" not in err


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * 2000 + b"}")
    with pytest.raises(InputFileError, match="over the 1,000-byte limit"):
        read_bytes(big, max_bytes=1000)


# --- what a decoded value may hold ---------------------------------------------------------------------

def test_deep_nesting_is_refused_with_the_place_named():
    deep = "[" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5)
    with pytest.raises(ValueError, match="nested more than"):
        decode_json(deep)
    with pytest.raises(ValueError, match="nested"):
        decode_json("[" * 100_000 + "]" * 100_000)  # past the interpreter's own recursion limit
    shallow = json.loads("[" * 20 + "]" * 20)
    check_value(shallow)  # ordinary depth passes


def test_an_integer_of_more_than_4300_digits_is_a_clean_error(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text('{"id": "x", "context_limit": ' + "9" * 5000 + "}", encoding="utf-8")
    code, _, err = run_cli(capsys, "assemble", str(path))
    assert code == 2 and "number too long" in one_error_line(err)


def test_a_lone_surrogate_is_refused_with_its_field_named(tmp_path, capsys):
    data = json.loads((FIXTURES / "demo.request.json").read_text(encoding="utf-8"))
    text = json.dumps(data).replace('"instructions": "', '"instructions": "\\ud800', 1)
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli(capsys, "assemble", str(path), "-o", str(tmp_path / "out.json"))
    line = one_error_line(err)
    assert code == 2 and "surrogate" in line and "instructions" in line
    assert not (tmp_path / "out.json").exists()
    # a surrogate pair is one ordinary character, not refused
    assert decode_json('"\\ud83d\\ude00"') == "\U0001F600"


def test_a_jsonl_line_with_a_huge_number_is_an_error_row_not_a_traceback(tmp_path):
    path = tmp_path / "many.jsonl"
    good = (FIXTURES / "demo.request.json").read_text(encoding="utf-8").replace("\n", "")
    path.write_text(good + "\n" + '{"n": ' + "1" * 5000 + "}\n" + good + "\n", encoding="utf-8")
    from core import index_jsonl

    index = index_jsonl(path)
    assert [row.kind for row in index.rows] == ["request", "error", "request"]
    assert "number too long" in index.rows[1].problem


# --- compressed bodies and YAML ------------------------------------------------------------------------

def test_inflate_stops_at_its_limit_and_reads_multi_member_gzip():
    bomb = gzip.compress(b"\0" * 5_000_000)
    with pytest.raises(ValueError, match="inflates past the 1,000,000-byte limit"):
        inflate(bomb, limit=1_000_000)
    assert inflate(gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    with pytest.raises(ValueError, match="ends early"):
        inflate(gzip.compress(b"x" * 1000)[:-12])


def test_a_cassette_with_a_gzip_bomb_body_is_refused_cleanly(tmp_path, capsys):
    bomb = gzip.compress(b" " * (80 << 20))  # 80 MiB of spaces: about 80 KB compressed
    cassette = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions",
                    "body": {"string": bomb}, "headers": {}},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "{}"}}}]}
    path = tmp_path / "bomb.yaml"
    path.write_text(yaml.safe_dump(cassette), encoding="utf-8")
    code, _, err = run_cli(capsys, "count", str(path))
    line = one_error_line(err)
    assert code == 2 and "inflates past" in line and "bomb.yaml" in line


def test_yaml_alias_bombs_deep_nesting_and_control_characters_are_clean_errors(tmp_path, capsys):
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8))
    cases = {"laughs.yaml": laughs, "deep.yaml": "a: " + "[" * 900 + "]" * 900 + "\n",
             "nul.yaml": "interactions:\n- request: {body: \"a\x00b\"}\n", "esc.yaml": "a: \x1b[31mred\n"}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(FormatError):
            import_file(path)
        code, _, err = run_cli(capsys, "count", str(path))
        assert code == 2, name
        assert "\x1b" not in err and "\x00" not in err, name  # control characters never reach the terminal
        one_error_line(err)


# --- outputs ----------------------------------------------------------------------------------------------

def test_output_never_overwrites_any_input_of_the_run(tmp_path, capsys):
    rag = tmp_path / "rag"
    shutil.copytree(FIXTURES / "rag", rag)
    request, index = rag / "tight.rag.json", rag / "aster.index.json"
    windows = tmp_path / "windows.json"
    windows.write_text(json.dumps(json.loads(request.read_text(encoding="utf-8"))["windows"]), encoding="utf-8")
    before = {p: digest(p) for p in (request, index, windows)}
    for target, args in ((index, ()), (windows, ("--windows", str(windows))), (request, ())):
        code, _, err = run_cli(capsys, "assemble", str(request), *args, "-o", str(target))
        assert code == 2 and "an input of this run" in one_error_line(err), target
    assert {p: digest(p) for p in before} == before
    code, _, _ = run_cli(capsys, "assemble", str(request), "-o", str(tmp_path / "ok.json"))
    assert code == 0 and json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))["trace"]


def test_output_inside_a_tokenizer_directory_is_refused(tmp_path, capsys, toy_tokenizer_dir):
    tokenizer = tmp_path / "tok"
    shutil.copytree(toy_tokenizer_dir, tokenizer)
    target = tokenizer / "tokenizer.json"
    before = digest(target)
    code, _, err = run_cli(capsys, "assemble", str(FIXTURES / "demo.request.json"), "--counter", f"hf:{tokenizer}",
                           "-o", str(target))
    assert code == 2 and "input directory" in one_error_line(err)
    assert digest(target) == before


def test_an_input_named_like_a_temporary_survives_and_a_failed_run_leaves_nothing(tmp_path, capsys):
    source = tmp_path / "r.json"
    shutil.copy(FIXTURES / "demo.request.json", source)
    decoy = tmp_path / "out.json.tmp"
    decoy.write_text("mine", encoding="utf-8")
    code, _, _ = run_cli(capsys, "assemble", str(source), "-o", str(tmp_path / "out.json"))
    assert code == 0 and decoy.read_text(encoding="utf-8") == "mine"
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": "x"', encoding="utf-8")
    before = sorted(os.listdir(tmp_path))
    code, _, _ = run_cli(capsys, "assemble", str(broken), "-o", str(tmp_path / "never.json"))
    assert code == 2 and sorted(os.listdir(tmp_path)) == before
    code, _, err = run_cli(capsys, "assemble", str(source), "-o", "")
    assert code == 2 and "empty path" in one_error_line(err)


def test_error_lines_escape_control_characters(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text('{"id": "\x1b[2J"', encoding="utf-8")  # an ANSI "clear screen" in a broken file
    code, _, err = run_cli(capsys, "assemble", str(tmp_path / "\x1b[31mred.json"))
    assert code == 2 and "\x1b" not in err and "\\x1b" in err
    entries_error = None
    try:
        load_entries(path)
    except InputFileError as exc:
        entries_error = str(exc)
    assert entries_error is not None
