"""Choosing a tokenizer directory: requests are re-assembled with it, and it is remembered."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import core
from core.replay import diff, replay
from inspector.mainwindow import MainWindow
from inspector.files.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the shared test helpers live in tests/
tokenizer_factory = pytest.importorskip("tokenizer_factory")


@pytest.fixture(scope="module")
def toy_tokenizer(tmp_path_factory) -> Path:
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path_factory.mktemp("tok") / "toy")
    core.write_manifest(directory, model="toy-model", revision="r1")
    return directory


def test_chosen_counter_reassembles_and_is_remembered(open_and_wait, qtbot, fixtures_dir, toy_tokenizer):
    window = open_and_wait(fixtures_dir / "rag_tight.request.json")
    default_tokens = window.current_row.result.input_tokens
    spec = f"hf:{toy_tokenizer}"
    window.set_counter_spec(spec)
    qtbot.waitUntil(lambda: window.is_idle() and window.counter_spec == spec and window.current_row is not None,
                    timeout=180000)
    expected = core.assemble(core.load_request(fixtures_dir / "rag_tight.request.json"), core.make_counter(spec))
    row = window.current_row
    assert row.counter_name == spec
    assert row.result.input_tokens == expected.input_tokens != default_tokens
    assert "toy-model" in window.counter_label.text() and "r1" in window.counter_label.text()
    assert expected.counter.template_sha256[:12] in window.counter_label.text()
    assert Settings().last_counter() == spec

    again = MainWindow()
    qtbot.addWidget(again)
    qtbot.waitUntil(again.is_idle, timeout=180000)
    assert again.counter_spec == spec
    assert again.counter is not None and again.counter.name == spec
    again.shutdown()


def test_remembered_counter_that_fails_falls_back_to_the_embedded_one(qtbot, counter, tmp_path):
    Settings().set_last_counter(f"hf:{tmp_path / 'gone'}")
    window = MainWindow()
    qtbot.addWidget(window)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.counter_spec == core.DEFAULT_COUNTER
    assert window.counter is not None and window.counter.name == core.DEFAULT_COUNTER
    assert any("Falling back to the embedded counter" in text for _, text in window.messages)
    window.shutdown()


def test_a_recording_is_replayed_with_the_chosen_counter(open_and_wait, qtbot, fixtures_dir, toy_tokenizer):
    """The counter is one of the replay's edits: a recording counted with another tokenizer is replayed
    with the chosen one and marked against it, even before any limit moves."""
    window = open_and_wait(fixtures_dir / "demo.result.json")
    window.act_replay.trigger()
    assert window.replay_outcome is None
    spec = f"hf:{toy_tokenizer}"
    window.set_counter_spec(spec)
    qtbot.waitUntil(lambda: window.is_idle() and window.counter_spec == spec and window.replay_outcome is not None,
                    timeout=180000)
    recorded = core.load_result(fixtures_dir / "demo.result.json")
    toy = core.make_counter(spec)
    expected = replay(recorded, counter=toy)
    outcome = window.replay_outcome
    assert outcome.result.counter.name == spec and outcome.result.trace == expected.trace
    assert outcome.diff == diff(recorded, expected)
    assert window.replay_panel.counter_label.text() == "toy-model"
    assert window.bar.comparing
    # edits made before going back to the embedded counter stay: the file is read again, the edits are kept
    window.replay_panel.set_limit(900)
    qtbot.waitUntil(lambda: window.is_idle() and window.replay_outcome.edits.context_limit == 900, timeout=180000)
    window.act_default_counter.trigger()
    qtbot.waitUntil(lambda: window.is_idle() and window.counter_spec == core.DEFAULT_COUNTER, timeout=180000)
    assert window.replay_panel.limit.value() == 900
    outcome = window.replay_outcome
    assert outcome.edits.context_limit == 900 and outcome.result.counter.name == core.DEFAULT_COUNTER
