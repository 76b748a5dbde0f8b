"""``context-assembler session FILE``: a trace's or transcript's model calls as a session (see core.sessions)."""
from __future__ import annotations

import argparse
import sys

from ..cli import build_counter, counter_options
from ..sessions import open_session
from ..sessions.report import report_json, report_text


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("session", help="a trace's model calls in order: input tokens against the window, what each "
                                       "call appended, removed or rewrote, and the prompt-cache prefix")
    p.add_argument("file", metavar="FILE")
    counter_options(p)
    p.add_argument("--context-window", type=int, metavar="N",
                   help="the model's context window (default: the counter's, where it declares one)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def run(args: argparse.Namespace) -> int:
    if args.context_window is not None and args.context_window <= 0:
        print(f"context-assembler: error: --context-window must be positive, not {args.context_window}",
              file=sys.stderr)
        return 2
    counter = build_counter(args)
    session = open_session(args.file, counter, context_window=args.context_window)
    sys.stdout.write(report_json(session) if args.json else report_text(session))
    return 0
