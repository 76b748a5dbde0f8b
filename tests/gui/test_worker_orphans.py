"""A window killed outright (SIGKILL: no atexit, no pool shutdown) leaves no worker processes behind: each
worker watches the process that started it and ends when it is gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from support import ROOT

# A stand-in for the window's process: it starts the reading pool as the window does, has each worker
# answer a job (so every worker has started and run its initializer), prints their pids, then waits.
WINDOW = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from inspector.workers.readpool import ReadPool
    pool = ReadPool("estimate", workers=2)
    jobs = [pool.submit_call(time.sleep, 0.5) for _ in range(4)]
    for job in jobs:
        job.result()
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ")[-1][:1] != "Z"  # a zombie has ended (its parent has not reaped it)
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to see which processes live")
def test_workers_end_when_the_window_process_is_killed():
    window = subprocess.Popen([sys.executable, "-c", WINDOW], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        workers = [int(pid) for pid in window.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(pid) for pid in workers)
        window.send_signal(signal.SIGKILL)
        window.wait()
        deadline = time.monotonic() + 60  # not a timing target: how long to wait before calling them left over
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in workers if _alive(pid)]
        assert not left, f"worker processes {left} outlived the killed window"
    finally:
        if window.poll() is None:
            window.kill()
            window.wait()
        for pid in workers if "workers" in locals() else []:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
