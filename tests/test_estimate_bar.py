"""An estimate (no public tokenizer: Claude, Gemini) whose file records the provider's input tokens is drawn
to the provider's figure, in the bar's layout, the HTML report and ``count``; our estimate and its drift
beside it, in words that say it is an estimate. A counter of the model's own tokenizer draws to its own count."""
from __future__ import annotations

from pathlib import Path

import pytest

from core import bar_basis, html_report, make_counter, result_segments
from core.cli import main
from core.formats import count_imported, import_file

REALWORLD = Path(__file__).resolve().parents[1] / ".." / "shared" / "realworld"
CLAUDE = REALWORLD / "anthropic-messages" / "openllmetry-test_anthropic_tools_history_legacy.yaml"
GPT = REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml"


@pytest.fixture(autouse=True)
def _no_user_table(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXT_ASSEMBLER_MODELS", str(tmp_path / "absent-models.json"))


def counted(path: Path):
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    request = import_file(path).requests[0]
    return count_imported(request, make_counter("auto", model=request.recorded.model))


def test_an_estimate_is_drawn_to_the_provider_figure(tiktoken_cache):
    result = counted(CLAUDE)
    basis = bar_basis(result)
    assert basis.provider and basis.input_tokens == 568 and basis.ours == result.input_tokens
    assert basis.drift == result.input_tokens - 568 != 0
    segments = result_segments(result, view="window")
    sections = [s for s in segments if s.kind == "section"]
    # the sections are our estimate's shares of the provider's 568, each keeping our own figure beside it
    assert sum(s.tokens for s in sections) == 568 and sections[-1].x1 == 568
    assert [s.estimate for s in sections] == [result.sent_tokens_by_section()[s.key] for s in sections]
    biggest = max(sections, key=lambda s: s.estimate)
    assert abs(biggest.tokens - biggest.estimate * 568 / result.input_tokens) < 1
    free = next(s for s in segments if s.kind == "free")
    assert free.x0 == 568 and free.tokens == result.input_budget - 568
    reserve = next(s for s in segments if s.kind == "reserve")
    assert reserve.x1 == result.context_limit


def test_our_own_tokenizer_draws_to_our_count(tiktoken_cache):
    result = counted(GPT)
    assert result.counter.kind != "estimate" and not bar_basis(result).provider
    sections = [s for s in result_segments(result) if s.kind == "section"]
    sent = result.sent_tokens_by_section()
    assert [s.tokens for s in sections] == [sent[s.key] for s in sections]
    assert all(s.estimate is None for s in sections)


def test_the_html_report_draws_to_the_provider_and_says_ours_is_an_estimate(tiktoken_cache):
    result = counted(CLAUDE)
    page = html_report(result)
    ours = f"{result.input_tokens:,}"
    assert f"our estimate {ours} · drift {result.input_tokens - 568:+,} (an estimate: no public tokenizer)" in page
    assert "568 as the provider recorded them (the bar is drawn to them" in page
    assert f"{result.input_budget - 568:,} left" in page
    assert "of the provider&#x27;s input tokens (our estimate counts" in page


def test_count_prints_the_provider_figure_as_the_one_to_go_by(tiktoken_cache, capsys):
    if not CLAUDE.is_file():
        pytest.skip(f"{CLAUDE} is absent")
    assert main(["count", str(CLAUDE)]) == 0
    out = capsys.readouterr().out
    allowance = counted(CLAUDE).input_budget
    assert (f"input: 568 tokens, the provider's recorded figure (the one to go by; {allowance - 568} of the "
            f"{allowance}-token allowance left); ours above is an estimate") in out
