"""Real multi-call trace exports (../shared/realworld*, read where they are) opened as sessions, and
the session command. Skipped when ../shared is absent."""
from __future__ import annotations

import json

import pytest
from support import FIXTURES, SHARED, default_counter

from core.cli import main
from core.formats import import_file
from core.sessions import APPENDED, COMPACTED, open_session

EXPORTS = SHARED / "realworld" / "platform-exports"
EXPORTS2 = SHARED / "realworld2" / "platform-exports"

pytestmark = pytest.mark.realworld


def shared(path):
    if not path.is_file():
        pytest.skip(f"the shared real-world file {path.name} is absent ({path.parent} not found)")
    return path


def generation_starts(path) -> list[tuple[str, str]]:
    """(start time, id) of every generation of a Langfuse export, as the file records them."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return sorted((o["startTime"], o["id"]) for o in raw["observations"] if o["type"] == "GENERATION")


def test_openai_agents_trace_two_calls_in_time_order_the_second_extends_the_first():
    path = shared(EXPORTS / "langfuse-openai-agents-2025-09-30.trace.json")
    session = open_session(path, default_counter())
    assert [c.request.recorded.span_id for c in session.calls] == ["98870087af69bf06", "90d94774e8e3724d"]
    assert [id for _, id in generation_starts(path)] == ["98870087af69bf06", "90d94774e8e3724d"]  # file order differs
    first, second = session.calls
    assert second.previous == 0 and second.conversation == first.conversation
    diff = session.diffs[1]
    # the tool call and its result are appended after the user question; mistral keeps tools and system
    # text at that question, so the whole first call is the second's prefix
    assert diff.prefix_messages == 2 and diff.prefix_tokens == first.input_tokens
    assert [(c.kind, c.after) for c in diff.changes] == [(APPENDED, [2, 3])]
    assert session.removal_calls == []
    assert [c.recorded_cached_tokens for c in session.calls] == [0, 0]  # usageDetails prompt_details.cache_read
    assert [s.name for s in second.span_path] == ["Agent workflow", "Hello world"]
    assert second.duration == pytest.approx(1.15)
    assert session.peak is second


def test_microsoft_agent_trace_second_call_records_only_its_new_message():
    path = shared(EXPORTS2 / "langfuse-microsoft-agent-2025-12-17.trace.json")
    session = open_session(path, default_counter())
    assert [c.request.recorded.span_id for c in session.calls] == [id for _, id in generation_starts(path)]
    first, second = session.calls
    # the framework sends only the tool result with a conversation id (server-side history): no shared
    # leading message, so the second call starts a conversation of its own
    assert second.request.recorded.conversation_id and first.request.recorded.conversation_id is None
    assert second.previous is None and second.conversation != first.conversation
    assert [m.role for m in second.request.messages] == ["tool"]
    assert session.removal_calls == []


def test_langgraph_trace_calls_follow_start_times():
    path = shared(EXPORTS2 / "langfuse-langgraph-js-2025-10-30.trace.json")
    imported = import_file(path)
    session = open_session(path, default_counter())
    read = {r.recorded.span_id for r in imported.requests}
    assert [c.request.recorded.span_id for c in session.calls] == [id for _, id in generation_starts(path) if id in read]
    assert len(session.spans) == 20 and sum(s.model_call for s in session.spans) == 2
    assert [s.name for s in session.calls[0].span_path] == ["LangGraph", "model_request", "RunnableSequence"]


def test_vercel_trace_one_call_under_its_wrapper():
    path = shared(EXPORTS / "langfuse-vercel-aisdk-2025-11-17.trace.json")
    session = open_session(path, default_counter())
    (call,) = session.calls
    assert call.request.recorded.span_id == "91a17a2274bfd23f"
    assert [s.name for s in call.span_path] == ["ai.generateText"] and session.diffs == [None]


def test_otlp_fixture_traces_split_into_conversations():
    session = open_session(FIXTURES / "formats" / "otlp_traces.json", default_counter())
    assert len(session.calls) == 4
    # two calls of one trace with different system prompts are two conversations, as are other traces
    assert [c.previous for c in session.calls] == [None] * 4
    spans = open_session(FIXTURES / "formats" / "openllmetry_spans.json", default_counter())
    assert spans.calls[1].previous == 0 and [c.kind for c in spans.diffs[1].changes][0] == COMPACTED


def test_session_command_table_and_json(capsys):
    path = FIXTURES / "sessions" / "agent_compaction.langfuse.json"
    assert main(["session", str(path), "--context-window", "16384"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == 24 and rows[14].rstrip().endswith("C") and rows[19].rstrip().endswith("W")
    assert "peak: call 14" in out and "calls where something was removed or rewritten: 15, 20" in out
    assert main(["session", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["call"] for c in data["calls"]] == list(range(1, 25)) and data["removal_calls"] == [15, 20]
    assert data["calls"][14]["diff"]["changes"][0]["kind"] == COMPACTED
    assert data["calls"][1]["cached_prefix_tokens"] == data["calls"][0]["input_tokens"]
    assert len(data["spans"]) == 71


def test_session_command_bad_input(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"trace": {"id": "x"}, "observations": [', encoding="utf-8")
    assert main(["session", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "broken.json" in err and len(err.strip().splitlines()) == 1
    assert main(["session", str(broken), "--context-window", "0"]) == 2
