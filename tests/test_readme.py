"""The README's command-line examples run as written (from the repository root)."""
from __future__ import annotations

import re
import shlex

import pytest
from support import ROOT, SHARED

from core.cli import main

PREFIX = ".venv/bin/context-assembler "
EXPECTED_EXIT = {"audit": {0, 1}}  # the README's audit example is of a baseline: exit 1, findings


def readme_commands() -> list[str]:
    commands = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(PREFIX):
            command = line[len(PREFIX):].split("  #")[0].strip()
            if "/path/to/" in command:  # a placeholder for the reader's own tokenizer directory
                continue
            commands.append(re.sub(r"\s*\[[^\]]*\]", "", command))  # optional arguments in brackets
    return commands


def test_the_readme_has_examples():
    assert len(readme_commands()) >= 8


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_runs(command, monkeypatch, capsys, tmp_path):
    if "../shared" in command and not SHARED.exists():
        pytest.skip("../shared is absent")
    monkeypatch.chdir(ROOT)
    argv = [arg.replace("/tmp/", f"{tmp_path}/") for arg in shlex.split(command)]
    code = main(argv)
    captured = capsys.readouterr()
    assert code in EXPECTED_EXIT.get(argv[0], {0}), captured.err
    assert "Traceback" not in captured.err
