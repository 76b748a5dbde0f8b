"""``context-assembler experiment REQUEST.json --endpoint URL --model NAME -o ANSWERS.jsonl``.

Sends each variant's request to the endpoint once per seed and records every answer. The endpoint
is contacted only by this command, only at the URL given; a key comes from the environment
variable named by ``--api-key-env`` and is never written anywhere.
"""
from __future__ import annotations

import argparse
import sys

from ..cli import counter_options
from ..errors import RequestError
from ..experiments import DEFAULT_VARIANTS, Endpoint, Experiment, Sampling, load_rules, load_subject, run_experiment

HELP = "send variants of REQUEST.json to a model endpoint, N seeds each, and record every answer (JSONL)"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("experiment", help=HELP, description=HELP)
    p.add_argument("request", metavar="REQUEST.json")
    p.add_argument("--endpoint", required=True, metavar="URL",
                   help="base URL of an OpenAI-compatible server (llama.cpp, vLLM, Ollama /v1, a provider) "
                        "or of Ollama (with --api ollama)")
    p.add_argument("--model", required=True, metavar="NAME", help="the model name the server knows")
    p.add_argument("--api", choices=("openai", "ollama"), default="openai",
                   help="openai: /v1/chat/completions (default); ollama: Ollama's native /api/chat")
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    p.add_argument("--empty-content", action="store_true",
                   help="send an absent assistant content as \"\" (llama-cpp-python's server refuses null)")
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), metavar="A,B,...",
                   help="default, evidence-first, history-first, baseline, plan, limit=N, position=K, positions "
                        f"(default {','.join(DEFAULT_VARIANTS)})")
    p.add_argument("--seeds", type=int, default=5, metavar="N", help="runs per variant, seeds 1..N (default 5)")
    p.add_argument("--rules", metavar="RULES.json", help="grading rules, recorded with the answers")
    p.add_argument("--relevant", metavar="ID", help="the passage the position test moves "
                                                    "(default: the one id of the rules' must_cite_one_of)")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--max-tokens", type=int, metavar="N", help="output limit (default: the request's max_new_tokens)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS", help="per answer (default 120)")
    p.add_argument("--context-limit", type=int, metavar="N", help="the request's context limit for every variant "
                                                              "(the position test needs room for every passage)")
    counter_options(p, help_text="our token counter (default the embedded one)")
    p.add_argument("--model-sha256", metavar="HEX", help="the model file's sha256, as you know it (recorded as "
                                                        "declared, beside what the server reports)")
    p.add_argument("-o", "--output", required=True, metavar="ANSWERS.jsonl")
    p.add_argument("--overwrite", action="store_true", help="replace ANSWERS.jsonl if it exists")
    return p


def _problem(option: str, message: str) -> RequestError:
    return RequestError([(option, message)], source="command line")


def run(args: argparse.Namespace) -> int:
    from ..cli import build_counter

    if args.seeds < 1:
        raise _problem("--seeds", f"must be at least 1, not {args.seeds}")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise _problem("--max-tokens", f"must be positive, not {args.max_tokens}")
    if args.output == args.request:
        raise _problem("--output", "refusing to overwrite the input file")
    rules = load_rules(args.rules) if args.rules else None
    relevant = args.relevant or (rules.relevant if rules is not None else None)
    subject = load_subject(args.request, relevant=relevant)
    if args.context_limit is not None:
        subject = _with_limit(subject, args.context_limit)
    try:
        endpoint = Endpoint(args.endpoint, args.model, api=args.api, timeout=args.timeout,
                            api_key_env=args.api_key_env, empty_content=args.empty_content)
        declared = {"sha256": args.model_sha256.lower()} if args.model_sha256 else {}
        experiment = Experiment(subject=subject, endpoint=endpoint, variants=args.variants.split(","),
                                seeds=list(range(1, args.seeds + 1)),
                                sampling=Sampling(args.temperature, args.top_p, args.max_tokens), rules=rules,
                                request_file=args.request, declared_model=declared)
    except ValueError as exc:
        raise _problem("--endpoint" if "endpoint" in str(exc) or "environment" in str(exc) else "--variants",
                       str(exc)) from None
    show = _progress if sys.stderr.isatty() else None
    try:
        done = run_experiment(experiment, build_counter(args), args.output, overwrite=args.overwrite,
                              progress=show)
    finally:
        if show is not None:
            sys.stderr.write("\n")
    print(f"{done} answers ({len(experiment.variants)} variants x {args.seeds} seeds) recorded in {args.output}",
          file=sys.stderr)
    return 0


def _with_limit(subject, limit: int):
    from dataclasses import replace

    from ..contracts import parse_request

    if subject.request is None:
        raise _problem("--context-limit", "a plan request sets its budget in its plan")
    data = subject.request.model_dump(mode="json")
    data["context_limit"] = limit
    try:
        return replace(subject, request=parse_request(data))
    except RequestError as exc:
        raise RequestError(exc.problems, source="command line") from None


def _progress(done: int, total: int, what: str) -> None:
    sys.stderr.write(f"\r{done}/{total} {what}".ljust(60))
    sys.stderr.flush()
