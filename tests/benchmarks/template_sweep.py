"""The default assembly against the reference under chat templates this project did not write: each Jinja template
of a folder, on a test tokenizer (``tests/tokenizer_factory.py``) carrying the marker tokens found in its text, on
random requests of the shape suite (history shapes, tool-call turns) and random plans. Prints, per template, the
examples run and how many differed or raised, and writes the differing cases to ``--out`` for a closer look.

The llama-cpp-python sdist ships 70 real templates (``vendor/llama.cpp/models/templates``); fetched on request only:

    pip download --no-deps --no-binary :all: llama-cpp-python -d /tmp/lcpp && tar xzf /tmp/lcpp/llama_cpp_python-*.tar.gz -C /tmp/lcpp
    .venv/bin/python -m tests.benchmarks.template_sweep /tmp/lcpp/llama_cpp_python-*/vendor/llama.cpp/models/templates

``--tokenizer DIR`` sweeps the templates on a real tokenizer instead (an HF folder holding ``tokenizer.json``; its own
template is replaced by each swept one): the vocabularies the same sdist ships as GGUF files (``ggml-vocab-*.gguf``:
Llama 3, Llama SPM, Command R, DeepSeek, Falcon, GPT-2, MPT, StarCoder, Qwen 2 and 3.5, Phi-3, Gemma 4...) become
such folders with transformers' GGUF tokenizer converter; no tokenizer is bundled or fetched.

``--examples`` per shape (default 20), ``--only TEXT`` (templates whose name holds it), ``--seed`` (random draws;
without it the draws are Hypothesis's fixed ones, the same for every template). Nothing is asserted: a difference is
a defect to look at (a template's own bug may be one: Bielik 11B v3 reads ``messages[loop.index0 - 1]`` in a loop
over a slice of the messages).
"""
from __future__ import annotations

import argparse
import pickle
import re
import signal
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# tags a template writes that a real tokenizer adds as plain (not special) tokens
PLAIN_ADDED = {"<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>",
               "</tools>"}
MARKER = re.compile(r"<\|[^\s|<>'\"]{1,40}\|>|<\|[A-Za-z_][A-Za-z0-9_]{0,30}>|<[A-Za-z_][A-Za-z0-9_]{0,30}\|>"
                    r"|\[/?[A-Z_]{2,30}\]|<(?:start|end)_of_turn>|</?s>|<(?:bos|eos)>|\[gMASK\]|<sop>|<｜[^｜]{1,40}｜>"
                    r"|</?think>|</?tool_call>|</?tool_response>")
BOS = ["<|begin_of_text|>", "<bos>", "<s>", "<|startoftext|>", "<｜begin▁of▁sentence｜>", "[gMASK]"]
EOS = ["<|eot_id|>", "<eos>", "</s>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<｜end▁of▁sentence｜>"]


def counter_for(template: str, folder: Path):
    """An ``hf:`` counter of a test tokenizer carrying ``template`` and the markers its text spells."""
    import tokenizer_factory

    from core import make_counter

    found = sorted(set(MARKER.findall(template)))
    special = [t for t in found if t not in PLAIN_ADDED]
    bos = next((t for t in BOS if t in special), "<s>")
    eos = next((t for t in EOS if t in special), "</s>")
    directory = tokenizer_factory.build_tokenizer_dir(folder, chat_template=template, special_tokens=special, bos=bos,
                                                      eos=eos, added_tokens=tuple(t for t in found if t in PLAIN_ADDED))
    return make_counter(f"hf:{directory}")


def real_counter_for(template: str, tokenizer: Path, folder: Path):
    """An ``hf:`` counter of the real tokenizer in folder ``tokenizer`` with ``template`` as its chat template (its
    files copied into ``folder``; the template written where transformers 5 looks first)."""
    import json
    import shutil

    from core import make_counter

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (tokenizer / name).exists():
            shutil.copy(tokenizer / name, folder / name)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
    config.pop("chat_template", None)
    config_path.write_text(json.dumps(config), encoding="utf-8")
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8")
    return make_counter(f"hf:{folder}")


def sweep(counter, shape: str, examples: int, seed: int | None) -> tuple[int, list, list]:
    """(examples run, differing cases, errors) of one shape under ``counter``."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    import test_fast_counting_shapes as shapes
    import test_plan_fast_counting as plans

    ran, differ, errors = [0], [], []
    options = dict(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                   derandomize=seed is None)

    def checked(case, check):
        ran[0] += 1
        try:
            check()
        except AssertionError as exc:
            differ.append((case, str(exc)[:300]))
        except Exception as exc:  # noqa: BLE001 - named in the report
            errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")

    if shape == "plan":
        @given(plans.plans(), st.sampled_from(plans.TOOLSETS))
        @settings(**options)
        def run(case, tools):
            checked((case, tools), lambda: plans.assert_same(*case[:3], counter, *case[3:], tools))
    else:
        strategy = shapes.shaped_requests(kinds=shapes.KINDS + ("user-run",)) if shape == "history" \
            else shapes.tool_call_requests()

        @given(strategy)
        @settings(**options)
        def run(case):
            checked(case, lambda: shapes.check(case, counter))
    if seed is not None:
        run = __import__("hypothesis").seed(seed)(run)
    run()
    return ran[0], differ, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("templates", type=Path, help="a folder of .jinja chat templates")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--only", default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--shapes", default="history,tool calls,plan")
    parser.add_argument("--tokenizer", type=Path, default=None,
                        help="a real tokenizer's HF folder to sweep the templates on (default: a test tokenizer)")
    parser.add_argument("--seconds", type=int, default=400, help="the most one template's shape may take")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "template_sweep")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(TESTS), str(TESTS.parent)]
    args.out.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in args.templates.glob("*.jinja") if not args.only or args.only in p.name)
    if not files:
        print(f"no .jinja templates in {args.templates}", file=sys.stderr)
        return 2
    if args.tokenizer is not None and not (args.tokenizer / "tokenizer.json").is_file():
        print(f"--tokenizer {args.tokenizer}: no tokenizer.json there (an HF tokenizer folder is wanted)", file=sys.stderr)
        return 2
    totals = {"run": 0, "differ": 0, "errors": 0}
    for path in files:
        try:
            text, folder = path.read_text(encoding="utf-8"), Path(tempfile.mkdtemp()) / "tokenizer"
            counter = real_counter_for(text, args.tokenizer, folder) if args.tokenizer else counter_for(text, folder)
            from core.contracts import ChatMessage

            counter.count([ChatMessage(role="user", content="hi")], [])
        except Exception as exc:  # noqa: BLE001 - a template that refuses a plain question (a tool_use variant)
            print(f"{path.name}: not swept ({type(exc).__name__}: {str(exc)[:120]})", flush=True)
            continue
        line = []
        for shape in args.shapes.split(","):
            signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("over --seconds")))
            signal.alarm(args.seconds)
            try:
                ran, differ, errors = sweep(counter, shape, args.examples, args.seed)
            except TimeoutError as exc:
                ran, differ, errors = 0, [], [str(exc)]
            finally:
                signal.alarm(0)
            totals["run"] += ran
            totals["differ"] += len(differ)
            totals["errors"] += len(errors)
            line.append(f"{shape} {ran} run, {len(differ)} differ, {len(errors)} errors")
            if differ:
                with open(args.out / f"{path.stem}.{shape.replace(' ', '_')}.pkl", "wb") as handle:
                    pickle.dump(differ, handle)
        print(f"{path.name}: " + "; ".join(line), flush=True)
    print(f"total: {totals['run']} run, {totals['differ']} differ, {totals['errors']} errors (cases in {args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
