"""``context-assembler grade ANSWERS.jsonl [--rules RULES.json] [--json]``: grade recorded answers
offline (no model is called) and print variant, seeds, pass, fail, incomplete, and the position
curve when the experiment moved a passage."""
from __future__ import annotations

import argparse
import json
import sys

from ..experiments import grade_file, load_answers, load_grader, load_rules

HELP = "grade recorded answers by string rules (pass / fail / incomplete); calls no model"


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("grade", help=HELP, description=HELP)
    p.add_argument("answers", metavar="ANSWERS.jsonl")
    p.add_argument("--rules", metavar="RULES.json", help="default: the rules recorded with the answers")
    p.add_argument("--grader", metavar="MODULE:FUNCTION", help="a grader of your own: one function from an "
                                                               "answer record to a core.experiments.Grade")
    p.add_argument("--json", action="store_true", help="one JSON document: the table, every grade, the curve")
    return p


def run(args: argparse.Namespace) -> int:
    answers = load_answers(args.answers)
    grader = load_grader(args.grader) if args.grader else None
    rules = load_rules(args.rules) if args.rules and grader is None else None
    graded = grade_file(answers, rules=rules, grader=grader, rules_source=args.rules or args.grader)
    sys.stdout.write(json.dumps(graded.to_json(), indent=2, ensure_ascii=False) + "\n" if args.json
                     else graded.to_text())
    return 0
