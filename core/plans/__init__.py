"""Plans of named sections (seed 002): shares of the whole budget, pins, compaction strategies.

    plan = ContextPlan(sections=(SectionPlan("system", share=0.1),
                                 SectionPlan("constraints", share=0.2, pinned=True),
                                 SectionPlan("recent", share=0.6, compaction="summarise-span")),
                       budget_tokens=8192, reserve_output_tokens=1024)
    result = ContextAssembler(plan, counter, strategies={"summarise-span": SummariseSpan(summariser)}
                              ).assemble({"system": [...], "constraints": [...], "recent": history})

Sections appear in the prompt in plan order. The budget is ``budget_tokens`` or the counter's
declared context window, minus ``reserve_output_tokens``, read on every assembly. Pinned content
(a pinned message, or every message of a pinned section) gets its room first and is never
evicted; the rest of the budget is split by shares, each a fraction of that whole remainder,
never of what earlier sections left. Sections without a share fill what the shares leave, in
``fill_order``. Every count is of the complete prompt through the counter's chat template.

Modules: ``model`` (the plan and its messages), ``strategies``, ``summaries`` (summarisers and the
store), ``assembler``, ``requests`` (plan request files, a seed-003 request as a plan), and how a plan
counts: ``counts`` (the reference), ``fastcounts`` with ``chains``, ``lists`` and ``passages`` (the item model),
``slices`` (the counter's exact variant counts where the item model stops), ``seams``.
"""
from __future__ import annotations

from .assembler import ContextAssembler, _compaction_reason, _outcome_record, _SectionState
from .counts import NEAR_ALLOWANCE, PlanCounts, PredictionMismatch, forget_constants
from .fastcounts import FastPlanCounts
from .model import BUILTIN_STRATEGIES, SUMMARY_PREFIX, ContextPlan, Message, SectionPlan, parse_plan, pinned
from .requests import (PlanRequest, RecordedSummary, assemble_plan_request, looks_like_plan_request,
                       parse_plan_request, plan_from_request)
from .strategies import (ByScore, CompactionOutcome, CompactionStrategy, Count, DropOldest, NewestTurns,
                         PinAndFold, Summary, SummariseSpan, _ComparesWithBudget)
from .summaries import (HttpSummariser, RecordedSummariser, Summariser, SummaryStore, _call_summariser,
                        _span_hash)

__all__ = [
    "BUILTIN_STRATEGIES", "SUMMARY_PREFIX", "NEAR_ALLOWANCE", "ByScore", "CompactionOutcome", "CompactionStrategy",
    "ContextAssembler", "ContextPlan", "Count", "DropOldest", "FastPlanCounts", "HttpSummariser", "Message",
    "NewestTurns", "PinAndFold", "PlanCounts", "PlanRequest", "PredictionMismatch", "RecordedSummariser",
    "RecordedSummary", "SectionPlan", "Summariser", "SummariseSpan", "Summary", "SummaryStore",
    "_ComparesWithBudget", "_SectionState", "_call_summariser", "_compaction_reason", "_outcome_record",
    "_span_hash", "assemble_plan_request", "forget_constants", "looks_like_plan_request", "parse_plan",
    "parse_plan_request", "pinned", "plan_from_request",
]
