"""``context-assembler tokenizers``: list the counters this installation can build, and fetch a tiktoken
encoding into its cache (``tokenizers fetch o200k_base``): the only command that downloads, and only when run."""
from __future__ import annotations

import argparse

from ..counters.tiktoken_cache import ENCODINGS, cache_dir, cached_path, fetch


def add_parser(sub) -> argparse.ArgumentParser:
    parser = sub.add_parser("tokenizers", help="list counters; fetch a tiktoken encoding (downloads once, when asked)")
    action = parser.add_subparsers(dest="tokenizers_action", required=True)
    p_fetch = action.add_parser("fetch", help="download a tiktoken encoding into the cache ($TIKTOKEN_CACHE_DIR)")
    p_fetch.add_argument("encoding", choices=sorted(ENCODINGS))
    p_fetch.add_argument("--url", help="download from this address instead of the encoding's public one")
    p_fetch.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    action.add_parser("list", help="print every counter spec this installation can build")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.tokenizers_action == "fetch":
        path = fetch(args.encoding, url=args.url, timeout=args.timeout)
        print(f"{args.encoding}: {path}")
        return 0
    from ..counters.catalogue import available_counters

    for entry in available_counters():
        print(f"{entry.spec:40} {entry.description}")
    print(f"tiktoken cache: {cache_dir()} ({', '.join(n for n in sorted(ENCODINGS) if cached_path(n)) or 'empty'})")
    return 0
