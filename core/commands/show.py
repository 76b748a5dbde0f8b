"""``context-assembler show FILE [--json]``: what an import read from a provider body or trace export,
call by call, without counting anything. Exit 0 when at least one model call was read (the notes
say what was not), 2 when the file cannot be read or none of its calls could."""
from __future__ import annotations

import argparse
import json

from ..formats import import_file
from ..formats.show import show_json, show_text


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("show", help="print what was read from a provider body or trace export, call by call "
                                    "(messages, tool calls, tools, recorded usage, notes)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def run(args: argparse.Namespace) -> int:
    imported = import_file(args.file)  # a FormatError is one line on stderr, exit 2 (core.cli)
    if args.json:
        print(json.dumps(show_json(imported), indent=2, ensure_ascii=False))
    else:
        print(show_text(imported), end="")
    return 0
