"""``context-assembler replay FILE``: assemble a recorded result (or request) again under edited limits and
print what changes; a JSONL of many gives aggregate what-if figures."""
from __future__ import annotations

import argparse
import json
import sys

from ..cli import (EXIT_OK, EXIT_REQUIRED_TOO_LARGE, PROG, _fill_order, _say, build_counter, limit_options)
from ..errors import RequestError, RequiredContextTooLarge
from ..loading import load_entries
from ..replay import Edits, diff, replay, what_if
from ..result import AssemblyResult


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("replay", help="assemble a recorded result (or request) again under edited limits "
                                      "and print what changes; a JSONL gives aggregate what-if figures")
    p.add_argument("file", metavar="FILE")
    limit_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def run(args: argparse.Namespace) -> int:

    edits = Edits(context_limit=args.context_limit, max_new_tokens=args.max_new_tokens, margin=args.margin,
                  fill_order=tuple(_fill_order(args.fill_order)) if args.fill_order is not None else None)
    _check_edits(edits)
    counter = build_counter(args)
    entries = load_entries(args.file)
    recordings = [e.result or e.request or e.extra.get("plan_request") for e in entries if e.kind != "rejected"]
    if not recordings:
        raise RequestError([("", "no request or result to replay")], source=args.file)
    if len(recordings) == 1:
        recorded = recordings[0]
        try:
            before = recorded if isinstance(recorded, AssemblyResult) else replay(recorded, counter=counter)
        except RequiredContextTooLarge as exc:
            if edits.is_empty():
                raise
            return _replay_unrecorded(args, recorded, edits, counter, exc)
        after = _under_edits(args, recorded, edits, counter)
        if after is None:
            return EXIT_REQUIRED_TOO_LARGE
        changes = diff(before, after)
        sys.stdout.write(json.dumps(changes.to_json(), indent=2) + "\n" if args.json else changes.to_text() + "\n")
        return EXIT_OK
    bar = _progress_bar() if sys.stderr.isatty() and not args.json else None
    summary = what_if(recordings, edits, counter=counter, progress=bar)
    if bar is not None:
        sys.stderr.write("\n")
    sys.stdout.write(json.dumps(summary.to_json(), indent=2) + "\n" if args.json else summary.to_text() + "\n")
    return EXIT_OK


def _under_edits(args, recorded, edits, counter) -> AssemblyResult | None:
    """The recording assembled under ``edits``; ``None`` (the refusal written out) when it does not fit."""
    try:
        return replay(recorded, edits=edits, counter=counter)
    except RequiredContextTooLarge as exc:
        sys.stdout.write(json.dumps(exc.record(), indent=2) + "\n")
        _say(f"{PROG}: {args.file}: under these edits, {exc}")
        return None


def _replay_unrecorded(args, recorded, edits, counter, refused: RequiredContextTooLarge) -> int:
    """A request that does not fit its own limits has no 'before': show the edited assembly alone."""
    after = _under_edits(args, recorded, edits, counter)
    if after is None:
        return EXIT_REQUIRED_TOO_LARGE
    items = [{"section": e.section, "id": e.id, "decision": e.decision, "tokens": e.tokens} for e in after.trace]
    budget = {key: getattr(after, key) for key in ("input_tokens", "input_budget", "remaining_tokens",
                                                  "context_limit", "max_new_tokens", "margin")}
    if args.json:
        sys.stdout.write(json.dumps({"recorded": refused.record(), "after": budget, "items": items}, indent=2) + "\n")
    else:
        lines = [f"as recorded, {refused}", "under these edits it fits: " +
                 ", ".join(f"{key} {value}" for key, value in budget.items())]
        lines += [f"  {i['section']:16} {i['id']:28} {i['decision']:10} {i['tokens']}" for i in items]
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


def _check_edits(edits) -> None:
    """Edits are the same for every record of a file: refuse bad ones once, up front."""
    problems = [(f"--{name.replace('_', '-')}", "must be positive" if name != "margin" else "must not be negative")
                for name, low in (("context_limit", 1), ("max_new_tokens", 1), ("margin", 0))
                if getattr(edits, name) is not None and getattr(edits, name) < low]
    if edits.fill_order is not None and sorted(edits.fill_order) != ["evidence", "history"]:
        problems.append(("--fill-order", "must name history and evidence once each, e.g. evidence,history"))
    if problems:
        raise RequestError(problems, source="command line")


def _progress_bar():
    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()

    return show
