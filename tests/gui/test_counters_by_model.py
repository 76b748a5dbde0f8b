"""Counting each imported request with its model's counter in the inspector: the Count With picker lists
every bundled and configured counter, ``auto`` counts an imported GPT-4o request with openai:gpt-4o against
its real window, the requests list says which counter counted each row, and estimates say so in words."""
from __future__ import annotations

from pathlib import Path

import pytest

import core
from inspector.models import RequestListModel

REALWORLD = Path(__file__).resolve().parents[2] / ".." / "shared" / "realworld"
GPT_TOOLS = REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml"
CLAUDE = REALWORLD / "anthropic-messages" / "openllmetry-test_anthropic_tools_history_legacy.yaml"


def realworld(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared realworld folder)")
    return path


def column(window, row, col):
    model = window.request_model
    return model.index(model.row_number(row), col).data()


def test_the_picker_lists_every_family_and_hf_dirs_used_before(window, qtbot, tiktoken_cache):
    window.settings.add_hf_dir("/tmp/a-tokenizer-dir")
    from inspector.menus import fill_counter_menu

    fill_counter_menu(window)
    labels = [a.text() for a in window.count_with_menu.actions()]
    for spec in ("auto", "mistral:tekken_240911", "mistral:tekken_240718", "openai:gpt-4o", "openai:o200k_base",
                 "openai:cl100k_base", "harmony:gpt-oss-20b", "hf:/tmp/a-tokenizer-dir"):
        assert spec in labels
    assert any(label.startswith("estimate:claude") and label.endswith("(an estimate)") for label in labels)
    checked = [a.text() for a in window.count_with_menu.actions() if a.isChecked()]
    assert checked == [core.DEFAULT_COUNTER]  # the fixture's window counts with the embedded one
    window.set_counter_spec(core.AUTO)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    fill_counter_menu(window)
    assert [a.text() for a in window.count_with_menu.actions() if a.isChecked()] == [core.AUTO]


def test_auto_counts_an_imported_gpt_request_with_its_own_counter_and_window(window, qtbot, open_and_wait,
                                                                              tiktoken_cache):
    window.set_counter_spec(core.AUTO)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    open_and_wait(realworld(GPT_TOOLS), realworld(CLAUDE))
    rows = window.request_model.rows()
    gpt = next(r for r in rows if r.imported.recorded.model == "gpt-3.5-turbo")
    assert gpt.result.counter.name == "openai:gpt-3.5-turbo"
    assert gpt.result.input_tokens == 40 and gpt.count_drift == 0  # OpenAI billed 40
    assert gpt.result.context_limit == 16385  # the model's real window, from the model registry
    assert column(window, gpt, RequestListModel.C_COUNTER) == "openai:gpt-3.5-turbo"
    claude = next(r for r in rows if r.imported.recorded.model == "claude-3-5-haiku-20241022")
    assert column(window, claude, RequestListModel.C_COUNTER) == "estimate:claude-3-5-haiku-20241022 (estimate)"
    assert any("is an estimate; the provider recorded 568" in n for n in claude.notes)
    assert claude.result.context_limit == 200000
    window.select_row(gpt)
    assert "auto, by each request's model: openai:gpt-3.5-turbo" in window.status.counter_label.text()
    window.select_row(claude)
    assert "estimate:claude-3-5-haiku-20241022 (an estimate: no public tokenizer)" in \
        window.status.counter_label.text()


def open_with_auto(window, qtbot, open_and_wait, path):
    """Count with auto, open ``path`` and select its first row."""
    window.set_counter_spec(core.AUTO)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    open_and_wait(realworld(path))
    row = window.request_model.rows()[0]
    window.select_row(row)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    return row


def test_screenshot_of_an_imported_openai_request(window, qtbot, open_and_wait, tiktoken_cache):
    row = open_with_auto(window, qtbot, open_and_wait, GPT_TOOLS)
    window.resize(1280, 800)
    qtbot.wait(200)
    window.grab().save("/tmp/i13-gpt-window.png")
    assert row.result.counter.name == "openai:gpt-3.5-turbo" and row.count_drift == 0


def test_an_estimate_is_drawn_beside_the_provider_figure_it_yields_to(window, qtbot, open_and_wait, tiktoken_cache):
    open_with_auto(window, qtbot, open_and_wait, CLAUDE)
    bar, row = window.bar, window.current_row
    ours = row.result.input_tokens
    # the main lane is drawn to the provider's 568: each section our estimate's share of it ("≈" in its label)
    sections = [s for s in bar.segments if s.kind == "section" and s.lane == "main"]
    assert sum(s.tokens for s in sections) == 568 and max(s.x1 for s in sections) == 568
    assert all(s.estimate is not None for s in sections)
    assert next(s for s in bar.segments if s.kind == "free").x0 == 568
    from inspector.panes.budget.plot import drawn_segments

    labels = [d.label for d in drawn_segments(sections, window.palette(), None)]
    assert all("≈" in label for label in labels)
    # our estimate and its drift beside it, below, in words that say it is an estimate
    assert bar.marks.provider_label.textItem.toPlainText() == (
        f"our estimate {ours:,} · drift {ours - 568:+,}")
    ticks = bar.plot.getPlotItem().getAxis("left")._tickLevels[0]  # pyqtgraph keeps the ticks set here
    assert [t[1] for t in ticks] == ["provider", "estimate"]
    assert (f"568 input tokens as the provider recorded them (our estimate {ours:,}, drift {ours - 568:+,})"
            in bar.caption.text())
    assert "Our count is an estimate (estimate:claude-3-5-haiku-20241022); the provider's 568 input tokens" in \
        bar.caption.text()
    assert any(e.startswith("Our estimate of the input (no public tokenizer") for e in bar.legend.entries())
    assert "Input 568 / " in window.status.tokens_label.text() and f"our estimate {ours}" in \
        window.status.tokens_label.text()
    window.resize(1280, 800)
    qtbot.wait(200)
    window.grab().save("/tmp/i13-claude-window.png")


def test_auto_is_the_default_and_says_loudly_when_it_falls_back_to_an_estimate(qtbot, tmp_path, monkeypatch):
    """Nothing remembered: auto. A GPT request whose encoding is not in the tiktoken cache here is counted as an
    estimate (never downloaded), drawn to the provider's figure, and the window says what to run."""
    from inspector.mainwindow import MainWindow
    from inspector.workers import CounterCache

    path = realworld(GPT_TOOLS)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: a fresh machine
    window = MainWindow(counter_cache=CounterCache())  # counters of earlier tests are not reused
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.counter_spec == core.AUTO
    window.open_files([str(path)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    row = window.request_model.rows()[0]
    window.select_row(row)
    assert row.result.counter.name == "estimate:gpt-3.5-turbo" and row.result.counter.kind == "estimate"
    assert column(window, row, RequestListModel.C_COUNTER) == "estimate:gpt-3.5-turbo (estimate)"
    warnings = [text for level, text in window.messages if level == "warning" and "auto picked" in text]
    assert len(warnings) == 1  # once per model, not once per request (the file holds three)
    assert "openai:gpt-3.5-turbo" in warnings[0] and "context-assembler tokenizers fetch cl100k_base" in warnings[0]
    assert warnings[0].endswith("counted as an estimate (estimate:gpt-3.5-turbo) instead")
    assert "an estimate: its own counter cannot be used here" in window.status.counter_label.text()
    assert window.bar.marks.provider_label.textItem.toPlainText().startswith("our estimate ")
    assert not any(tmp_path.iterdir())  # nothing was fetched on its own
    window.shutdown()


def test_the_counter_menu_downloads_a_missing_encoding_when_asked_and_counts_again(qtbot, tmp_path, monkeypatch,
                                                                                  tiktoken_cache):
    """A fresh machine: gpt-4.1 is counted as an estimate until the person picks "Download o200k_base…";
    then it is fetched (here from a server on 127.0.0.1 serving the real file) and the file counted again."""
    import functools
    import http.server
    import threading

    from inspector.mainwindow import MainWindow
    from inspector.menus import fill_counter_menu
    from inspector.workers import CounterCache

    path = realworld(REALWORLD / "platform-exports" / "langfuse-openai-agents-2025-09-30.trace.json")
    served = tmp_path / "served"
    served.mkdir()
    real = tiktoken_cache / core.TIKTOKEN_ENCODINGS["o200k_base"].cache_name
    (served / "o200k_base.tiktoken").write_bytes(real.read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))  # empty: nothing cached yet
    window = MainWindow(counter_cache=CounterCache())
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(window.is_idle, timeout=180000)
        window.open_files([str(path)])
        qtbot.waitUntil(window.is_idle, timeout=180000)
        assert window.request_model.rows()[0].result.counter.name == "estimate:gpt-4.1-2025-04-14"
        fill_counter_menu(window)
        labels = [a.text() for a in window.count_with_menu.actions()]
        assert "Download o200k_base…" in labels and "Download cl100k_base…" in labels
        assert not cache.exists()  # listed, never fetched on its own
        from PySide6.QtWidgets import QMessageBox

        asked = []
        monkeypatch.setattr(QMessageBox, "question", lambda parent, title, text, *a: asked.append(text) or
                            QMessageBox.StandardButton.No)
        window.counters.fetch_dialog("o200k_base")  # the person says no: nothing is downloaded
        assert "Download the tiktoken encoding o200k_base from https://openaipublic" in asked[0]
        assert str(cache) in asked[0] and not window.counters.fetching and not cache.exists()
        window.counters.fetch("o200k_base", url=f"http://127.0.0.1:{server.server_address[1]}/o200k_base.tiktoken")
        qtbot.waitUntil(lambda: window.is_idle() and window.request_model.rowCount() == 2 and
                        window.request_model.rows()[0].result is not None and
                        window.request_model.rows()[0].result.counter.name.startswith("openai:"), timeout=180000)
        row = window.request_model.rows()[0]
        assert row.result.counter.name == "openai:gpt-4.1-2025-04-14" and row.result.input_tokens == 79
        assert (cache / core.TIKTOKEN_ENCODINGS["o200k_base"].cache_name).read_bytes() == real.read_bytes()
        assert any(level == "info" and text.startswith("Downloaded ") for level, text in window.messages)
        fill_counter_menu(window)
        assert "Download o200k_base…" not in [a.text() for a in window.count_with_menu.actions()]
    finally:
        window.shutdown()
        server.shutdown()
