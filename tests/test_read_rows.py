"""What a worker process sends the window for a large JSONL's rows (inspector/document/reading.py ``read_rows``)
is exactly what the reference path gives each line: ``json``, the input layer and the core's models read it,
and ``core.audit`` audits the validated result with mistral-common's own encode and decode (no one-pass
renderer, no span memo, no shared render). A recorded result goes back as its findings, its list values and
its line's bytes; the result the window validates again from them when it is shown is the reference's.
Checked on the inspector benchmark's recorded results, this project's fixtures, results counted from the
importers' fixtures and the real files in ../shared/realworld*, each as recorded and tampered with, and each
line twice (the worker's counter remembers the texts it counted: the second reading must find the same)."""
from __future__ import annotations

import json
import pickle

import pytest
from support import ROOT, imported_files

import core
from benchmarks.bench_inspector import write_results
from core.inputs import decode_json
from test_audit_fast_path import slow_counter, tampered

SPEC = "mistral:tekken_240911"


def _line(result: core.AssemblyResult) -> bytes:
    return json.dumps(json.loads(result.to_json()), ensure_ascii=False).encode("utf-8") + b"\n"


def imported_results(counter: core.TokenCounter, limit: int = 80) -> list[core.AssemblyResult]:
    """Results counted from the importers' fixtures and ../shared's real files (the requests the counter counts)."""
    out: list[core.AssemblyResult] = []
    for path in imported_files():
        try:
            requests = core.import_file(path).requests
        except Exception:  # noqa: BLE001 - a file the importers refuse
            continue
        for request in requests[:3]:
            try:
                out.append(core.count_imported(request, counter))
            except core.ContextInspectorError:  # the template refuses it: nothing recorded to read
                continue
            if len(out) >= limit:
                return out
    return out


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory):
    folder = tmp_path_factory.mktemp("read-rows")
    bench = folder / "bench.results.jsonl"
    counter = core.make_counter(SPEC)
    write_results(bench, 120, counter)
    results = [core.parse_result(json.loads(line)) for line in bench.read_text(encoding="utf-8").splitlines()]
    results += [core.load_result(p) for p in sorted(ROOT.glob("fixtures/*.result.json"))
                + sorted(ROOT.glob("fixtures/*.baseline.json"))]
    with open(ROOT / "fixtures" / "recorded.results.jsonl", "rb") as handle:
        recorded = [line for line in handle if line.strip()]
    imported = imported_results(counter)
    lines = [_line(r) for r in results + imported] + recorded
    lines += [_line(tampered(r, n)) for n, r in enumerate(results[:60] + imported[:30])]
    path = folder / "mixed.results.jsonl"
    path.write_bytes(b"".join(lines + lines))  # each line twice
    return path, len(imported)


def reference(path, summary: core.RowSummary, raw: bytes, counter: core.TokenCounter):
    """(kind, result, findings) the reference path gives the line."""
    try:
        entry = core.entry_from(decode_json(raw.decode("utf-8")), summary.index, summary.line, str(path))
    except (UnicodeDecodeError, ValueError, core.ContextInspectorError):
        return "invalid", None, []
    if entry.kind != "result":
        return entry.kind, None, None
    return "result", entry.result, core.audit(entry.result, counter)


def test_the_rows_a_worker_sends_are_the_reference_paths(jsonl):
    from inspector.document import listing as lists
    from inspector.document.reading import read_rows, start_worker
    from test_jsonl_fast import general_listing

    path, imported = jsonl
    assert imported >= 10
    start_worker(SPEC)  # this process as the worker: a fresh counter, its caches filled as it reads
    slow = slow_counter()
    index = core.index_jsonl(path)
    data = path.read_bytes()
    rules: set[str] = set()
    slim = 0
    for at in range(0, len(index.rows), 20):
        chunk = index.rows[at:at + 20]
        rows = pickle.loads(read_rows(str(path), chunk, False))
        for summary, row in zip(chunk, rows):
            raw = data[summary.offset:summary.offset + summary.length]
            kind, result, findings = reference(path, summary, raw, slow)
            if kind != "result":
                continue
            where = f"line {summary.line}"
            assert row.kind == "result", where
            slim += "_line" in row.__dict__
            assert row.findings == findings, where
            listed = lists.listing(row)
            assert row.result == result and row.request == result.request, where  # validated again from the bytes
            assert "_line" not in row.__dict__
            assert listed == general_listing(row), where
            rules.update(f.rule for f in findings)
    assert slim > 300  # recorded results go back as their bytes
    assert {"count-mismatch", "unescaped-boundary", "over-budget", "evidence-in-system"} <= rules, rules


def test_a_read_rows_result_is_validated_once_and_kept(jsonl):
    from inspector.document.reading import read_rows, start_worker

    path, _ = jsonl
    start_worker(SPEC)
    index = core.index_jsonl(path)
    (row,) = pickle.loads(read_rows(str(path), index.rows[:1], False))
    assert row.__dict__["_result"] is not None and "_line" in row.__dict__
    first = row.result
    assert row.result is first and row.request is first.request and "_line" not in row.__dict__
    assert pickle.loads(pickle.dumps(row)).result == first
