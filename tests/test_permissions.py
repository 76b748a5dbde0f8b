"""The request record (seed 001, 3.5) and the permission check (3.3): what the caller may not see is
removed before selection, never counted, rendered or sent, and named by id only; the policy version
is required and recorded; the logging policy's removals are listed and block an exact replay."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import default_counter

from core import assemble, naive_truncate, parse_request
from core.errors import RequestError
from core.experiments import Subject, build_variant
from core.export import openai_body

LABELS = ("hr", "finance", "ops", "legal")


def secret(i: int) -> str:
    return f"ZQX{i}SECRETMARK{i}QXZ"


@st.composite
def guarded_requests(draw):
    n = draw(st.integers(1, 6))
    evidence = []
    for i in range(n):
        access = draw(st.one_of(st.none(), st.lists(st.sampled_from(LABELS), min_size=1, max_size=2, unique=True)))
        item = {"id": f"p{i}", "source": f"docs/src{i}.md", "score": draw(st.floats(0, 1, allow_nan=False)),
                "text": f"{secret(i)} " + "word " * draw(st.integers(1, 30))}
        if access is not None:
            item["access"] = access
        evidence.append(item)
    tools = []
    for i in range(draw(st.integers(0, 3))):
        tool = {"name": f"tool_{i}", "description": f"TOOLDESC{i}MARK does a thing",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
        access = draw(st.one_of(st.none(), st.lists(st.sampled_from(LABELS), min_size=1, max_size=2, unique=True)))
        if access is not None:
            tool["access"] = access
        tools.append(tool)
    data = {"instructions": "Answer from the passages.", "current": "What do the passages say?",
            "history": [{"role": "user", "content": "hello", "id": "t1"}, {"role": "assistant", "content": "hi"}],
            "evidence": evidence, "tools": tools, "context_limit": draw(st.integers(150, 900)),
            "max_new_tokens": 16, "fill_order": draw(st.sampled_from([["history", "evidence"], ["evidence", "history"]]))}
    grants = draw(st.one_of(st.none(), st.lists(st.sampled_from(LABELS), unique=True, max_size=3)))
    if grants is not None:
        data["grants"] = grants
    return data


def _hidden(data):
    grants = set(data.get("grants") or ())
    passages = [p for p in data["evidence"] if "access" in p and not grants & set(p["access"])]
    tools = [t for t in data["tools"] if "access" in t and not grants & set(t["access"])]
    return passages, tools


@given(guarded_requests())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_passage_the_caller_may_not_see_is_never_counted_rendered_or_sent(data):
    counter = default_counter()
    request = parse_request(data)
    hidden_passages, hidden_tools = _hidden(data)
    def unlabelled(item):
        return {k: v for k, v in item.items() if k != "access"}

    visible_only = dict(data, evidence=[unlabelled(p) for p in data["evidence"] if p not in hidden_passages],
                        tools=[unlabelled(t) for t in data["tools"] if t not in hidden_tools])
    visible_only.pop("grants", None)
    try:
        expected = assemble(parse_request(visible_only), counter, reference=True)
    except Exception as exc:  # the required part alone does not fit: the same with or without the hidden items
        with pytest.raises(type(exc)):
            assemble(request, counter)
        return
    fast = assemble(request, counter)
    reference = assemble(request, counter, reference=True)
    assert fast.to_json() == reference.to_json()  # default == reference mode still holds
    baseline = naive_truncate(request, counter)
    for result in (fast, baseline):
        outputs = [result.to_json(), json.dumps(openai_body(result)),
                   counter.render_text(result.messages, result.tools)]
        for item in hidden_passages:
            for out in outputs:
                assert item["text"].split()[0] not in out and item["source"] not in out
        for tool in hidden_tools:
            for out in outputs:
                assert tool["description"] not in out
            assert tool["name"] not in [t.name for t in result.tools]
        refused = [(e.section, e.id) for e in result.trace if e.decision == "not permitted"]
        assert refused == [("tools", t["name"]) for t in hidden_tools] + [("evidence", p["id"]) for p in hidden_passages]
        assert all(e.tokens == 0 for e in result.trace if e.decision == "not permitted")
    # not counted: the request costs exactly what it costs without the hidden items
    assert fast.input_tokens == expected.input_tokens
    assert [(e.section, e.id, e.decision, e.tokens) for e in fast.trace if e.decision != "not permitted"] == \
        [(e.section, e.id, e.decision, e.tokens) for e in expected.trace]


def base(**changes):
    data = {"instructions": "Refunds need approval.", "current": "Can I get a refund?", "context_limit": 600,
            "max_new_tokens": 32,
            "evidence": [{"id": "pub", "source": "faq.md", "score": 0.5, "text": "Refunds take 5 days."},
                         {"id": "hr-only", "source": "hr/salaries.md", "score": 0.9, "text": "SALARY TABLE 2026",
                          "access": ["hr"]}]}
    data.update(changes)
    return data


def test_grants_open_what_they_name_and_nothing_else():
    counter = default_counter()
    denied = assemble(parse_request(base(grants=["support"])), counter)
    assert denied.kept_evidence == ["pub"] and "SALARY" not in denied.to_json()
    entry = next(e for e in denied.trace if e.decision == "not permitted")
    assert (entry.section, entry.id, entry.tokens, entry.source, entry.score) == ("evidence", "hr-only", 0, None, None)
    assert json.loads(denied.to_json())["not_permitted"] == [{"section": "evidence", "id": "hr-only"}]
    allowed = assemble(parse_request(base(grants=["hr"])), counter)
    assert allowed.kept_evidence == ["hr-only", "pub"] and not any(e.decision == "not permitted" for e in allowed.trace)
    assert "not_permitted" not in json.loads(allowed.to_json())


def test_other_variants_never_see_a_refused_item_either():
    counter = default_counter()
    request = parse_request(base(grants=[], context_limit=2000))
    for spec in ("default", "baseline", "plan", "history-first"):
        result = build_variant(spec, Subject(request=request), counter)
        assert "SALARY" not in result.to_json() and "hr/salaries" not in result.to_json(), spec
        assert [e.id for e in result.trace if e.decision == "not permitted"] == ["hr-only"], spec


def test_a_required_policy_version_the_instructions_do_not_carry_is_refused():
    with pytest.raises(RequestError, match="policy_version '2026-12' is required but the instructions carry no version"):
        parse_request(base(policy_version="2026-12"))
    with pytest.raises(RequestError, match="carry version '2026-11'"):
        parse_request(base(policy_version="2026-12", instructions_version="2026-11"))
    result = assemble(parse_request(base(policy_version="2026-12", instructions_version="2026-12")), default_counter())
    recorded = json.loads(result.to_json())
    assert recorded["policy_version"] == "2026-12" and recorded["request"]["policy_version"] == "2026-12"


def test_a_request_without_record_fields_records_exactly_what_it_did_before():
    data = base()
    data["evidence"][1].pop("access")
    recorded = json.loads(assemble(parse_request(data), default_counter()).to_json())
    assert not {"policy_version", "not_permitted", "redacted_fields", "replay_exact"} & set(recorded)
    assert not {"grants", "logging", "policy_version"} & set(recorded["request"])
    assert all("access" not in p for p in recorded["request"]["evidence"])


def test_the_logging_policy_lists_what_it_removed_and_says_replay_is_not_exact(tmp_path, capsys):
    from core.cli import main

    data = base(grants=["hr"], logging={"redact": ["evidence"], "readers": ["oncall"], "retention_days": 30})
    result = assemble(parse_request(data), default_counter())
    assert result.messages[-1].content.count("SALARY TABLE 2026") == 1  # what is sent is whole...
    text = result.to_json()
    recorded = json.loads(text)
    assert "SALARY TABLE 2026" not in text and "Refunds take 5 days." not in text  # ...what is recorded is not
    assert "request.evidence[1].text" in recorded["redacted_fields"]
    assert any(f.startswith("messages[") for f in recorded["redacted_fields"])
    assert recorded["replay_exact"] is False and "cannot reproduce the request exactly" in recorded["replay_note"]
    assert recorded["logging_policy"] == {"redact": ["evidence"], "readers": ["oncall"], "retention_days": 30}
    path = tmp_path / "r.result.json"
    path.write_text(text, encoding="utf-8")
    assert main(["replay", str(path), "--context-limit", "500"]) == 2
    assert "cannot reproduce the request exactly" in capsys.readouterr().err
