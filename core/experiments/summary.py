"""Grades of an answers file: per answer, per variant (seeds, pass, fail, incomplete) and the
position curve (pass rate by position with a Wilson interval). Reads records only; calls no model."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..errors import RequestError
from .grading import VERDICTS, Grade, Grader, checked, parse_rules
from .records import ILLUSTRATION, AnswersFile
from .variants import position_of

Z95 = 1.959963984540054


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``passes`` of ``n`` (95 % by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    if not 0 <= passes <= n:
        raise ValueError(f"{passes} passes of {n} runs")
    p = passes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if passes == 0 else max(0.0, centre - half)  # exact ends where rounding would blur them
    high = 1.0 if passes == n else min(1.0, centre + half)
    return low, high


@dataclass
class VariantGrades:
    variant: str
    seeds: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {v: 0 for v in VERDICTS})

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "seeds": self.seeds, **self.counts}


@dataclass
class PositionPoint:
    position: int
    n: int
    passes: int

    @property
    def rate(self) -> float:
        return self.passes / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passes, self.n)

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        return {"position": self.position, "n": self.n, "passes": self.passes, "rate": round(self.rate, 4),
                "wilson95": [round(low, 4), round(high, 4)]}


@dataclass
class Graded:
    """Every answer's grade and the tables built from them."""

    answers: AnswersFile
    grades: list[tuple[dict[str, Any], Grade]]
    rules_source: str

    def by_variant(self) -> list[VariantGrades]:
        table = {v: VariantGrades(v) for v in self.answers.variants}
        for answer, grade in self.grades:
            row = table.setdefault(answer["variant"], VariantGrades(answer["variant"]))
            row.seeds += 1
            row.counts[grade.verdict] += 1
        return list(table.values())

    def grade_of(self, variant: str, seed: int) -> Grade | None:
        return next((g for a, g in self.grades if a["variant"] == variant and a["seed"] == seed), None)

    def position_curve(self) -> list[PositionPoint]:
        """Pass rate per position; incomplete answers count as runs that did not pass."""
        points: dict[int, PositionPoint] = {}
        for answer, grade in self.grades:
            position = position_of(str(answer["variant"]))
            if position is None:
                continue
            point = points.setdefault(position, PositionPoint(position, 0, 0))
            point.n += 1
            point.passes += grade.verdict == "pass"
        return [points[k] for k in sorted(points)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.answers.path, "rules": self.rules_source, "model": self.answers.header.get("model"),
            "variants": [row.to_json() for row in self.by_variant()],
            "answers": [{"variant": a["variant"], "seed": a["seed"], **g.to_json()} for a, g in self.grades],
            "note": ILLUSTRATION,
        }
        curve = self.position_curve()
        if curve:
            out["position_curve"] = [p.to_json() for p in curve]
        return out

    def to_text(self) -> str:
        rows = self.by_variant()
        width = max([len("variant")] + [len(r.variant) for r in rows])
        lines = [f"{'variant':<{width}}  seeds  pass  fail  incomplete"]
        for r in rows:
            lines.append(f"{r.variant:<{width}}  {r.seeds:>5}  {r.counts['pass']:>4}  {r.counts['fail']:>4}  "
                         f"{r.counts['incomplete']:>10}")
        curve = self.position_curve()
        if curve:
            lines.append("")
            lines.append("position  runs  pass rate  95% interval (Wilson)")
            for p in curve:
                low, high = p.interval
                lines.append(f"{p.position:>8}  {p.n:>4}  {p.rate:>9.2f}  [{low:.2f}, {high:.2f}]")
        model = self.answers.header.get("model") or {}
        lines.append("")
        lines.append(f"model: {model.get('requested')} (server reports {_reported(self.answers)}); "
                     f"rules: {self.rules_source}")
        lines.append(ILLUSTRATION)
        return "\n".join(lines) + "\n"


def _reported(answers: AnswersFile) -> str:
    names = sorted({str(a.get("model", {}).get("reported")) for a in answers.answers if a.get("model")})
    return ", ".join(names) or "nothing"


def grade_file(answers: AnswersFile, *, rules: Any = None, grader: Grader | None = None,
               rules_source: str | None = None) -> Graded:
    """Grade every answer: by ``grader`` (a function), else ``rules``, else the rules the file carries."""
    if grader is None:
        if rules is None:
            recorded = answers.header.get("rules")
            if recorded is None:
                raise RequestError([("--rules", "the answers file carries no rules: give a rules file")],
                                   source=answers.path)
            rules = parse_rules(recorded, source=f"{answers.path}: rules")
            rules_source = rules_source or "recorded with the answers"
        grader = rules.grade
        rules_source = rules_source or "given"
    else:
        rules_source = rules_source or getattr(grader, "__name__", "a custom grader")
    grades = [(a, checked(grader(a), f"{answers.path}:{a.get('_line', '?')}")) for a in answers.answers]
    return Graded(answers=answers, grades=grades, rules_source=rules_source)
