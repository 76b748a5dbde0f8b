"""A one-line progress bar on stderr: requests done, their rate and the time left (by bytes of shards done)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total_bytes: int, total_shards: int, *, stream: TextIO | None = None, width: int = 24):
        self.total_bytes, self.total_shards = max(total_bytes, 1), total_shards
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.requests = 0
        self.bytes_done = 0
        self.shards_done = 0
        self._last = 0.0

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        fraction = min(self.bytes_done / self.total_bytes, 1.0)
        filled = int(self.width * fraction)
        rate = self.requests / elapsed
        left = elapsed * (1 - fraction) / fraction if fraction > 0 else None
        return (f"sweep [{'#' * filled}{'.' * (self.width - filled)}] {self.shards_done}/{self.total_shards} shards, "
                f"{self.requests:,} requests, {rate:,.1f}/s, "
                f"{'time left ' + _clock(left) if left is not None else 'time left ?'}")

    def update(self, *, requests: int | None = None, shard_bytes: int = 0, shards: int = 0, force: bool = False) -> None:
        if requests is not None:
            self.requests = requests
        self.bytes_done += shard_bytes
        self.shards_done += shards
        now = time.monotonic()
        if force or now - self._last >= 0.2:
            self._last = now
            self.stream.write("\r" + self.line())
            self.stream.flush()

    def close(self) -> None:
        self.update(force=True)
        self.stream.write("\n")
        self.stream.flush()
