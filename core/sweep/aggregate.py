"""Figures per setting, merged from shards in any order with the same result.

Everything here is a count or a sum of integers (input tokens are kept as exact value -> count
tables, bounded by the range of token counts, not by the number of requests), so two engines that
merge the shards in different orders produce the same JSON. Cost is computed once at the end
from input tokens per model, in model order, for the same reason.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

SAMPLES = 20  # error samples kept: the first by reference, whatever the merge order
PERCENTILES = (50, 90, 95, 99)
BUCKETS = 20


def _merge_samples(a: list[list[str]], b: list[list[str]]) -> list[list[str]]:
    return sorted({tuple(x): None for x in a + b})[:SAMPLES]  # type: ignore[return-value]


class SettingTotals:
    """The figures of one setting."""

    FIELDS = ("requests", "assembled", "overflows", "errors", "losing", "lost_items", "audit_errors",
              "audit_requests", "input_tokens_total")

    def __init__(self) -> None:
        for name in self.FIELDS:
            setattr(self, name, 0)
        self.sections: dict[str, list[int]] = {}  # section -> [items, dropped]
        self.input_tokens: Counter[int] = Counter()
        self.free: Counter[int] = Counter()
        self.lost: Counter[int] = Counter()
        self.tokens_by_model: Counter[str] = Counter()
        self.samples: list[list[str]] = []

    def add(self, ref: str, model: str | None, row: dict[str, Any]) -> None:
        self.requests += 1
        if "err" in row:
            self.errors += 1
            self.samples = _merge_samples(self.samples, [[ref, row["err"]]])
            return
        if row.get("over"):
            self.overflows += 1
            return
        self.assembled += 1
        self.input_tokens[row["in"]] += 1
        self.free[row["free"]] += 1
        self.input_tokens_total += row["in"]
        self.tokens_by_model[model or ""] += row["in"]
        self.lost[row["lost"]] += 1
        self.losing += row["lost"] > 0
        self.lost_items += row["lost"]
        self.audit_errors += row["audit"]
        self.audit_requests += row["audit"] > 0
        for section in set(row["kept"]) | set(row["dropped"]):
            kept, dropped = row["kept"].get(section, 0), row["dropped"].get(section, 0)
            totals = self.sections.setdefault(section, [0, 0])
            totals[0] += kept + dropped
            totals[1] += dropped

    def merge(self, other: "SettingTotals") -> None:
        for name in self.FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for section, (items, dropped) in other.sections.items():
            totals = self.sections.setdefault(section, [0, 0])
            totals[0] += items
            totals[1] += dropped
        self.input_tokens.update(other.input_tokens)
        self.free.update(other.free)
        self.lost.update(other.lost)
        self.tokens_by_model.update(other.tokens_by_model)
        self.samples = _merge_samples(self.samples, other.samples)

    # ---- the shard file form (exact; merged again on resume)

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in self.FIELDS}
        data.update(sections=self.sections, samples=self.samples, tokens_by_model=dict(self.tokens_by_model),
                    input_tokens={str(k): v for k, v in self.input_tokens.items()},
                    free={str(k): v for k, v in self.free.items()}, lost={str(k): v for k, v in self.lost.items()})
        return data

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> "SettingTotals":
        totals = cls()
        for name in cls.FIELDS:
            setattr(totals, name, data[name])
        totals.sections = {k: list(v) for k, v in data["sections"].items()}
        totals.samples = [list(x) for x in data["samples"]]
        totals.tokens_by_model = Counter(data["tokens_by_model"])
        for name in ("input_tokens", "free", "lost"):
            setattr(totals, name, Counter({int(k): v for k, v in data[name].items()}))
        return totals


class Totals:
    """Every setting's figures, plus the requests and files that could not be read."""

    def __init__(self, settings: int) -> None:
        self.settings = [SettingTotals() for _ in range(settings)]
        self.requests = 0
        self.bad_files: list[list[str]] = []  # [path, problem]
        self.bad_records = 0
        self.bad_record_samples: list[list[str]] = []
        self.adapted = 0  # imported calls re-assembled with an adaptation (the row's ``adapted`` says which)

    def add_row(self, row: dict[str, Any]) -> None:
        self.requests += 1
        self.adapted += bool(row.get("adapted"))
        for totals, figures in zip(self.settings, row["settings"]):
            totals.add(row["ref"], row.get("model"), figures)

    def bad_record(self, ref: str, problem: str) -> None:
        self.bad_records += 1
        self.bad_record_samples = _merge_samples(self.bad_record_samples, [[ref, problem]])

    def merge(self, other: "Totals") -> None:
        self.requests += other.requests
        self.adapted += other.adapted
        self.bad_records += other.bad_records
        self.bad_record_samples = _merge_samples(self.bad_record_samples, other.bad_record_samples)
        self.bad_files = sorted(self.bad_files + other.bad_files)
        for mine, theirs in zip(self.settings, other.settings):
            mine.merge(theirs)

    def state(self) -> dict[str, Any]:
        return {"requests": self.requests, "adapted": self.adapted, "bad_files": self.bad_files, "bad_records": self.bad_records,
                "bad_record_samples": self.bad_record_samples, "settings": [s.state() for s in self.settings]}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> "Totals":
        totals = cls(0)
        totals.requests, totals.bad_records = data["requests"], data["bad_records"]
        totals.adapted = data.get("adapted", 0)
        totals.bad_files = [list(x) for x in data["bad_files"]]
        totals.bad_record_samples = [list(x) for x in data["bad_record_samples"]]
        totals.settings = [SettingTotals.from_state(s) for s in data["settings"]]
        return totals


def merged(states: Iterable[dict[str, Any]], settings: int) -> Totals:
    total = Totals(settings)
    for state in states:
        total.merge(Totals.from_state(state))
    return total


# ---- the report


def percentiles(values: Counter[int]) -> dict[str, int | None]:
    """Nearest-rank percentiles of a value -> count table (``None`` when empty)."""
    n = sum(values.values())
    out: dict[str, int | None] = {"min": None, **{f"p{p}": None for p in PERCENTILES}, "max": None}
    if n == 0:
        return out
    ordered = sorted(values.items())
    out["min"], out["max"] = ordered[0][0], ordered[-1][0]
    for p in PERCENTILES:
        rank, seen = max(1, -(-p * n // 100)), 0
        for value, count in ordered:
            seen += count
            if seen >= rank:
                out[f"p{p}"] = value
                break
    return out


def histogram(values: Counter[int], edges: list[int]) -> list[dict[str, int]]:
    """Counts in ``[edges[i], edges[i+1])``; the last bucket also holds its upper edge."""
    buckets = [{"lo": lo, "hi": hi, "count": 0} for lo, hi in zip(edges, edges[1:])]
    for value, count in values.items():
        for i, bucket in enumerate(buckets):
            if bucket["lo"] <= value < bucket["hi"] or (i == len(buckets) - 1 and value == bucket["hi"]):
                bucket["count"] += count
                break
    return buckets


def token_edges(tables: list[Counter[int]]) -> list[int]:
    """Common bucket edges for every setting's input tokens, so their histograms compare."""
    values = [v for table in tables for v in table]
    if not values:
        return [0, 1]
    low, high = min(values), max(values)
    width = max(1, -(-(high - low + 1) // BUCKETS))
    edges = [low + i * width for i in range(BUCKETS + 1)]
    while len(edges) > 2 and edges[-2] > high:
        edges.pop()
    return edges


def lost_edges(tables: list[Counter[int]]) -> list[int]:
    high = max((v for table in tables for v in table), default=0)
    if high < BUCKETS:
        return list(range(high + 2))
    width = -(-(high + 1) // BUCKETS)
    return [i * width for i in range(BUCKETS + 1)]


def report(total: Totals, price_of: Callable[[str], float | None]) -> list[dict[str, Any]]:
    """One entry per setting: counts, rates, percentiles, histograms and (where priced) input cost."""
    edges_in = token_edges([s.input_tokens for s in total.settings])
    edges_lost = lost_edges([s.lost for s in total.settings])
    out = []
    for s in total.settings:
        cost, priced_tokens = 0.0, 0
        for model in sorted(s.tokens_by_model):
            price = price_of(model) if model else None
            if price is not None:
                cost += price * s.tokens_by_model[model]
                priced_tokens += s.tokens_by_model[model]
        out.append({
            "requests": s.requests, "assembled": s.assembled, "overflows": s.overflows, "errors": s.errors,
            "requests_losing_kept_items": s.losing, "kept_items_lost": s.lost_items,
            "audit_errors": s.audit_errors, "requests_with_audit_errors": s.audit_requests,
            "input_tokens_total": s.input_tokens_total,
            "input_cost_usd": round(cost, 6) if priced_tokens else None, "priced_input_tokens": priced_tokens,
            "sections": {name: {"items": items, "dropped": dropped,
                                "drop_rate": round(dropped / items, 6) if items else 0.0}
                         for name, (items, dropped) in sorted(s.sections.items())},
            "input_tokens": percentiles(s.input_tokens), "free_tokens": percentiles(s.free),
            "histograms": {"input_tokens": histogram(s.input_tokens, edges_in),
                           "kept_items_lost": histogram(s.lost, edges_lost)},
            "error_samples": s.samples,
        })
    return out
