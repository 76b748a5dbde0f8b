"""Grading recorded answers by string rules (seed 003): pass, fail or incomplete, and the rule that decided.

A rules file::

    {"must_cite_one_of": ["rb-disk-full"],          # the answer names at least one of these passage ids
     "must_contain": ["logrotate"],                 # every one of these strings appears
     "must_not_contain": ["open_ticket"],           # none of these appears
     "case_sensitive": false}

Rules are checked in a fixed order, and the first that fails decides: an answer that is missing
(an error, no text) or cut off by the token limit is ``incomplete``; then ``must_not_contain``,
``must_cite_one_of`` and ``must_contain`` in the order written. String rules are not a judgment of
meaning. A grader of your own is one function ``(answer: dict) -> Grade``. Grading reads recorded
answers only; it never calls a model.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..contracts import problems_from
from ..errors import RequestError
from ..loading import read_json

VERDICTS = ("pass", "fail", "incomplete")


@dataclass(frozen=True)
class Grade:
    verdict: str  # "pass" | "fail" | "incomplete"
    rule: str  # which rule decided, e.g. "must_contain" (or "all rules hold")
    detail: str  # what it found, in words

    def to_json(self) -> dict[str, str]:
        return {"verdict": self.verdict, "rule": self.rule, "detail": self.detail}


Grader = Callable[[dict[str, Any]], Grade]


class Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    must_cite_one_of: list[str] = Field(default_factory=list)
    must_contain: list[str] = Field(default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)
    case_sensitive: bool = False

    @property
    def relevant(self) -> str | None:
        """The passage a position test moves: the single id the answer must cite."""
        return self.must_cite_one_of[0] if len(self.must_cite_one_of) == 1 else None

    def grade(self, answer: dict[str, Any]) -> Grade:
        return grade_by_rules(self, answer)


def parse_rules(data: Any, *, source: str | None = None) -> Rules:
    if not isinstance(data, dict):
        raise RequestError([("", "a rules file is a JSON object (must_cite_one_of, must_contain, "
                                 "must_not_contain, case_sensitive)")], source=source)
    try:
        rules = Rules.model_validate(data)
    except ValidationError as exc:
        raise RequestError(problems_from(exc), source=source) from None
    if not (rules.must_cite_one_of or rules.must_contain or rules.must_not_contain):
        raise RequestError([("", "no rule: give must_cite_one_of, must_contain or must_not_contain")], source=source)
    for key in ("must_cite_one_of", "must_contain", "must_not_contain"):
        for k, value in enumerate(getattr(rules, key)):
            if not value.strip():
                raise RequestError([(f"{key}[{k}]", "an empty string matches every answer")], source=source)
    return rules


def load_rules(path: str | Path) -> Rules:
    return parse_rules(read_json(path), source=str(path))


def grade_by_rules(rules: Rules, answer: dict[str, Any]) -> Grade:
    missing = incomplete_reason(answer)
    if missing is not None:
        return Grade("incomplete", "answer complete", missing)
    text = answer.get("answer") or ""
    fold = (lambda s: s) if rules.case_sensitive else str.casefold
    haystack = fold(text)
    for needle in rules.must_not_contain:
        if fold(needle) in haystack:
            return Grade("fail", "must_not_contain", f"contains {needle!r}")
    if rules.must_cite_one_of and not any(fold(pid) in haystack for pid in rules.must_cite_one_of):
        return Grade("fail", "must_cite_one_of", f"cites none of {', '.join(rules.must_cite_one_of)}")
    for needle in rules.must_contain:
        if fold(needle) not in haystack:
            return Grade("fail", "must_contain", f"does not contain {needle!r}")
    return Grade("pass", "all rules hold", _held(rules))


def _held(rules: Rules) -> str:
    parts = []
    if rules.must_cite_one_of:
        parts.append(f"cites one of {', '.join(rules.must_cite_one_of)}")
    if rules.must_contain:
        parts.append("contains " + ", ".join(repr(s) for s in rules.must_contain))
    if rules.must_not_contain:
        parts.append("avoids " + ", ".join(repr(s) for s in rules.must_not_contain))
    return "; ".join(parts)


def incomplete_reason(answer: dict[str, Any]) -> str | None:
    """Why an answer cannot be graded on its text (``None`` when it can)."""
    if answer.get("error"):
        return f"no answer: {answer['error']}"
    text = answer.get("answer")
    if not isinstance(text, str) or not text.strip():
        return "the model returned no text"
    if answer.get("finish_reason") == "length":
        return "cut off at the output limit (finish_reason 'length')"
    return None


def load_grader(spec: str) -> Grader:
    """``module:function`` (importable) as a grader: one function from an answer record to a ``Grade``."""
    import importlib

    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise RequestError([("--grader", f"expected module:function, not {spec!r}")], source="command line")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise RequestError([("--grader", f"cannot load {spec}: {exc}")], source="command line") from None
    if not callable(function):
        raise RequestError([("--grader", f"{spec} is not a function")], source="command line")
    return function


def checked(grade: Any, where: str) -> Grade:
    """A custom grader's return value, refused when it is not a ``Grade`` with a known verdict."""
    if isinstance(grade, Grade) and grade.verdict in VERDICTS:
        return grade
    raise RequestError([(where, f"the grader returned {grade!r}; it must return Grade(verdict, rule, detail) "
                               f"with verdict in {', '.join(VERDICTS)}")])


def rules_json(rules: Rules) -> str:
    return json.dumps(rules.model_dump(), sort_keys=True)
