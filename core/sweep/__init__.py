"""What-if over a whole corpus: every request re-assembled under several settings, figures aggregated.

    from core.sweep import run_sweep, settings_from
    sweep = run_sweep(["traces/"], settings_from("8192,16k", ["both"], None), output="SWEEP.json")

Modules: ``corpus`` (files -> shards -> records), ``settings``, ``measure`` (the per-request
function both engines call), ``aggregate`` (mergeable totals and the report), ``work`` (the work
folder: per-shard results written atomically, resume), ``local`` (process pool), ``ray_engine``,
``results`` (reading a SWEEP.json back: bucket members for the inspector).
"""
from .corpus import SWEEP_FORMAT, BadFile, Record, Shard, plan_shards, read_shard
from .local import SweepInterrupted, cpu_count
from .measure import measure
from .ray_engine import RAY_MISSING, ray_available
from .results import (BucketMember, bucket_members, is_sweep, is_sweep_file, load_sweep, member_location, setting_of,
                      sweep_text)
from .run import ENGINES, run_sweep
from .settings import Setting, settings_from
from .work import work_folder_for

__all__ = [
    "SWEEP_FORMAT", "BadFile", "Record", "Shard", "plan_shards", "read_shard", "SweepInterrupted", "cpu_count",
    "measure", "RAY_MISSING", "ray_available", "BucketMember", "bucket_members", "is_sweep", "load_sweep",
    "is_sweep_file", "member_location", "setting_of", "sweep_text", "ENGINES", "run_sweep", "Setting", "settings_from", "work_folder_for",
]
