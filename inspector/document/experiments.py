"""What an experiment's answers file gives the window (Qt-free): one row per variant, holding the request
that variant sent, so the bar, the tree and the rendered view show it like any recorded result; and
the grid of grades the Experiments pane draws. Grades come from ``core.grade_file``; nothing here
calls a model."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import core

from .building import audit_result
from .row import Row

GLYPHS = {"pass": "✓", "fail": "✕", "incomplete": "…"}


def variant_label(answers_path: str, variant: str) -> str:
    return f"{Path(answers_path).name.removesuffix('.answers.jsonl')} · {variant}"


def experiment_rows(answers: core.AnswersFile, path: str, counter: core.TokenCounter | None) -> list[Row]:
    rows = []
    for index, variant in enumerate(answers.variants):
        result = answers.results.get(variant)
        if result is None:
            rows.append(Row(source=path, index=index, line=None, kind="invalid", label=variant_label(path, variant),
                            error=f"{path}: variant {variant!r} has answers but no recorded request",
                            entry_kind="result"))
            continue
        notes: list[str] = []
        rows.append(Row(source=path, index=index, line=None, kind="result", label=variant_label(path, variant),
                        request=result.request, result=result, findings=audit_result(result, counter, notes),
                        counter_name=result.counter.name if result.counter else None, notes=notes,
                        entry_kind="result"))
    return rows


@dataclass
class ExperimentView:
    """An answers file with its grades, as the Experiments pane shows it."""

    answers: core.AnswersFile
    graded: core.Graded | None  # None when the file carries no rules (then the grid shows "?")
    problem: str | None = None  # why it could not be graded
    cells: dict[tuple[str, int], tuple[dict[str, Any], core.Grade | None]] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.answers.path or ""

    def grade(self, variant: str, seed: int) -> core.Grade | None:
        cell = self.cells.get((variant, seed))
        return cell[1] if cell else None

    def answer(self, variant: str, seed: int) -> dict[str, Any] | None:
        cell = self.cells.get((variant, seed))
        return cell[0] if cell else None

    def title(self) -> str:
        header = self.answers.header
        model = header.get("model") or {}
        declared = (header.get("model_declared") or {}).get("sha256")
        endpoint = (header.get("endpoint") or {}).get("url", "?")
        parts = [f"{Path(self.path).name}: {len(self.answers.answers)} answers from {model.get('requested', '?')} at "
                 f"{endpoint}"]
        if declared:
            parts.append(f"model sha256 {declared[:12]}… (declared)")
        sampling = header.get("sampling") or {}
        parts.append(f"temperature {sampling.get('temperature')}, top_p {sampling.get('top_p')}")
        return "; ".join(parts)


def experiment_view(path: str, rules_path: str | None = None) -> ExperimentView:
    """Read and grade an answers file (by its recorded rules, or ``rules_path``)."""
    answers = core.load_answers(path)
    graded, problem = None, None
    try:
        rules = core.load_rules(rules_path) if rules_path else None
        graded = core.grade_file(answers, rules=rules, rules_source=rules_path)
    except core.ContextInspectorError as exc:
        problem = str(exc)
    view = ExperimentView(answers=answers, graded=graded, problem=problem)
    grades = {(a["variant"], a["seed"]): g for a, g in graded.grades} if graded is not None else {}
    for a in answers.answers:
        view.cells[(a["variant"], a["seed"])] = (a, grades.get((a["variant"], a["seed"])))
    return view
