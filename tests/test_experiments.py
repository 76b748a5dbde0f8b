"""Experiments against servers started here on 127.0.0.1: every answer's provenance, errors as one
clear line (exit 2), a key never written, variants and the position test."""
from __future__ import annotations

import json
import socket

import pytest
from model_server import FakeModelServer
from support import FIXTURES

from core import load_request, make_counter
from core.cli import main
from core.experiments import (Subject, VariantError, build_variant, grade_file, load_answers, placed, position_of,
                              sha256_hex)

DEMO = str(FIXTURES / "demo.request.json")
RULES = {"must_cite_one_of": ["rb-disk-full"], "must_contain": ["logrotate"]}


@pytest.fixture
def rules_file(tmp_path):
    path = tmp_path / "demo.rules.json"
    path.write_text(json.dumps(RULES), encoding="utf-8")
    return str(path)


def experiment(capsys, server, out, *extra):
    code = main(["experiment", DEMO, "--endpoint", server.url, "--model", server.model, "-o", str(out), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_answer_records_its_provenance_and_the_exact_bytes_sent(tmp_path, capsys, rules_file):
    out = tmp_path / "demo.answers.jsonl"
    with FakeModelServer() as server:
        code, _, err = experiment(capsys, server, out, "--seeds", "2", "--rules", rules_file,
                                  "--variants", "default,history-first,baseline,plan,limit=900",
                                  "--temperature", "0.2", "--model-sha256", "AB" * 32)
        sent = server.chat_bodies()
    assert code == 0, err
    assert "10 answers (5 variants x 2 seeds)" in err
    recorded = load_answers(out)
    header = recorded.header
    assert header["endpoint"] == {"url": f"{server.url}/v1/chat/completions", "api": "openai",
                                  "timeout_seconds": 120.0}
    assert header["model"]["listed"] is True and header["model"]["id"] == "fake-model"
    assert header["model_declared"] == {"sha256": "ab" * 32}
    assert header["rules"]["must_cite_one_of"] == ["rb-disk-full"]
    assert header["counter"]["name"] == "mistral:tekken_240911"
    assert "not a measure of answer quality" in header["note"]
    assert [(a["variant"], a["seed"]) for a in recorded.answers] == [
        (v, s) for v in ("default", "history-first", "baseline", "plan", "limit=900") for s in (1, 2)]
    assert [a["request_body"].encode("utf-8") for a in recorded.answers] == sent  # exactly what went out
    for a in recorded.answers:
        body = a["request_body"].encode("utf-8")
        assert a["request_sha256"] == sha256_hex(body)
        assert json.loads(body)["seed"] == a["seed"] == a["sampling"]["seed"]
        assert a["sampling"] == {"temperature": 0.2, "top_p": 0.95, "max_tokens": 256, "seed": a["seed"]}
        assert a["model"] == {"requested": "fake-model", "reported": "fake-model"}
        result = recorded.results[a["variant"]]
        assert a["prompt_tokens"] == {"ours": result.input_tokens, "counter": "mistral:tekken_240911", "server": 321}
        assert a["latency_seconds"] >= 0 and a["finish_reason"] == "stop"
        assert json.loads(a["response_raw"])["system_fingerprint"] == "fp-test"
        assert a["reply_extra"]["system_fingerprint"] == "fp-test"
    # each variant's request is the one its assembly made: same messages as the body
    default = recorded.results["default"]
    body = json.loads(recorded.answer("default", 1)["request_body"])
    assert [m["content"] for m in body["messages"]] == [m.content for m in default.messages]
    assert recorded.results["history-first"].fill_order == ["history", "evidence"]
    assert recorded.results["baseline"].strategy == "naive_truncate"
    assert recorded.results["limit=900"].context_limit == 900
    assert grade_file(recorded).by_variant()[0].seeds == 2


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_endpoint_is_one_clear_line_and_exit_2(tmp_path, capsys):
    out = tmp_path / "a.answers.jsonl"
    code = main(["experiment", DEMO, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--model", "m",
                 "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "connection refused" in err and "127.0.0.1" in err and "Traceback" not in err


def test_a_timeout_is_one_clear_line_and_exit_2(tmp_path, capsys):
    with FakeModelServer(delay=5.0) as server:
        code, _, err = experiment(capsys, server, tmp_path / "a.answers.jsonl", "--timeout", "0.3", "--seeds", "1")
    assert code == 2
    assert "no answer within 0.3 s (timeout)" in err and err.strip().count("\n") == 0


def test_a_request_the_server_refuses_is_recorded_as_that_runs_answer_and_grades_incomplete(tmp_path, capsys,
                                                                                           rules_file):
    out = tmp_path / "a.answers.jsonl"
    with FakeModelServer(status=500) as server:  # e.g. a chat template that raises on this conversation
        code, _, err = experiment(capsys, server, out, "--seeds", "1", "--variants", "default", "--rules", rules_file)
    assert code == 0, err
    a = load_answers(out).answers[0]
    assert "HTTP 500" in a["error"] and "the model is unavailable" in a["response_raw"] and a["answer"] is None
    assert grade_file(load_answers(out)).grades[0][1].verdict == "incomplete"


def test_a_wrong_route_or_key_stops_the_experiment(tmp_path, capsys):
    with FakeModelServer(status=401) as server:
        code, _, err = experiment(capsys, server, tmp_path / "a.answers.jsonl", "--seeds", "1")
    assert code == 2 and "HTTP 401" in err and err.strip().count("\n") == 0


def test_a_key_comes_from_the_environment_and_is_never_written(tmp_path, capsys, monkeypatch):
    secret = "sk-test-" + "7f3a" * 8
    monkeypatch.setenv("CI_TEST_MODEL_KEY", secret)
    out = tmp_path / "k.answers.jsonl"
    with FakeModelServer(echo_auth=True) as server:  # a server that echoes the header back
        code, stdout, stderr = experiment(capsys, server, out, "--api-key-env", "CI_TEST_MODEL_KEY", "--seeds", "2")
        headers = [r["headers"] for r in server.received]
    assert code == 0, stderr
    assert all(h.get("Authorization") == f"Bearer {secret}" for h in headers)  # it was used...
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for haystack in (written, stdout.encode(), stderr.encode()):  # ...and appears in no output byte
        assert secret.encode() not in haystack
        assert secret[8:].encode() not in haystack
    assert b"[api key removed]" in written  # the echo was recorded with the key taken out
    assert load_answers(out).header["endpoint"]["api_key_env"] == "CI_TEST_MODEL_KEY"


def test_a_missing_key_variable_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    code = main(["experiment", DEMO, "--endpoint", "http://127.0.0.1:1", "--model", "m",
                 "--api-key-env", "NO_SUCH_KEY_VAR", "-o", str(tmp_path / "x.jsonl")])
    assert code == 2 and "NO_SUCH_KEY_VAR" in capsys.readouterr().err


def test_ollama_native_api_body_and_digest(tmp_path, capsys):
    out = tmp_path / "o.answers.jsonl"
    with FakeModelServer(model="gemma3:270m") as server:
        code, _, err = experiment(capsys, server, out, "--api", "ollama", "--seeds", "1", "--variants", "default")
        paths = [r["path"] for r in server.received]
    assert code == 0, err
    assert paths == ["/api/tags", "/api/chat"]
    recorded = load_answers(out)
    assert recorded.header["model"]["digest"] == "d" * 64
    a = recorded.answers[0]
    body = json.loads(a["request_body"])
    assert body["options"] == {"temperature": 0.7, "top_p": 0.95, "num_predict": 256, "seed": 1}
    calls = [m for m in body["messages"] if m.get("tool_calls")]
    assert calls and isinstance(calls[0]["tool_calls"][0]["function"]["arguments"], dict)
    assert a["prompt_tokens"]["server"] == 321 and a["completion_tokens"] == 12


def test_an_existing_output_is_never_overwritten_unless_asked(tmp_path, capsys):
    out = tmp_path / "mine.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    with FakeModelServer() as server:
        code, _, err = experiment(capsys, server, out, "--seeds", "1")
        assert code == 2 and "exists" in err and out.read_text() == "keep me\n"
        code, _, err = experiment(capsys, server, out, "--seeds", "1", "--variants", "default", "--overwrite")
    assert code == 0 and load_answers(out).answers


def test_a_bad_variant_is_refused_before_the_model_is_contacted(tmp_path, capsys):
    with FakeModelServer() as server:
        code, _, err = experiment(capsys, server, tmp_path / "x.jsonl", "--variants", "default,shuffled")
        assert server.received == []
    assert code == 2 and "unknown variant 'shuffled'" in err


# ---- the position test


def test_placed_moves_only_the_relevant_passage():
    request = load_request(DEMO)
    others = [p for p in ("rb-disk-full", "rb-untrusted", "rb-cert-expiry", "rb-oncall", "rb-latency", "rb-backups")
              if p != "rb-backups"]
    for k in range(1, 7):
        moved = placed(request, "rb-backups", k)
        order = [moved.evidence[i].id for i in sorted(range(6), key=lambda i: -moved.evidence[i].score)]
        assert order.index("rb-backups") == k - 1
        assert [p for p in order if p != "rb-backups"] == others
        assert [(p.id, p.text, p.source) for p in moved.evidence] == [(p.id, p.text, p.source) for p in request.evidence]
    with pytest.raises(VariantError, match="out of range"):
        placed(request, "rb-backups", 7)
    with pytest.raises(VariantError, match="not among"):
        placed(request, "nope", 1)


def test_position_variants_send_every_passage_in_the_asked_order_or_are_refused():
    request = load_request(DEMO)
    counter = make_counter()
    with pytest.raises(VariantError, match="drops"):
        build_variant("position=1", Subject(request=request, relevant="rb-disk-full"), counter)
    roomy = request.model_copy(update={"context_limit": 4000})
    for k in (1, 3, 6):
        result = build_variant(f"position={k}", Subject(request=roomy, relevant="rb-disk-full"), counter)
        assert result.kept_evidence.index("rb-disk-full") == k - 1 and not result.dropped_evidence
        user = next(m.content for m in result.messages if m.role == "user" and "<evidence" in (m.content or ""))
        blocks = [chunk.split('"')[0] for chunk in user.split('<evidence id="')[1:]]
        assert blocks.index("rb-disk-full") == k - 1
    assert position_of("position=12") == 12 and position_of("default") is None


def test_the_position_curve_from_a_live_run(tmp_path, capsys, rules_file):
    def answer(body):  # a model that finds the passage only when it comes first
        user = next(m["content"] for m in body["messages"] if m["role"] == "user" and "<evidence" in (m["content"] or ""))
        first = user.split('<evidence id="')[1].split('"')[0] if '<evidence id="' in user else ""
        return "logrotate -f (rb-disk-full)" if first == "rb-disk-full" else "I am not sure."

    out = tmp_path / "p.answers.jsonl"
    with FakeModelServer(answer) as server:
        code, _, err = experiment(capsys, server, out, "--variants", "positions", "--seeds", "2",
                                  "--context-limit", "4000", "--rules", rules_file)
    assert code == 0, err
    curve = grade_file(load_answers(out)).position_curve()
    assert [(p.position, p.n, p.passes) for p in curve] == [(1, 2, 2)] + [(k, 2, 0) for k in range(2, 7)]
    assert main(["grade", str(out)]) == 0
    text = capsys.readouterr().out
    assert "position  runs  pass rate  95% interval (Wilson)" in text
    assert "       1     2       1.00  [0.34, 1.00]" in text
