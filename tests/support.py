"""Helpers shared by the core tests: the fixtures folder, one default counter, request builders."""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

from core import RequiredContextTooLarge, assemble, make_counter, parse_request
from core.replay import Edits, edited_request, replay

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"


def imported_files() -> list[Path]:
    """The format fixtures and ../shared's real files an importer may read (chat templates and notes left out)."""
    found = sorted((FIXTURES / "formats").glob("*"))
    for shared in ("realworld", "realworld2"):
        found += [p for p in sorted((SHARED / shared).glob("*/*")) if p.is_file() and p.parent.name != "chat-templates"
                  and not p.name.endswith((".md", ".schema.json"))]
    return found


def imported_requests(counter):
    """(messages, tools) of every request the importers read from ``imported_files``, as recorded and with each
    set of adaptations the count makes for ``counter`` (files the importers refuse have no request to count)."""
    from core.formats.adapt import adapt, step_sets
    from core.formats.importing import import_file

    for path in imported_files():
        try:
            requests = import_file(path).requests
        except Exception:  # noqa: BLE001 - a file the importers refuse
            continue
        for request in requests:
            for steps in step_sets(list(request.messages), counter):
                yield adapt(list(request.messages), steps, counter)[0], request.tools


@lru_cache(maxsize=None)
def default_counter():
    return make_counter()


def fixture_data(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def fixture_request(name: str):
    return parse_request(fixture_data(f"{name}.request.json"), source=name)


def base_request(**changes) -> dict:
    data = {
        "instructions": "Answer from the passages. Cite ids.",
        "current": "What does save_copy do?",
        "context_limit": 4096, "max_new_tokens": 256, "margin": 16,
    }
    data.update(copy.deepcopy(changes))
    return data


def turn(n: int, words: int = 5) -> list[dict]:
    return [{"role": "user", "content": f"question {n} " + "word " * words, "id": f"t{n}"},
            {"role": "assistant", "content": f"answer {n} " + "reply " * words}]


def passage(pid: str, score: float, words: int = 10, text: str | None = None) -> dict:
    return {"id": pid, "source": f"doc/{pid}.md", "score": score,
            "text": text if text is not None else f"passage {pid} " + "lorem " * words}


def outcome(fn):
    """What ``fn()`` (an assembly) gives: its JSON without the counting note and each entry's fields set, or the
    refusal when the required content does not fit."""
    try:
        result = fn()
    except RequiredContextTooLarge as exc:
        return f"too large: {exc}"
    result = result.model_copy(update={"counting_note": None})
    return result.to_json(), [sorted(e.model_fields_set) for e in result.trace]


def replays_are_the_reference(request, limits, fill_order) -> list:
    """Replays of ``request`` at each limit in turn on the counter that recorded it (warm after the first), each
    asserted the same as a fresh reference assembly (``reference=True``, no memo of this content): their outcomes."""
    counter, reference = make_counter(), make_counter()
    recorded = assemble(request, counter)
    outcomes = []
    for limit in limits:
        edit = Edits(context_limit=limit, fill_order=fill_order)
        reference.__dict__.pop("_request_memos", None)
        replayed = outcome(lambda: replay(recorded, edits=edit, counter=counter))
        assert replayed == outcome(lambda: assemble(edited_request(request, edit), reference, reference=True)), limit
        outcomes.append(replayed)
    return outcomes


class LyingCounter:
    """Wraps a counter and inflates the standalone count of every text holding ``needle`` by 3, so a
    fast method's predictions go wrong (and it must notice)."""

    def __init__(self, inner, needle: str):
        self.inner, self.needle = inner, needle

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def text_count(self, text: str) -> int:
        return self.inner.text_count(text) + (3 if self.needle in text else 0)

    def text_counts(self, texts) -> list[int]:
        return [self.text_count(text) for text in texts]


def same_as_reference_at_every_fill(counter, make, max_new_tokens: int = 8) -> list:
    """The default assembly of ``make(limit)`` (a request dict for a context limit) equals the reference's at every
    limit the roomy request's kept items fill exactly, and a token either side (or both refuse it alike); the
    default's counting notes, in order."""
    import pytest

    roomy = assemble(parse_request(make(10 ** 6)), counter, reference=True)
    totals = sorted({int(e.reason.split(" ")[1]) for e in roomy.trace if e.reason.startswith("fits:")})
    notes = []
    for total in totals:
        for nudge in (-1, 0, 1):
            request = parse_request(make(total + nudge + max_new_tokens))
            try:
                reference = assemble(request, counter, reference=True)
            except Exception as exc:  # noqa: BLE001 - too large in both modes
                with pytest.raises(type(exc)):
                    assemble(request, counter)
                continue
            fast = assemble(request, counter)
            assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json(), (total, nudge)
            notes.append(fast.counting_note)
    return notes
