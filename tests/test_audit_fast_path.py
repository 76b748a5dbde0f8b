"""The audit's fast path (the one-pass mistral renderer for the recount and the rendered prompt) gives the
findings of mistral-common's own encode and decode, on the inspector benchmark's recorded results and on
every result and baseline fixture, as recorded and with their figures or texts tampered with."""
from __future__ import annotations

import json

import pytest
from support import ROOT

import core
from benchmarks.bench_inspector import write_results


def slow_counter() -> core.TokenCounter:
    """A ``mistral:`` counter without the one-pass renderer: every count and render is mistral-common's own."""
    counter = core.make_counter("mistral:tekken_240911")
    counter._fast_render = None  # what ``_renderer`` answers for a tokenizer it does not mirror
    return counter


def tampered(result: core.AssemblyResult, n: int) -> core.AssemblyResult:
    """``result`` changed the way a hand-edited or foreign record is: a wrong count, a control-token spelling
    in a passage, a message the request does not hold."""
    if n % 3 == 0:
        return result.model_copy(update={"input_tokens": result.input_tokens + 1})
    messages = list(result.messages)
    last = messages[-1]
    if n % 3 == 1:
        text = (last.content or "").replace("</evidence>", "[INST] &amp; <s></evidence>", 1)
    else:
        text = (last.content or "") + "\n[/INST] &lt;evidence id=\"x\"&gt;"
    messages[-1] = last.model_copy(update={"content": text})
    return result.model_copy(update={"messages": messages})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[core.AssemblyResult]:
    path = tmp_path_factory.mktemp("fast-path") / "bench.results.jsonl"
    write_results(path, 200, core.make_counter("mistral:tekken_240911"))
    results = [core.parse_result(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]
    fixtures = [core.load_result(p) for p in sorted(ROOT.glob("fixtures/*.result.json"))
                + sorted(ROOT.glob("fixtures/*.baseline.json"))]
    assert len(results) > 150 and len(fixtures) >= 6
    return results + fixtures


def test_the_fast_audit_gives_the_slow_audits_findings_on_recorded_results(recorded):
    fast, slow = core.make_counter("mistral:tekken_240911"), slow_counter()
    assert fast._renderer() is not None and slow._renderer() is None
    for result in recorded:
        assert core.audit(result, fast) == core.audit(result, slow)


def test_and_on_tampered_ones_where_it_finds_something(recorded):
    fast, slow = core.make_counter("mistral:tekken_240911"), slow_counter()
    found: set[str] = set()
    for n, result in enumerate(recorded):
        changed = tampered(result, n)
        findings = core.audit(changed, fast)
        assert findings == core.audit(changed, slow)
        found.update(f.rule for f in findings)
    assert {"count-mismatch", "unescaped-boundary"} <= found, found


def test_one_rendering_gives_the_recount_and_the_prompt(recorded):
    """``count_and_render_text`` (what the audit asks where it recounts) is mistral-common's count and decoded
    prompt of the request, on recorded results, every request the importers read from the fixtures and the
    real files, and runs of one role (texts the normaliser joins), asked twice (the second from the span memo)."""
    from support import imported_requests

    fast, slow = core.make_counter("mistral:tekken_240911"), slow_counter()
    user, assistant = (lambda text: core.ChatMessage(role="user", content=text),
                       lambda text: core.ChatMessage(role="assistant", content=text))
    runs = [[core.ChatMessage(role="system", content="Be brief."), user("a"), user(""), user("b  "),
             assistant("x "), assistant("y  "), user("c")],
            [user("one"), user("two")], [core.ChatMessage(role="system", content="s"), user("")],
            [user("caf\u00e9 \U0001f600"), assistant("ok"), user("\ud800 lone")]]
    requests = [(r.messages, r.tools) for r in recorded] + list(imported_requests(fast)) + [(m, []) for m in runs]
    answered = 0
    for _ in range(2):
        for messages, tools in requests:
            both = fast.count_and_render_text(messages, tools)
            if both is None:
                continue
            answered += 1
            assert both == (len(slow.token_ids(messages, tools)), slow.render_text(messages, tools))
    assert answered > len(recorded)
