"""``context-assembler sweep CORPUS...``: re-assemble every request of a corpus under several settings."""
from __future__ import annotations

import argparse
import json
import sys

from ..counting import DEFAULT_COUNTER

EXIT_OK, EXIT_INTERRUPTED = 0, 130


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("sweep", help="re-assemble every request of a corpus (files, folders, JSONL shards, trace "
                                     "exports) under several settings and aggregate what is lost and what it costs")
    p.add_argument("corpus", nargs="+", metavar="CORPUS", help="files and folders (walked recursively)")
    p.add_argument("--context-limit", metavar="A,B,...",
                   help="context limits to try, e.g. 8192,16k,recorded (default: each request's recorded limit)")
    p.add_argument("--fill-order", action="append", metavar="ORDER",
                   help="history,evidence or evidence,history (repeatable), both, or recorded (the default)")
    p.add_argument("--plan", metavar="PLAN.json", help="assemble every request under this plan instead")
    p.add_argument("--counter", default=None, metavar="SPEC|auto",
                   help=f"mistral:<tokenizer>, hf:<directory> or auto (by each request's model; default "
                        f"{DEFAULT_COUNTER})")
    p.add_argument("--chat-template-kwargs", metavar="K=V,...",
                   help="for hf: counters, passed to the chat template (e.g. enable_thinking=true)")
    p.add_argument("--engine", default="local", choices=("local", "ray"),
                   help="local: a process pool over every core (default); ray: a Ray cluster")
    p.add_argument("--workers", type=int, metavar="N", help="processes (local) or actors (ray); default: every core")
    p.add_argument("--ray-address", metavar="ADDRESS",
                   help="a running Ray cluster (default: RAY_ADDRESS, else a local one is started)")
    p.add_argument("-o", "--output", metavar="SWEEP.json",
                   help="write the sweep here; its per-request rows stay in SWEEP.json.work/ next to it")
    p.add_argument("--resume", action="store_true", help="go on with an interrupted sweep of the same -o")
    p.add_argument("--json", action="store_true", help="print the sweep JSON instead of the table")
    p.add_argument("--shard-bytes", type=int, default=None, help=argparse.SUPPRESS)
    return p


def run(args: argparse.Namespace) -> int:
    from ..cli import PROG, _write
    from ..errors import RequestError
    from ..sweep import SweepInterrupted, run_sweep, settings_from, sweep_text
    from ..sweep.corpus import SHARD_BYTES

    if args.workers is not None and args.workers < 1:
        raise RequestError([("--workers", "must be at least 1")], source="command line")
    settings = settings_from(args.context_limit, args.fill_order, args.plan)
    try:
        sweep = run_sweep(args.corpus, settings, counter=_spec(args), engine=args.engine, output=args.output,
                          resume=args.resume, workers=args.workers, ray_address=args.ray_address,
                          shard_bytes=args.shard_bytes or SHARD_BYTES, progress=sys.stderr.isatty())
    except (SweepInterrupted, KeyboardInterrupt) as exc:
        again = " (run the same command with --resume to go on)" if args.output else ""
        what = str(exc) if isinstance(exc, SweepInterrupted) else "interrupted"
        print(f"{PROG}: sweep {what}; finished shards are kept{again}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        for bad in sweep["bad_files"]:  # the table lists them itself
            print(f"{PROG}: skipped {bad['problem']}", file=sys.stderr)
    text = json.dumps(sweep, indent=1, ensure_ascii=False) + "\n"
    if args.output:
        _write(text, args.output, args.corpus)
    sys.stdout.write(text if args.json else sweep_text(sweep))
    return EXIT_OK


def _spec(args: argparse.Namespace) -> str | None:
    """The counter spec the workers build, ``--chat-template-kwargs`` carried in it (``hf:<dir>?k=v``)."""
    kwargs = getattr(args, "chat_template_kwargs", None)
    if not kwargs:
        return args.counter
    from ..counters import parse_template_kwargs

    parse_template_kwargs(kwargs)  # refuses a malformed one here, once, not in every worker
    if not (args.counter or "").startswith("hf:"):
        from ..errors import RequestError

        raise RequestError([("--chat-template-kwargs", "applies to hf:<directory> counters")], source="command line")
    return f"{args.counter}{',' if '?' in args.counter else '?'}{kwargs}"
