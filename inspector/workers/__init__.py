"""Background work, so the GUI thread never waits: building counters, reading and assembling files,
replays and what-if sweeps, and jobs where only the newest call matters. Results reach the window
through queued signals."""
from .counters import CounterCache, CounterThread, shared_counter_cache
from .latest import LatestJob, LatestJobThread
from .jsonl import ReadRowThread
from .loading import LoadJob, LoadThread, is_jsonl_file
from .replay import ReplayController

__all__ = ["CounterCache", "CounterThread", "LatestJob", "LatestJobThread", "LoadJob", "LoadThread", "ReadRowThread",
           "ReplayController", "is_jsonl_file", "shared_counter_cache"]
