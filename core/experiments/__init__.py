"""Experiments (seeds 003 and 001): variants of one request sent to a model endpoint the person
names, N seeds each, every answer recorded with its provenance, graded offline by string rules;
the position test moves the relevant passage and reports the pass rate by position."""
from .endpoints import API_KINDS, KEY_REMOVED, Endpoint, EndpointError, Reply, Sampling, public_url
from .grading import VERDICTS, Grade, Grader, Rules, grade_by_rules, incomplete_reason, load_grader, load_rules, parse_rules
from .records import (EXPERIMENT_FORMAT, ILLUSTRATION, AnswersFile, AnswersWriter, load_answers, looks_like_answers,
                      parse_answers_text, sha256_hex, sniff_answers)
from .run import Experiment, build_all, run_experiment, run_one
from .summary import Graded, PositionPoint, VariantGrades, grade_file, wilson
from .variants import (DEFAULT_VARIANTS, Subject, VariantError, build_variant, expand_specs, load_subject, placed,
                       position_of)

__all__ = [
    "API_KINDS", "KEY_REMOVED", "Endpoint", "EndpointError", "Reply", "Sampling", "public_url",
    "VERDICTS", "Grade", "Grader", "Rules", "grade_by_rules", "incomplete_reason", "load_grader", "load_rules",
    "parse_rules", "EXPERIMENT_FORMAT", "ILLUSTRATION", "AnswersFile", "AnswersWriter", "load_answers",
    "looks_like_answers", "parse_answers_text", "sha256_hex", "sniff_answers", "Experiment", "build_all",
    "run_experiment", "run_one", "Graded", "PositionPoint", "VariantGrades", "grade_file", "wilson",
    "DEFAULT_VARIANTS", "Subject", "VariantError", "build_variant", "expand_specs", "load_subject", "placed",
    "position_of",
]
