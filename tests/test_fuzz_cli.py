"""The command line against hostile input (issue 14): every fixture of ours and every real file in
../shared/realworld*/, mutated at the byte and at the structure level, through every command that reads
a file. Each case must end in an exit of 0 to 3 with no traceback, leave its input unchanged and leave
no file behind. Bounded for CI (``FUZZ_CASES``, default 240 cases); a longer run:

    FUZZ_CASES=5000 FUZZ_SEED=7 .venv/bin/python -m pytest -q tests/test_fuzz_cli.py -s

The figures (cases per input kind, exits, clean errors) are printed with ``-s``.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURES, SHARED

from core.cli import main

CASES = int(os.environ.get("FUZZ_CASES", "240"))
SEED = int(os.environ.get("FUZZ_SEED", "1"))
COMMANDS = {  # what reads each kind of file
    "request": [["assemble"], ["baseline"], ["replay", "--context-limit", "2000"]],
    "result": [["audit"], ["replay", "--context-limit", "900"]],
    "trace": [["count"], ["show", "--json"], ["session"]],
}
HOSTILE_VALUES = [None, True, -1, 0, 10 ** 40, 1.5e308, "", "\x1b[2J", "\ud800", "x" * 5000, [], {}, [[[[]]]],
                  {"role": "tool"}, "[INST] </evidence> <|im_start|>"]


def corpus() -> list[tuple[str, Path]]:
    files = [("request", p) for p in sorted(FIXTURES.glob("*.request.json"))]
    files += [("request", p) for p in sorted(FIXTURES.glob("*.plan.json"))]
    files += [("result", p) for p in sorted(FIXTURES.glob("*.result.json"))[:6]]
    files += [("result", FIXTURES / "recorded.results.jsonl")]
    files += [("trace", p) for p in sorted((FIXTURES / "formats").iterdir()) if p.is_file()]
    for folder in ("realworld", "realworld2"):
        root = SHARED / folder
        if root.is_dir():
            files += [("trace", p) for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in
                      (".json", ".jsonl", ".yaml", ".yml") and "schema" not in p.name]
    return files


def _nodes(value, here=()):
    yield here
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _nodes(inner, here + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _nodes(inner, here + (i,))


def _structural(data: bytes, rng: random.Random) -> bytes | None:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    nodes = list(_nodes(value))
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(nodes)
        if not path:
            value = rng.choice(HOSTILE_VALUES)
            break
        parent = value
        try:
            for key in path[:-1]:
                parent = parent[key]
            if rng.random() < 0.3:
                del parent[path[-1]]
            else:
                parent[path[-1]] = rng.choice(HOSTILE_VALUES)
        except (KeyError, IndexError, TypeError):
            continue
        nodes = list(_nodes(value))
    return json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(["truncate", "flip", "structure", "structure", "nest", "control", "gzip", "empty", "dup"])
    if kind == "truncate":
        return kind, data[:rng.randint(0, max(len(data) - 1, 0))]
    if kind == "flip" and data:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return kind, bytes(out)
    if kind == "structure":
        out = _structural(data, rng)
        if out is not None:
            return kind, out
    if kind == "nest":
        depth = rng.choice([200, 2000, 20000])
        return kind, b"[" * depth + data + b"]" * depth
    if kind == "control":
        at = rng.randrange(len(data) + 1)
        return kind, data[:at] + rng.choice([b"\x00", b"\x1b[31m", b"\r", b"\xff\xfe"]) + data[at:]
    if kind == "gzip":
        return kind, gzip.compress(data)
    if kind == "dup":
        return kind, data + b"\n" + data
    return "empty", b""


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own exit
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_mutated_inputs_never_break_the_command_line(tmp_path, capsys):
    rng = random.Random(SEED)
    files = corpus()
    exits: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    failures: list[str] = []
    for case in range(CASES):
        kind, source = files[case % len(files)]
        how, data = mutate(source.read_bytes(), rng)
        folder = tmp_path / f"case{case}"
        folder.mkdir()
        target = folder / source.name
        target.write_bytes(data)
        before = digest(folder)
        for command in COMMANDS[kind]:
            argv = [command[0], str(target), *command[1:]]
            if command[0] in ("assemble", "baseline"):
                argv += ["-o", str(folder / "out.json")]
            try:
                code, err = run(argv)
            except Exception as exc:  # anything but our exit codes is a defect
                failures.append(f"{' '.join(argv)} ({how} of {source.name}): {type(exc).__name__}: {exc}"[:300])
                continue
            exits[code] += 1
            kinds[f"{kind}/{how}"] += 1
            if code not in (0, 1, 2, 3) or "Traceback" in err or "\x1b" in err:
                failures.append(f"{' '.join(argv)} ({how} of {source.name}): exit {code}: {err[:200]!r}")
            (folder / "out.json").unlink(missing_ok=True)  # asked for: the only file a run may leave
            if digest(folder) != before:
                failures.append(f"{' '.join(argv)} ({how} of {source.name}): changed or left files in its folder")
    capsys.readouterr()
    with capsys.disabled():
        print(f"\nfuzz: {CASES} mutated files (seed {SEED}), {sum(exits.values())} command runs; exits "
              + ", ".join(f"{code}: {n}" for code, n in sorted(exits.items())))
        print("  by input kind/mutation: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    assert not failures, "\n".join(failures[:20])


_JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 6, 10 ** 6) | st.text(max_size=30),
                        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=4), max_leaves=20)
_REQUEST_KEYS = ["instructions", "current", "history", "evidence", "tools", "tool_exchanges", "context_limit",
                 "max_new_tokens", "margin", "fill_order", "messages", "model", "input", "contents", "kind",
                 "sections", "plan", "trace", "system"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(_REQUEST_KEYS), _JSONISH, min_size=1, max_size=8))
def test_request_shaped_json_of_any_types_is_a_clean_answer(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("hyp")
    path = folder / "r.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for command in (["assemble"], ["count"], ["show", "--json"]):
        code, err = run([command[0], str(path), *command[1:]])
        assert code in (0, 1, 2, 3) and "Traceback" not in err, (command, data, err)
    assert json.loads(path.read_text(encoding="utf-8")) == data
    assert sorted(os.listdir(folder)) == ["r.json"]


@pytest.mark.parametrize("option, value", [("--context-limit", "-5"), ("--context-limit", "9" * 5000),
                                           ("--fill-order", ",,"), ("--counter", "hf:/dev/null"),
                                           ("--counter", "nope:x"), ("-o", ""), ("-o", "/dev/full"),
                                           ("--max-new-tokens", "0"), ("--margin", "-1")])
def test_option_values_are_clean_errors(option, value, tmp_path):
    code, err = run(["assemble", str(FIXTURES / "demo.request.json"), option, value])
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
