"""Peak memory of hostile and huge inputs (issue 14), each in a process of its own.

    .venv/bin/python -m tests.benchmarks.bench_inputs [--quick]

Prints, per case, the input's size on disk, what it inflates to, the outcome (exit code and first line)
and the process's peak resident memory (``ru_maxrss`` of that child), beside the limits of core.inputs.
This process imports nothing of the project, so a child's peak is its own (a forked child's peak starts
from its parent's size).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def big_request(path: Path, size: int) -> None:
    """A seed-003 request of about ``size`` bytes: many passages of plain words."""
    words = ("the quick brown fox jumps over the lazy dog " * 40).strip()
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"instructions": "Answer.", "current": "What?", "context_limit": 32000, "max_new_tokens": 256, '
                  '"evidence": [')
        written, n = 0, 0
        while written < size:
            item = json.dumps({"id": f"p{n}", "text": words, "score": 0.5})
            out.write(("," if n else "") + item)
            written += len(item) + 1
            n += 1
        out.write("]}")


def gzip_bomb_cassette(path: Path, inflated: int) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip, made a MiB at a time: this process
    chunk = b" " * (1 << 20)                                           # stays small (a child's peak starts from it)
    bomb = b"".join(packer.compress(chunk) for _ in range(inflated >> 20)) + packer.flush()
    import yaml

    cassette = {"interactions": [{
        "request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions", "headers": {},
                    "body": {"string": bomb}},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "{}"}}}]}
    path.write_text(yaml.safe_dump(cassette), encoding="utf-8")


PEAK = ("import atexit, os, resource, sys; atexit.register(lambda: open(os.environ['PEAK_FILE'], 'w')"
        ".write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))); ")


def run(code_text: str, args: list[str]) -> tuple[int, str, float, float]:
    """Run ``code_text`` in a fresh interpreter that writes its own peak resident memory as it exits."""
    started = time.perf_counter()
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak_file:
        proc = subprocess.run([sys.executable, "-c", PEAK + code_text, *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PEAK_FILE": peak_file.name})
        peak = int(Path(peak_file.name).read_text() or 0)
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    first = next((line for line in lines if line and "Torch" not in line), "")
    return proc.returncode, first[:110], peak / 1024, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller inputs")
    args = parser.parse_args()
    cli = "from core.cli import main; sys.exit(main(sys.argv[1:]))"
    scale = 4 if args.quick else 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cases = []
        big = tmp_path / "request-200mb.json"
        big_request(big, (200 << 20) // scale)
        cases.append((f"request of {big.stat().st_size / 2**20:.0f} MiB (one JSON document)", big,
                      (cli, ["assemble", str(big)]), big.stat().st_size))
        under = tmp_path / "request-60mb.json"
        big_request(under, (60 << 20) // scale)
        cases.append((f"request of {under.stat().st_size / 2**20:.0f} MiB, parsed and validated only", under,
                      ("import core; core.load_request(sys.argv[1])", [str(under)]),
                      under.stat().st_size))
        bomb = tmp_path / "bomb.yaml"
        gzip_bomb_cassette(bomb, (300 << 20) // scale)
        cases.append((f"cassette with a gzip body inflating to {300 // scale} MiB", bomb, (cli, ["count", str(bomb)]),
                      (300 << 20) // scale))
        limits = subprocess.run([sys.executable, "-c", "from core import inputs as i; print(f'limits: file "
                                 "{i.MAX_FILE_BYTES >> 20} MiB, one document {i.MAX_DOCUMENT_BYTES >> 20} MiB, YAML "
                                 "{i.MAX_YAML_BYTES >> 20} MiB, inflated body {i.MAX_INFLATED_BYTES >> 20} MiB, "
                                 "nesting {i.MAX_NESTING}')"], capture_output=True, text=True, cwd=ROOT)
        print(limits.stdout.strip())
        code, _, idle, _ = run("import core", [])
        print(f"importing the core alone: peak {idle:.0f} MiB")
        print(f"{'case':58} {'exit':>4} {'peak MiB':>9} {'peak/size':>9} {'seconds':>8}  first line")
        for title, _, (code_text, argv), size in cases:
            code, line, peak, seconds = run(code_text, argv)
            print(f"{title:58} {code:>4} {peak:9.0f} {peak / (size / 2**20):9.2f} {seconds:8.1f}  {line}")


if __name__ == "__main__":
    main()
