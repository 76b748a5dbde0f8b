"""The answers file (``*.answers.jsonl``): one experiment, its variants' requests and every answer.

Line 1 is the experiment (``"format": "context-inspector/experiment@1"``): the request it varies,
the endpoint (URL without credentials), the model's identity as the server reported it and as the
person declared it, the sampling settings, the seeds, the counter and the rules (if given). Then one
``variant`` line per variant holding its assembled result (the recorded-result format the inspector
opens), then one ``answer`` line per run: variant, seed, the exact request body sent and its sha256,
our prompt count beside the server's, the latency, the answer text and the raw response.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputFileError, RequestError
from ..loading import read_text
from ..result import AssemblyResult, parse_result

EXPERIMENT_FORMAT = "context-inspector/experiment@1"
ILLUSTRATION = ("An illustration of how these requests behave with this model and this prompt; not a "
                "measure of answer quality. String rules are not a judgment of meaning.")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass
class AnswersFile:
    """An answers file read back: the experiment header, each variant's result, every answer."""

    header: dict[str, Any]
    results: dict[str, AssemblyResult] = field(default_factory=dict)
    answers: list[dict[str, Any]] = field(default_factory=list)
    path: str | None = None

    @property
    def variants(self) -> list[str]:
        named = list(self.header.get("variants") or [])
        return named + [v for v in self.results if v not in named]

    @property
    def seeds(self) -> list[int]:
        return sorted({a["seed"] for a in self.answers if isinstance(a.get("seed"), int)})

    def answers_of(self, variant: str) -> list[dict[str, Any]]:
        return [a for a in self.answers if a.get("variant") == variant]

    def answer(self, variant: str, seed: int) -> dict[str, Any] | None:
        return next((a for a in self.answers if a.get("variant") == variant and a.get("seed") == seed), None)


def looks_like_answers(first_record: Any) -> bool:
    return isinstance(first_record, dict) and first_record.get("format") == EXPERIMENT_FORMAT


def sniff_answers(path: str | Path) -> bool:
    """True when the file's first line is an experiment header (detection by content, not name)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
        return looks_like_answers(json.loads(first.decode("utf-8-sig")))
    except (OSError, ValueError):
        return False


def load_answers(path: str | Path) -> AnswersFile:
    """Read an answers file; every problem names the file and line."""
    text = read_text(path)
    records = parse_answers_text(text, source=str(path))
    records.path = str(path)
    return records


def parse_answers_text(text: str, *, source: str = "answers") -> AnswersFile:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise InputFileError(source, "empty: no experiment header")
    decoded: list[tuple[int, dict[str, Any]]] = []
    for n, line in lines:
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(source, f"not JSON ({exc.msg})", line=n, column=exc.colno) from None
        if not isinstance(value, dict):
            raise InputFileError(source, "each line must be a JSON object", line=n)
        decoded.append((n, value))
    first_line, header = decoded[0]
    if not looks_like_answers(header):
        raise InputFileError(source, f"line 1 is not an experiment header (format {EXPERIMENT_FORMAT!r})", line=1)
    out = AnswersFile(header=header)
    for n, record in decoded[1:]:
        kind = record.get("kind")
        if kind == "variant":
            try:
                out.results[str(record["variant"])] = parse_result(record["result"], source=f"{source}:{n}")
            except KeyError as exc:
                raise RequestError([(str(exc.args[0]), "missing from a variant line")], source=f"{source}:{n}") from None
        elif kind == "answer":
            for key in ("variant", "seed"):
                if key not in record:
                    raise RequestError([(key, "missing from an answer line")], source=f"{source}:{n}")
            record["_line"] = n
            out.answers.append(record)
        else:
            raise InputFileError(source, f"unknown line kind {kind!r} (expected 'variant' or 'answer')", line=n)
    return out


class AnswersWriter:
    """Appends an experiment's lines to a new file as they are made (a cancelled or failed run keeps
    what it recorded). Refuses a file that exists: nothing of the person's is overwritten."""

    def __init__(self, path: str | Path, *, overwrite: bool = False) -> None:
        self.path = Path(path)
        mode = "w" if overwrite else "x"
        try:
            self._handle = open(self.path, mode, encoding="utf-8", newline="\n")
        except FileExistsError:
            raise RequestError([("--output", "the file exists; choose another name or pass --overwrite")],
                               source=str(path)) from None
        except OSError as exc:
            raise RequestError([("--output", f"cannot write: {exc.strerror or exc}")], source=str(path)) from None

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(dumps(record))
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "AnswersWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_lines(records: Iterable[dict[str, Any]]) -> str:
    return "".join(dumps(r) for r in records)
