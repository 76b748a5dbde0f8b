"""The JSONL fast paths (core/jsonl_fast.py) answer what the reference path answers: a list row's summary
equal to the one ``json`` and the input layer give, a recorded result equal to ``parse_result(json.loads)``,
and where they cannot be sure (a refused, odd or foreign line) no answer, so the reference path decides;
a pending row's list values equal the general listing's. Checked on this project's recorded results and
fixtures, on the real files in ../shared/realworld*, and on lines changed the way a hand-edited file is."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import ROOT, SHARED

import core
from benchmarks.bench_inspector import write_results
from core.inputs import decode_json
from core.jsonl_fast import listed_keys, result_from_line
from core.loading import _summary


def reference_summary(raw: bytes, index: int = 0, line: int = 1, offset: int = 0) -> core.RowSummary | None:
    """What the index gave for a line before the fast path (None: an error row)."""
    try:
        return _summary(decode_json(raw.decode("utf-8")), index, line, offset, len(raw))
    except (UnicodeDecodeError, ValueError):
        return None


def fast_summary(raw: bytes) -> core.RowSummary | None:
    value = listed_keys(raw)
    return None if value is None else _summary(value, 0, 1, 0, len(raw))


def reference_result(raw: bytes) -> core.AssemblyResult | None:
    try:
        entry = core.entry_from(decode_json(raw.decode("utf-8")), 0, 1, "x.jsonl")
    except (UnicodeDecodeError, ValueError, core.ContextInspectorError):
        return None
    return entry.result if entry.kind == "result" else None


def mutations(line: bytes) -> list[bytes]:
    """The line changed the ways a hand-edited or foreign record is."""
    text = line.decode("utf-8")
    return [line, line[:-7], b"\xef\xbb\xbf" + line, line.replace(b'"strategy": "', b'"strategy": "\\ud800', 1),
            line.replace(b'"input_tokens": ', b'"input_tokens": 1' + b"0" * 4400 + b', "x": ', 1),
            line.replace(b'"input_tokens": ', b'"input_tokens": NaN, "y": ', 1),
            line.replace(b'"input_tokens": ', b'"input_tokens": "12", "z": ', 1),
            line.replace(b'"input_tokens": ', b'"deep": ' + b"[" * 150 + b"]" * 150 + b', "input_tokens": ', 1),
            line.replace(b'"input_tokens": ', b'"shallow": ' + b"[" * 20 + b"]" * 20 + b', "input_tokens": ', 1),
            line.replace(b'"trace": [', b'"trace": [3, ', 1), line.replace(b'"trace": [', b'"trace": {"a": [', 1)
            + b"}", line.replace(b'"decision": "kept"', b'"decision": ["kept"]', 1),
            line.replace(b'"decision": "kept", ', b"", 1), line.replace(b'"request": {', b'"request": [{', 1),
            line.replace(b'{"format"', b'{"kind": "plan", "format"', 1),
            line.replace(b'{"format"', b'{"kind": "rag-windows", "format"', 1),
            line.replace(b'"messages": [', b'"messages": ["', 1), line.replace(b'"messages": ', b'"messages_": ', 1),
            line.replace(b'"trace": ', b'"trace_": ', 1), line.replace(b'"request_id": ', b'"request_id": 7, "_": ', 1),
            line.replace(b'"strategy": "assemble"', b'"strategy": "assemble", "strategy": "later"', 1),
            line.replace(b'"score": ', b'"score": 1e400, "_s": ', 1), line.replace(b'"tokens": ', b'"tokens": 1.0, "_t": ', 1),
            line.replace(b"Answer", "Ånswer \u2028 \U0001f600".encode(), 1), line.replace(b"Answer", b"A\xffnswer", 1),
            line.replace(b"Answer", b"A\xed\xa0\x80nswer", 1), text.replace(" ", "\t", 5).encode("utf-8"),
            b"[" + line.rstrip() + b"]", b"3", b'{"current": "q", "instructions": "i"}', b'{"error": "RequiredContextTooLarge"}',
            b'{"kind": "plan", "id": "p1"}', b'{"instructions": 3, "id": null}', b'{"a": 1}']


def lines_of(path: Path) -> list[bytes]:
    with open(path, "rb") as handle:
        return [line for line in handle if line.strip()]


@pytest.fixture(scope="module")
def recorded_lines(tmp_path_factory) -> list[bytes]:
    path = tmp_path_factory.mktemp("jsonl-fast") / "bench.results.jsonl"
    write_results(path, 60, core.make_counter("mistral:tekken_240911"))
    lines = lines_of(path) + lines_of(ROOT / "fixtures" / "recorded.results.jsonl")
    for fixture in sorted(ROOT.glob("fixtures/*.json")):  # one line each, as a JSONL of them would hold
        lines.append(json.dumps(json.loads(fixture.read_text(encoding="utf-8")), ensure_ascii=False).encode() + b"\n")
    assert len(lines) > 80
    return lines


def check(raw: bytes) -> None:
    fast = fast_summary(raw)
    if fast is not None:  # the fast path answered: the reference's answer, and the reference reads the line
        assert fast == reference_summary(raw), raw[:200]
    result = result_from_line(raw)
    if result is not None:
        reference = reference_result(raw)
        if "trace" in result.model_fields_set:  # what read_entry takes (the reference also needs a trace)
            assert result == reference, raw[:200]


def test_the_fast_summary_and_result_are_the_reference_ones_on_recorded_results(recorded_lines):
    answered = 0
    for raw in recorded_lines:
        check(raw)
        answered += fast_summary(raw) is not None and result_from_line(raw) is not None
    assert answered >= 60  # the fast path is the one taken on what this project writes


def test_and_on_lines_changed_by_hand(recorded_lines):
    refused = 0
    for raw in recorded_lines[:25]:
        for changed in mutations(raw):
            check(changed)
            refused += fast_summary(changed) is None
    assert refused > 100  # the odd lines went to the reference path


def test_and_on_the_real_files_in_shared():
    paths = sorted(p for folder in ("realworld", "realworld2") for p in (SHARED / folder).rglob("*")
                   if p.suffix in (".json", ".jsonl") and p.is_file() and p.stat().st_size < 4_000_000)
    if not paths:
        pytest.skip(f"no real files under {SHARED}")
    for path in paths:
        data = path.read_bytes()
        for raw in (data.splitlines() if path.suffix == ".jsonl" else [data])[:400]:
            if raw.strip():
                check(raw)


def test_the_index_and_a_row_read_are_the_reference_ones(tmp_path, recorded_lines):
    path = tmp_path / "mixed.jsonl"
    lines = [m for raw in recorded_lines[:6] for m in mutations(raw)] + recorded_lines
    path.write_bytes(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines))
    index = core.index_jsonl(path)
    offset = 0
    rows = iter(index.rows)
    for number, raw in enumerate(path.read_bytes().splitlines(keepends=True), start=1):
        if raw.strip():
            row = next(rows)
            reference = reference_summary(raw, row.index, number, offset)
            if reference is None:
                assert row.kind == "error"
            else:
                assert row == reference
            assert (row.line, row.offset, row.length) == (number, offset, len(raw))
            if row.kind == "result":
                try:
                    entry = core.read_entry(path, row)
                except core.ContextInspectorError:
                    assert reference_result(raw) is None
                else:
                    assert entry.kind != "result" or entry.result == reference_result(raw)
        offset += len(raw)


def general_listing(row):
    """What ``listing`` gives through its general path: each column asked of the row's properties."""
    from inspector.document import listing as lists

    texts = tuple(lists.cell_text(row, c) for c in range(len(lists.COLUMNS)))
    keys = tuple(lists._sort_key(row, c, texts[c]) for c in range(len(lists.COLUMNS)))
    haystack = " ".join((row.label, row.strategy, row.format_name, row.file_name, row.status_text(),
                         row.kind)).lower()
    return lists.Listing(texts, keys, haystack, row.dropped_count, row.status)


def test_a_pending_rows_list_values_are_the_general_ones(recorded_lines, tmp_path):
    from inspector.document import pending_row
    from inspector.document import listing as lists

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(recorded_lines) + b'{"current": "q", "instructions": "i"}\n{"kind": "plan"}\n')
    index = core.index_jsonl(path)
    for summary in index.rows:
        row = pending_row(str(path), index, summary)
        assert lists.listing(row) == general_listing(row)


def test_and_a_read_rows_list_values_are_the_general_ones(recorded_lines, tmp_path):
    """Recorded results (as recorded, and with findings), requests assembled here, baselines beside them."""
    from inspector.document import listing as lists
    from inspector.document import read_pending, pending_row, rows_from_entry

    counter = core.make_counter("mistral:tekken_240911")
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(recorded_lines[:40]) + b"".join(m + b"\n" for raw in recorded_lines[:4]
                                                              for m in mutations(raw)[:3]))
    index = core.index_jsonl(path)
    rows = [read_pending(pending_row(str(path), index, s), counter) for s in index.rows if s.kind != "error"]
    for fixture in sorted(ROOT.glob("fixtures/*.json")):
        if fixture.name.endswith(".rules.json"):
            continue  # an experiment's rules, not a request or result
        for entry in core.load_entries(fixture):
            rows += rows_from_entry(entry, str(fixture), counter, with_baseline=True)
    assert {r.kind for r in rows} >= {"result", "assembled", "rejected"}
    assert any(r.findings for r in rows) and any(not r.findings for r in rows)
    for row in rows:
        assert lists.listing(row) == general_listing(row), row.where
