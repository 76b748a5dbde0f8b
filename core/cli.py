"""``context-assembler``: assemble a request, audit a result, run the baseline, count an imported file.

Exit codes: 0 success; 1 audit found an error; 2 bad input (one line on stderr naming the file,
the field and the problem); 3 the required context does not fit (a JSON record on stdout).
The CLI never writes to its input files.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from typing import Sequence

from .assembly import assemble
from .audit import audit, has_errors
from .baseline import naive_truncate
from .contracts import Request, parse_request
from .counting import DEFAULT_COUNTER, make_counter
from .errors import (ContextBudgetError, ContextInspectorError, CounterError, PromptNotCountable, RequestError,
                     RequiredContextTooLarge)
from .replay import ReplayUnavailable
from .loading import load_entries, load_request, load_result
from .inputs import tracking_reads
from .outputs import printable, write_output

EXIT_OK, EXIT_AUDIT, EXIT_BAD_INPUT, EXIT_REQUIRED_TOO_LARGE = 0, 1, 2, 3
PROG = "context-assembler"
# Commands that live in a module of their own under core/commands/: each module has
# ``add_parser(sub) -> argparse.ArgumentParser`` (it adds its sub-parser and returns it) and
# ``run(args) -> int`` (an exit code; it may raise the core's errors, handled here like any command's).
COMMAND_MODULES: tuple[str, ...] = ("replay", "tokenizers", "show", "session", "sweep", "experiment", "grade")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {printable(message)}\n")


COUNTER_HELP = "mistral:<tokenizer>, openai:<model>, harmony:<model>, estimate:<model>, hf:<directory> or auto"


def counter_options(p: argparse.ArgumentParser, default: str | None = None, help_text: str | None = None) -> None:
    p.add_argument("--counter", default=default, metavar="SPEC",
                   help=help_text or f"{COUNTER_HELP} (default {default or DEFAULT_COUNTER})")
    p.add_argument("--chat-template-kwargs", metavar="K=V,...",
                   help="for hf: counters, passed to the chat template (e.g. enable_thinking=true); recorded in the "
                        "counter's identity. Default: none, the template's own defaults, as a server renders")


def limit_options(p: argparse.ArgumentParser) -> None:
    """The counter and the limits a run may edit (assemble, baseline, replay)."""
    counter_options(p)
    p.add_argument("--context-limit", type=int, metavar="N")
    p.add_argument("--max-new-tokens", type=int, metavar="N")
    p.add_argument("--margin", type=int, metavar="N")
    p.add_argument("--fill-order", metavar="A,B", help="e.g. evidence,history")


def build_counter(args: argparse.Namespace, *, auto: bool = False):
    """The counter the options name; with ``auto=True``, ``--counter auto`` gives a per-model ``AutoCounter``."""
    from .counters import AutoCounter, parse_template_kwargs

    kwargs = parse_template_kwargs(getattr(args, "chat_template_kwargs", None))
    if auto and args.counter == "auto":
        return AutoCounter(chat_template_kwargs=kwargs)
    return make_counter(args.counter, chat_template_kwargs=kwargs) if kwargs else make_counter(args.counter)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Assemble a chat request under an exact token budget, "
                                            "audit the result, or run the naive baseline.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def budget_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("request", metavar="REQUEST.json")
        limit_options(p)
        p.add_argument("-o", "--output", metavar="RESULT.json", help="write the result here (default stdout)")

    p_assemble = sub.add_parser("assemble", help="assemble REQUEST.json and write the result JSON")
    budget_options(p_assemble)
    p_assemble.add_argument("--reference-recount", action="store_true",
                            help="count the complete request at every admission attempt (the seed's method; "
                                 "same result, slower)")
    p_assemble.add_argument("--windows", metavar="WINDOWS.json",
                            help="a RAG expansion record for a rag-windows request (replaces the file's own)")
    p_assemble.add_argument("--timings", action="store_true",
                            help="print assembly_seconds, full_counts and item_counts on stderr")
    plan_options = p_assemble.add_argument_group("plan requests (summarise-span)")
    plan_options.add_argument("--summariser", metavar="URL",
                              help="an OpenAI-compatible or Ollama base URL; contacted only when given")
    plan_options.add_argument("--summariser-model", metavar="NAME")
    plan_options.add_argument("--summariser-api", choices=("openai", "ollama"), default="openai")
    plan_options.add_argument("--summariser-timeout", type=float, default=30.0, metavar="SECONDS")
    plan_options.add_argument("--store", metavar="SUMMARIES.sqlite", help="write summaries back to this file")
    plan_options.add_argument("--scope", default="default", help="the store's scope (default: default)")
    budget_options(sub.add_parser("baseline", help="naive truncation of REQUEST.json, same result shape"))
    p_audit = sub.add_parser("audit", help="print structural findings of RESULT.json; exit 1 on any error")
    p_audit.add_argument("result", metavar="RESULT.json")
    counter_options(p_audit, help_text="check control tokens and recount with this counter "
                                       "(default: the result's own counter, when it can be built here)")
    p_audit.add_argument("--json", action="store_true", help="print findings as JSON lines")
    p_count = sub.add_parser("count", help="count each request of a provider body or trace export (format "
                                           "detected by content): per-message tokens, total, findings, drift")
    p_count.add_argument("file", metavar="FILE")
    counter_options(p_count, "auto", f"{COUNTER_HELP} (default auto: the counter each request's model calls for, "
                                     "from the model registry)")
    p_count.add_argument("--context-limit", type=int, metavar="N",
                         help="the model's context window (default: the model registry's window for each "
                              "request's model, else the request's own size, rounded up)")
    p_count.add_argument("--json", action="store_true", help="print one JSON document")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"core.commands.{name}")
        module.add_parser(sub).set_defaults(_run=module.run)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("context-inspector")
    except Exception:
        return "unknown"


def _edited(request: Request, args: argparse.Namespace) -> Request:
    data = request.model_dump(mode="json")
    for key in ("context_limit", "max_new_tokens", "margin"):
        value = getattr(args, key)
        if value is not None:
            data[key] = value
    if args.fill_order is not None:
        data["fill_order"] = _fill_order(args.fill_order)
    try:
        return parse_request(data)
    except RequestError as exc:
        raise RequestError(exc.problems, source="command line") from None


def _write(text: str, output: str | None, inputs: Sequence[str | None]) -> None:
    """Write to ``output`` (stdout when absent), never over a file this run read (core.outputs)."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    write_output(text, output, [*inputs, *(path for group in _RUN_INPUTS for path in group)])


def _load_assemblable(path: str, windows: str | None = None):
    """The single request of a file: a seed-003 request, a RAG windows request or a plan request."""
    from .rag import load_rag_request

    if windows is not None:
        return load_rag_request(path, windows_path=windows)
    entries = load_entries(path)
    if len(entries) == 1 and entries[0].kind == "plan":
        return entries[0].extra["plan_request"]
    if len(entries) == 1 and entries[0].kind == "rag":
        return entries[0].extra["rag"]
    return load_request(path)


def _fill_order(text: str) -> list[str]:
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise RequestError([("--fill-order", f"names the sections to fill, e.g. evidence,history (got {text!r})")],
                           source="command line")
    return parts


def _edited_plan(request, args: argparse.Namespace):
    if args.margin is not None or args.fill_order is not None:
        raise RequestError([("--margin/--fill-order", "a plan request sets these in its plan")], source=args.request)
    plan = request.plan.model_dump()
    if args.context_limit is not None:
        plan["budget_tokens"] = args.context_limit
    if args.max_new_tokens is not None:
        plan["reserve_output_tokens"] = args.max_new_tokens
    from .plans import parse_plan

    return request.model_copy(update={"plan": parse_plan(plan, source="command line")})


def _summariser(args: argparse.Namespace):
    if not getattr(args, "summariser", None):
        return None
    from .plans import HttpSummariser

    if not args.summariser_model:
        raise RequestError([("--summariser-model", "needed with --summariser")], source="command line")
    try:
        return HttpSummariser(args.summariser, args.summariser_model, api=args.summariser_api,
                              timeout=args.summariser_timeout)
    except ValueError as exc:
        raise RequestError([("--summariser", str(exc))], source="command line") from None


def _print_timings(elapsed: float, stats: dict) -> None:
    print(f"assembly_seconds={elapsed:.6f} full_counts={stats.get('full_counts', 0)} "
          f"item_counts={stats.get('item_counts', 0)}", file=sys.stderr)


def _cmd_plan(args: argparse.Namespace, request) -> int:
    from .plans import SummaryStore, assemble_plan_request

    request = _edited_plan(request, args)
    counter = build_counter(args)
    summariser = _summariser(args)
    store = SummaryStore(args.store) if getattr(args, "store", None) else None
    stats: dict = {}
    started = time.perf_counter()
    try:
        result = assemble_plan_request(request, counter, summariser=summariser, store=store,
                                       scope=args.scope if store else None,
                                       reference=getattr(args, "reference_recount", False), stats=stats)
    except RequestError:
        raise
    except ValueError as exc:
        raise RequestError([("plan", str(exc))], source=args.request) from None
    finally:
        if getattr(args, "timings", False):  # assembly alone: no start-up, no file loading, no writing
            _print_timings(time.perf_counter() - started, stats)
        if store is not None:
            store.close()
    _write(result.to_json(), args.output, [args.request])
    return EXIT_OK


def _cmd_assemble(args: argparse.Namespace, baseline: bool) -> int:
    from .rag import LoadedRag, assemble_rag

    loaded = _load_assemblable(args.request, getattr(args, "windows", None))
    rag = None
    if isinstance(loaded, LoadedRag):
        rag, loaded = loaded, loaded.request
    if not isinstance(loaded, Request):
        if baseline:
            raise RequestError([("", "the naive baseline takes a seed-003 request, not a plan request")],
                               source=args.request)
        return _cmd_plan(args, loaded)
    request = _edited(loaded, args)
    counter = build_counter(args)
    stats: dict = {}
    started = time.perf_counter()
    try:
        if baseline:
            result = naive_truncate(request, counter)
        elif rag is not None:
            result = assemble_rag(rag._replace(request=request), counter, reference=args.reference_recount,
                                  stats=stats)
        else:
            result = assemble(request, counter, reference=args.reference_recount, stats=stats)
    except RequiredContextTooLarge as exc:
        sys.stdout.write(json.dumps(exc.record(), indent=2) + "\n")
        _say(f"{PROG}: {args.request}: {exc}")
        return EXIT_REQUIRED_TOO_LARGE
    finally:
        if getattr(args, "timings", False):  # assembly alone: no start-up, no file loading, no writing
            _print_timings(time.perf_counter() - started, stats)
    _write(result.to_json(), args.output, [args.request])
    return EXIT_OK


def _cmd_audit(args: argparse.Namespace) -> int:
    result = load_result(args.result)
    counter = None
    if args.counter:
        counter = build_counter(args)
    elif result.counter is not None:
        try:  # the result's own counter, when it can be rebuilt here
            counter = make_counter(result.counter.name)
        except ContextInspectorError as exc:
            _say(f"{PROG}: note: not checking control tokens or the count ({exc})")
    findings = audit(result, counter)
    for f in findings:
        if args.json:
            print(json.dumps(f.to_json(), ensure_ascii=False))
        else:
            print(f"{f.severity:7} {f.rule:27} {f.location():32} {f.message}")
    if not args.json:
        errors = sum(f.severity == "error" for f in findings)
        print(f"{len(findings)} finding(s), {errors} error(s) in {args.result}")
    return EXIT_AUDIT if has_errors(findings) else EXIT_OK


def _cmd_count(args: argparse.Namespace) -> int:
    from .formats import import_file
    from .formats.report import count_file, report_json, report_text

    if args.context_limit is not None and args.context_limit <= 0:
        raise RequestError([("--context-limit", f"must be a positive number of tokens, not {args.context_limit}")],
                           source="command line")
    imported = import_file(args.file)
    report = count_file(imported, build_counter(args, auto=True), context_limit=args.context_limit)
    sys.stdout.write(report_json(report) if args.json else report_text(report))
    fallbacks = [rc.result for rc in report.requests if rc.result is not None
                 and (rc.result.model_extra or {}).get("counter_fallback")]
    if fallbacks:  # auto's counter could not be built here: loud, with what to run (never a download)
        notes = dict.fromkeys(r.counter.notes.removeprefix("an estimate: ").split("; counted with")[0]
                              for r in fallbacks if r.counter is not None)
        print(f"count: warning: {len(fallbacks)} request(s) counted as an estimate: {' | '.join(notes)}",
              file=sys.stderr)
    return EXIT_OK


def _file_of(args: argparse.Namespace) -> str:
    return getattr(args, "request", None) or getattr(args, "result", None) or getattr(args, "file", None) or "input"


_RUN_INPUTS: list[set[str]] = []  # while a command runs: the files it has read (core.inputs) and declared ones


def _declared_inputs(args: argparse.Namespace) -> set[str]:
    """Inputs a run reads other than through core.inputs: a tokenizer directory, a summary store."""
    declared = {getattr(args, "store", None) or ""}
    spec = getattr(args, "counter", None) or ""
    if spec.startswith("hf:"):
        declared.add(spec[3:])
    return {path for path in declared if path}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with tracking_reads() as seen:
        _RUN_INPUTS[:] = [seen, _declared_inputs(args)]
        try:
            return _main(args)
        finally:
            _RUN_INPUTS.clear()


def _main(args: argparse.Namespace) -> int:
    try:
        if getattr(args, "_run", None) is not None:
            return args._run(args)
        if args.command == "assemble":
            return _cmd_assemble(args, baseline=False)
        if args.command == "baseline":
            return _cmd_assemble(args, baseline=True)
        if args.command == "count":
            return _cmd_count(args)
        return _cmd_audit(args)
    except PromptNotCountable as exc:  # the template refuses the plan's prompt: bad input, not a budget
        _say(f"{PROG}: error: {_file_of(args)}: {exc}")
        return EXIT_BAD_INPUT
    except ContextBudgetError as exc:  # a plan that cannot fit without breaking a rule: like exit 3
        sys.stdout.write(json.dumps(exc.record(), indent=2) + "\n")
        _say(f"{PROG}: {_file_of(args)}: {exc}")
        return EXIT_REQUIRED_TOO_LARGE
    except (CounterError, ReplayUnavailable) as exc:  # raised while working on a named file: name it
        _say(f"{PROG}: error: {_file_of(args)}: {exc}")
        return EXIT_BAD_INPUT
    except RequestError as exc:  # every exit-2 line names the file it is about
        _say(f"{PROG}: error: {exc if exc.source else exc.with_source(_file_of(args))}")
        return EXIT_BAD_INPUT
    except ContextInspectorError as exc:
        _say(f"{PROG}: error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _say(f"{PROG}: interrupted")
        return 130
    except BaseException as exc:  # a tokenizer's Rust panic is a BaseException (pyo3's PanicException)
        if type(exc).__name__ != "PanicException":
            raise
        _say(f"{PROG}: error: {_file_of(args)}: the tokenizer failed on this input: {str(exc)[:200]}")
        return EXIT_BAD_INPUT


def _say(line: str) -> None:
    """One line on stderr, control characters escaped (the input's text must not act on the terminal)."""
    print(printable(line), file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
