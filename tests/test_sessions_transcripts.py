"""Agent transcripts (../shared/realworld2/agent-transcripts, read where they are) opened as sessions.
Skipped when the shared files are absent or when the transcript importers are not part of this tree."""
from __future__ import annotations

import pytest
from support import SHARED, default_counter

from core.formats import FORMATS
from core.sessions import SessionTokens, open_session

TRANSCRIPTS = SHARED / "realworld2" / "agent-transcripts"

pytestmark = pytest.mark.realworld


def transcript(name: str, fmt: str):
    if fmt not in FORMATS:
        pytest.skip(f"the {fmt} importer is not in this tree")
    path = TRANSCRIPTS / name
    if not path.is_file():
        pytest.skip(f"the shared real-world file {name} is absent ({TRANSCRIPTS} not found)")
    return path


class Unmemoised:
    """The counter itself, without the way to the session's memo of text pieces."""

    def __init__(self, counter) -> None:
        self._counter = counter

    def __getattr__(self, name):
        if name == "_counting_path":
            raise AttributeError(name)
        return getattr(self._counter, name)


def assert_prefixes_are_the_counters(session) -> None:
    """Every call's total and every prefix equal what the counter's own ids give (adapted as the session
    adapts what the template refuses), computed apart."""
    plain = SessionTokens(Unmemoised(default_counter()))
    counted = [plain.call_ids(list(c.request.messages), list(c.request.tools)) if c.input_tokens is not None
               else None for c in session.calls]
    ids = [c[0] if c is not None else None for c in counted]
    for call, diff, mine, each in zip(session.calls, session.diffs, ids, counted):
        if mine is None:
            continue
        assert call.input_tokens == len(mine) + each[2]
        theirs = ids[diff.earlier] if diff is not None else None
        if theirs is not None:
            shared = next((i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b), min(len(theirs), len(mine)))
            assert diff.prefix_tokens == shared


def test_codex_sample_session_seven_calls_each_extending_the_last():
    session = open_session(transcript("codex-transcripts-sample_session.jsonl", "codex-rollout"), default_counter())
    assert [c.label.split(" (")[0] for c in session.calls] == [f"turn {n}" for n in range(1, 8)]
    assert [c.previous for c in session.calls] == [None, 0, 1, 2, 3, 4, 5]
    assert session.removal_calls == []
    assert all(d.appended_tokens > 0 and d.removed_tokens == 0 for d in session.diffs[1:])
    assert_prefixes_are_the_counters(session)


def test_claude_code_viewer_transcript_170_calls_in_time_order():
    session = open_session(transcript("claude-code-viewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
                                      "claude-code-transcript"), default_counter())
    assert len(session.calls) == 170
    # the main chain is one conversation; each sub-agent (sidechain) is one of its own
    main = [c for c in session.calls if "sidechain" not in c.label]
    assert {c.conversation for c in main} == {0} and len(main) == 9
    assert len({c.conversation for c in session.calls}) == 6
    assert session.removal_calls == []
    starts = [c.start_time for c in session.calls]
    assert all(s is not None for s in starts) and starts == sorted(starts)
    assert session.peak.input_tokens == max(c.input_tokens for c in session.calls)
    assert all(c.recorded_cached_tokens is not None for c in session.calls)
    assert_prefixes_are_the_counters(session)


def test_claude_code_fixture_compaction_is_marked_and_the_sidechain_is_its_own():
    from support import FIXTURES

    if "claude-code-transcript" not in FORMATS:
        pytest.skip("the claude-code-transcript importer is not in this tree")
    session = open_session(FIXTURES / "formats" / "claude_code_session.jsonl", default_counter())
    assert [c.conversation for c in session.calls] == [0, 0, 1, 0, 0]
    assert [c.previous for c in session.calls] == [None, 0, None, 1, 3]
    assert session.removal_calls == [4]
    (compaction,) = session.diffs[4].changes
    assert compaction.kind == "compacted" and compaction.tokens_before > compaction.tokens_after
    assert_prefixes_are_the_counters(session)


def test_codex_small_rollout_compactions_are_removals():
    session = open_session(transcript("agent-sessions-stage0-codex-small.jsonl", "codex-rollout"), default_counter())
    assert len(session.calls) == 8
    assert session.removal_calls == [5, 6, 7]  # the rollout's compactions (lines 26, 47, 69, 81)
    assert_prefixes_are_the_counters(session)


def test_session_totals_equal_count_imported():
    from core.formats import count_imported

    counter = default_counter()
    for name in ("codex-transcripts-sample_session.jsonl", "agent-sessions-stage0-codex-small.jsonl"):
        session = open_session(transcript(name, "codex-rollout"), counter)
        for call in session.calls:
            if call.input_tokens is not None:
                assert call.input_tokens == count_imported(call.request, counter).input_tokens
