"""``context-assembler sweep``: a corpus re-assembled under several settings, on a process pool or Ray."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from core.cli import main
from core.sweep import plan_shards, ray_available, read_shard, run_sweep, settings_from
from core.sweep.aggregate import Totals, merged, percentiles
from support import FIXTURES, ROOT, SHARED

SETTINGS = settings_from("600,1200,recorded", ["both"], None)


def _request(i: int, turns: int = 3) -> dict:
    history = []
    for t in range(turns):
        history += [{"role": "user", "content": f"Question {t} of request {i}: what about the harbour?"},
                    {"role": "assistant", "content": f"Answer {t}: the harbour opens at {6 + t}."}]
    return {"id": f"r{i}", "instructions": "Answer from the passages.", "history": history,
            "current": f"And the ferry for request {i}?",
            "evidence": [{"id": f"p{k}", "text": f"Passage {k}: ferries leave hourly from pier {k}. " * (8 + 4 * k),
                          "score": 1.0 - k / 10} for k in range(4)],
            "context_limit": 2000, "max_new_tokens": 200, "margin": 8}


def _corpus(folder: Path, files: int, per_file: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in range(files):
        lines = []
        for _ in range(per_file):
            lines.append(json.dumps(_request(n)))
            n += 1
        suffix = ".jsonl" if per_file > 1 else ".json"
        (folder / f"shard-{f:03}{suffix}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _same(a: dict, b: dict) -> None:
    a, b = dict(a), dict(b)
    for key in ("engine", "timings"):
        a.pop(key), b.pop(key)
    assert a == b


def _rows(output: Path) -> list[dict]:
    folder = output.with_name(output.name + ".work")
    return [json.loads(line) for rows in sorted(folder.glob("*.rows.jsonl")) for line in rows.open()]


def test_figures_per_setting_for_a_small_corpus(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 4, per_file=3)
    sweep = run_sweep([str(corpus)], SETTINGS, output=tmp_path / "SWEEP.json", workers=1)
    assert sweep["corpus"]["requests"] == 12 and len(sweep["settings"]) == 6
    tight, roomy = sweep["settings"][0], sweep["settings"][4]  # 600 history-first, recorded history-first
    assert tight["setting"]["label"] == "limit 600, fill history,evidence"
    assert tight["requests"] == roomy["requests"] == 12
    # a tighter window drops what the recording kept; the recorded limit loses nothing
    assert tight["requests_losing_kept_items"] == 12 and tight["kept_items_lost"] > 12
    assert roomy["requests_losing_kept_items"] == 0 and roomy["kept_items_lost"] == 0
    assert tight["input_tokens_total"] < roomy["input_tokens_total"]
    assert tight["sections"]["evidence"]["drop_rate"] > roomy["sections"]["evidence"]["drop_rate"]
    assert tight["input_tokens"]["p50"] <= 600 - 200 - 8
    assert sum(b["count"] for b in tight["histograms"]["input_tokens"]) == tight["assembled"]
    # evidence first keeps more evidence than history first, under the same tight limit
    evidence_first = sweep["settings"][1]
    assert evidence_first["sections"]["evidence"]["dropped"] < tight["sections"]["evidence"]["dropped"]
    assert evidence_first["sections"]["history"]["dropped"] > tight["sections"]["history"]["dropped"]
    # each request's row is on disk, once, with every setting
    rows = _rows(tmp_path / "SWEEP.json")
    assert len(rows) == 12 and len({r["ref"] for r in rows}) == 12
    assert all(len(r["settings"]) == 6 for r in rows)


def test_required_content_that_does_not_fit_is_an_overflow(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 2)
    sweep = run_sweep([str(corpus)], settings_from("215", None, None), workers=1)
    assert sweep["settings"][0]["overflows"] == 2 and sweep["settings"][0]["assembled"] == 0


def test_bad_files_and_bad_lines_are_reported_and_skipped(tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus", 3)
    (corpus / "broken.json").write_text('{"id": "x", "instructions": ', encoding="utf-8")
    (corpus / "notes.yaml").write_text("just: a mapping\n", encoding="utf-8")
    (corpus / "mixed.jsonl").write_text(json.dumps(_request(90)) + "\n{not json\n" + json.dumps(_request(91)) + "\n",
                                        encoding="utf-8")
    code = main(["sweep", str(corpus), "--context-limit", "900", "-o", str(tmp_path / "SWEEP.json")])
    out = capsys.readouterr().out
    assert code == 0
    sweep = json.loads((tmp_path / "SWEEP.json").read_text())
    assert sweep["corpus"]["requests"] == 5  # 3 files + the two good lines
    assert sorted(Path(b["path"]).name for b in sweep["bad_files"]) == ["broken.json", "notes.yaml"]
    assert any("malformed JSON" in b["problem"] for b in sweep["bad_files"])
    assert sweep["bad_records"] == 1 and sweep["bad_record_samples"][0]["ref"].endswith("mixed.jsonl:2")
    assert "skipped:" in out and "broken.json" in out


def test_a_large_jsonl_is_split_into_ranges_that_own_each_line_once(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 1, per_file=40)
    shards = plan_shards([str(corpus)], shard_bytes=2000)
    assert len(shards) > 5 and all(s.split for s in shards)
    refs = [r.ref for s in shards for r in read_shard(s, lambda *a: pytest.fail(f"bad record {a}"))]
    assert refs == [f"{corpus / 'shard-000.jsonl'}:{n}" for n in range(1, 41)]


def test_totals_merge_to_the_same_figures_in_any_order(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 6)
    run_sweep([str(corpus)], SETTINGS, output=tmp_path / "SWEEP.json", workers=1)
    states = [json.loads(p.read_text()) for p in sorted((tmp_path / "SWEEP.json.work").glob("*[0-9a-f].json"))]
    assert len(states) == 6
    forward, backward = merged(states, 6), merged(reversed(states), 6)
    assert forward.state() == backward.state()
    assert isinstance(forward, Totals) and forward.requests == 6


def test_percentiles_are_nearest_rank():
    values = Counter({10: 1, 20: 1, 30: 1, 40: 1, 100: 1})
    assert percentiles(values) == {"min": 10, "p50": 30, "p90": 100, "p95": 100, "p99": 100, "max": 100}
    assert percentiles(Counter())["p50"] is None


def test_bad_options_exit_2(tmp_path, capsys):
    corpus = _corpus(tmp_path / "corpus", 1)
    assert main(["sweep", str(corpus), "--context-limit", "abc"]) == 2
    assert main(["sweep", str(tmp_path / "missing")]) == 2
    assert main(["sweep", str(corpus), "--fill-order", "history"]) == 2
    assert main(["sweep", str(corpus), "--resume"]) == 2
    assert main(["sweep", str(corpus), "-o", str(tmp_path / "S.json")]) == 0
    assert main(["sweep", str(corpus), "-o", str(tmp_path / "S.json")]) == 2  # the work folder is there: ask
    err = capsys.readouterr().err
    assert "--resume" in err and "Traceback" not in err


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "core.cli", "sweep", *args]


def test_a_killed_run_resumes_without_counting_any_request_twice(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 40)
    output = tmp_path / "SWEEP.json"
    work = tmp_path / "SWEEP.json.work"
    args = [str(corpus), "--context-limit", "600,recorded", "--workers", "2", "-o", str(output)]
    process = subprocess.Popen(_cli(*args), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if len(list(work.glob("*[0-9a-f].json"))) >= 3:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, mid-shard
    process.wait()
    done_before = len(list(work.glob("*[0-9a-f].json")))
    assert done_before >= 3 and not output.exists()
    (work / "deadbeef.rows.jsonl.999.tmp").write_text("half a shard\n")  # what a cut-off write leaves
    resumed = subprocess.run(_cli(*args, "--resume"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    sweep = json.loads(output.read_text())
    assert sweep["timings"]["shards_resumed"] == done_before or done_before == 40
    assert sweep["corpus"]["requests"] == 40
    assert all(s["requests"] == 40 for s in sweep["settings"])
    refs = [r["ref"] for r in _rows(output)]
    assert sorted(refs) == sorted(set(refs)) and len(refs) == 40
    assert not list(work.glob("*.tmp"))
    clean = run_sweep([str(corpus)], settings_from("600,recorded", None, None), workers=1)
    _same(dict(sweep, work_folder=None), clean)


def test_ctrl_c_stops_and_says_how_to_resume(tmp_path):
    corpus = _corpus(tmp_path / "corpus", 40)
    output = tmp_path / "SWEEP.json"
    process = subprocess.Popen(_cli(str(corpus), "--workers", "2", "-o", str(output)), cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    work = tmp_path / "SWEEP.json.work"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not list(work.glob("*[0-9a-f].json")):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert process.returncode == 130 and "--resume" in err and "Traceback" not in err


@pytest.mark.slow
def test_ray_gives_the_same_aggregates_as_local(tmp_path):
    if not ray_available():
        pytest.skip("Ray is not installed (an optional extra: pip install 'context-inspector[ray]')")
    corpus = _corpus(tmp_path / "corpus", 6, per_file=2)
    shutil.copy(FIXTURES / "recorded.results.jsonl", corpus / "recorded.results.jsonl")
    (corpus / "broken.json").write_text("{", encoding="utf-8")
    local = run_sweep([str(corpus)], SETTINGS, output=tmp_path / "local" / "SWEEP.json", workers=2)
    on_ray = run_sweep([str(corpus)], SETTINGS, engine="ray", output=tmp_path / "ray" / "SWEEP.json", workers=2)
    assert local["engine"] == "local" and on_ray["engine"] == "ray"
    assert on_ray["corpus"]["requests"] == 12 + 17 and len(on_ray["bad_files"]) == 1
    _same(local, on_ray)


@pytest.mark.realworld
def test_a_sweep_over_the_fixtures_and_the_real_world_files(tmp_path, capsys):
    folders = [p for p in sorted(SHARED.glob("realworld*")) if p.is_dir()]
    if not folders:
        pytest.skip(f"no real-world folders in {SHARED}")
    code = main(["sweep", str(FIXTURES), *map(str, folders), "--context-limit", "1024,recorded",
                 "-o", str(tmp_path / "SWEEP.json")])
    out = capsys.readouterr().out
    print(out)
    assert code == 0
    sweep = json.loads((tmp_path / "SWEEP.json").read_text())
    imported = [r for r in _rows(tmp_path / "SWEEP.json") if "/realworld" in r["ref"]]
    assert imported, "no model call of the real-world files was swept"
    assert sweep["corpus"]["requests"] == len(_rows(tmp_path / "SWEEP.json"))
    recorded = sweep["settings"][1]
    assert recorded["assembled"] > 0 and recorded["requests"] == sweep["corpus"]["requests"]
    assert "requests in" in out.splitlines()[0]


def test_a_plan_setting_and_the_input_cost_of_priced_models(tmp_path):
    from core.counters.models import input_cost_per_token

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    body = {"model": "gpt-4o-mini", "max_tokens": 64, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is the ferry pier?"},
        {"role": "assistant", "content": "At the end of the quay."}, {"role": "user", "content": "And the tickets?"}]}
    (corpus / "body.json").write_text(json.dumps(body), encoding="utf-8")
    shutil.copy(FIXTURES / "trip_plan_pin_and_fold.plan.json", corpus)
    sweep = run_sweep([str(corpus)], settings_from("recorded", None, str(FIXTURES / "trip_plan_drop_oldest.plan.json")),
                      counter="auto", workers=1)
    entry = sweep["settings"][0]
    assert entry["setting"]["plan"] == "trip_plan_drop_oldest.plan.json"
    assert entry["requests"] == 2 and entry["errors"] == 1  # the body's sections are not the plan's
    assert "does not declare" in entry["error_samples"][0][1]
    plain = run_sweep([str(corpus / "body.json")], settings_from("recorded", None, None), counter="auto", workers=1)
    figures = plain["settings"][0]
    price = input_cost_per_token("gpt-4o-mini")
    assert price and figures["priced_input_tokens"] == figures["input_tokens_total"] > 0
    assert figures["input_cost_usd"] == round(price * figures["input_tokens_total"], 6)
