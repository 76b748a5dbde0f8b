"""Benchmark for issue 19: ``sweep`` throughput on every core, memory against corpus size, Ray's overhead.

    nice -n 10 .venv/bin/python -m tests.benchmarks.bench_sweep            (20,000 requests)
    nice -n 10 .venv/bin/python -m tests.benchmarks.bench_sweep --quick    (4,000 requests)

The corpus is generated in a temporary folder: small seed-003 requests (instructions, two history
turns, three scored passages, about 200 tokens each, every one with its own text so no count is
cached across requests), 500 per JSONL shard, swept under two settings (a tight and a roomy
context limit). Figures printed, not asserted:

- throughput: requests/s of ``--engine local`` on every core against the single-process rate
  (``--workers 1``, in this process), measured side by side; target >= 0.9 x cores x single;
- CPU time per request, single process against the pool (workers' utime + stime and the parent's): on
  a machine whose cores others are using, the wall-clock ratio measures their load; this one does not;
- memory: peak RSS (VmRSS, sampled) of the parent and of its largest worker at two corpus sizes (flat:
  rows go to the work folder, only totals come back, at most two shards per worker in flight);
- Ray: a local two-worker cluster against ``--engine local`` on every core (2 here) on the small corpus: the
  aggregates compared, and the overhead per request (with and without the cluster's start).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from core.sweep import cpu_count, ray_available, run_sweep, settings_from

from .workload import text_of

PER_SHARD = 250
LIMITS = "260,recorded"
TARGET = 0.9


def small_request(i: int) -> dict:
    rng = random.Random(i)
    history = []
    for t in range(2):
        history += [{"role": "user", "content": text_of(rng, 12)}, {"role": "assistant", "content": text_of(rng, 16)}]
    return {"id": f"q{i}", "instructions": text_of(rng, 14), "history": history, "current": text_of(rng, 10),
            "evidence": [{"id": f"p{k}", "text": text_of(rng, 25), "score": round(rng.random(), 3)} for k in range(3)],
            "context_limit": 512, "max_new_tokens": 128, "margin": 8}


def corpus(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, n, PER_SHARD):
        lines = [json.dumps(small_request(i)) for i in range(start, min(start + PER_SHARD, n))]
        (folder / f"shard-{start // PER_SHARD:04}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def timed(paths, **options) -> tuple[float, dict]:
    started = time.perf_counter()
    sweep = run_sweep([str(p) for p in paths], settings_from(LIMITS, None, None), **options)
    return time.perf_counter() - started, sweep


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [p for p, parent in parents.items() if parent == pid]
        found += children
        frontier += children
    return found


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, ValueError, IndexError):
        return 0.0


class PeakRss:
    """Samples the RSS of this process and of its descendants (the pool's workers) while a run goes on,
    and the CPU seconds the workers used (their last sample: a worker's utime + stime)."""

    def __init__(self) -> None:
        self.parent = self.child = 0
        self._cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        pids: list[int] = []
        rounds = 0
        while not self._stop.is_set():
            self.parent = max(self.parent, _rss_kb(os.getpid()))
            if rounds % 5 == 0:  # listing /proc is the sampler's dear part: once a second
                pids = _descendants(os.getpid())
            rounds += 1
            for pid in pids:
                self.child = max(self.child, _rss_kb(pid))
                self._cpu[pid] = max(self._cpu.get(pid, 0.0), _cpu_seconds(pid))
            self._stop.wait(0.2)

    @property
    def worker_cpu(self) -> float:
        return sum(self._cpu.values())

    def __enter__(self) -> "PeakRss":
        self._cpu_started = time.process_time()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.parent_cpu = time.process_time() - self._cpu_started


def same(a: dict, b: dict) -> bool:
    strip = ("engine", "timings")
    return {k: v for k, v in a.items() if k not in strip} == {k: v for k, v in b.items() if k not in strip}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4,000 requests instead of 20,000")
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    n = args.requests or (4000 if args.quick else 20000)
    cores = cpu_count()
    load = os.getloadavg()
    print(f"## sweep benchmark: {n:,} small requests ({PER_SHARD} per JSONL shard), settings {LIMITS}, "
          f"{cores} cores, load average {load[0]:.1f} at start")
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        root = Path(tmp)
        full = corpus(root / "full", n)
        single_n = max(4 * PER_SHARD, n // 10 // PER_SHARD * PER_SHARD)  # at least 4 shards: a pool runs
        single = corpus(root / "single", single_n)

        cpu_started = time.process_time()
        t1, s1 = timed([single], workers=1)
        single_cpu = time.process_time() - cpu_started
        with PeakRss() as rss_full:
            tn, sn = timed([full], workers=cores)
        with PeakRss() as rss_small:
            ts, small_run = timed([single], workers=cores, output=root / "local" / "SWEEP.json")
        single_rate = s1["corpus"]["requests"] / t1
        pool_rate = sn["corpus"]["requests"] / tn
        ratio = pool_rate / (cores * single_rate)
        print(f"single process: {single_rate:,.1f} requests/s ({single_n:,} requests in {t1:.1f} s)")
        print(f"local, {cores} workers: {pool_rate:,.1f} requests/s ({n:,} requests in {tn:.1f} s, pool start "
              "included)")
        print(f"throughput ratio: {ratio:.2f} x (cores x single-process rate); target >= {TARGET} "
              f"({'met' if ratio >= TARGET else 'NOT met'})")
        single_ms = single_cpu / s1["corpus"]["requests"] * 1000
        pool_ms = rss_full.worker_cpu / n * 1000
        print(f"CPU time per request: single process {single_ms:.2f} ms, pool workers {pool_ms:.2f} ms (their start "
              f"included; the parent, with this sampler, used {rss_full.parent_cpu:.1f} s); CPU efficiency "
              f"{single_ms / pool_ms:.2f} (the ratio with {cores} idle cores, if the parent's share stays small)")
        for size, rss in ((single_n, rss_small), (n, rss_full)):
            print(f"peak RSS at {size:>6,} requests: parent {rss.parent / 1024:6.1f} MiB, "
                  f"largest worker {rss.child / 1024:6.1f} MiB")

        if args.no_ray or not ray_available():
            print("ray: skipped" + ("" if args.no_ray else " (not installed: pip install 'context-inspector[ray]')"))
            return
        tl, local = ts, small_run  # local on the same small corpus, with 2 workers when cores is 2
        tr, on_ray = timed([single], engine="ray", workers=2, output=root / "ray" / "SWEEP.json")
        requests = local["corpus"]["requests"]
        print(f"local, {cores} workers: {tl:.1f} s; ray, local 2-worker cluster: {tr:.1f} s (of which the sweep "
              f"{on_ray['timings']['run_seconds']:.1f} s) for {requests:,} requests")
        print(f"ray aggregates equal local: {same(local, on_ray)}")
        start = on_ray["timings"].get("cluster_start_seconds", 0.0)
        engine_only = on_ray["timings"]["run_seconds"] - start - local["timings"]["run_seconds"]
        print(f"ray overhead per request: {(tr - tl) / requests * 1000:.2f} ms with the cluster's start "
              f"({start:.1f} s), {engine_only / requests * 1000:.2f} ms without it")


if __name__ == "__main__":
    main()
