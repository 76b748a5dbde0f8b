"""The demo counts with the embedded counter whatever is remembered, and a remembered counter that
refuses a request says it could not be counted with it (the file was read), never that it could not be
read."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import core
from inspector.app import build_parser, startup_counter
from inspector.files.settings import Settings
from inspector.mainwindow import MainWindow
from inspector.panes.detail import DetailTabs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the shared test helpers live in tests/
tokenizer_factory = pytest.importorskip("tokenizer_factory")

REFUSAL = "toy template: tools are not supported"
REFUSING_TEMPLATE = ("{%- if tools -%}{{- raise_exception('" + REFUSAL + "') -}}{%- endif -%}"
                     "{%- for m in messages -%}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' -}}"
                     "{%- endfor -%}")


@pytest.fixture(scope="module")
def refusing_spec(tmp_path_factory) -> str:
    """A tokenizer directory whose chat template refuses any request with tools (the demo has three)."""
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path_factory.mktemp("tok") / "refusing",
                                                          chat_template=REFUSING_TEMPLATE)
    core.write_manifest(directory, model="toy-refusing", revision="r1")
    return f"hf:{directory}"


def new_window(qtbot, spec: str | None) -> MainWindow:
    window = MainWindow(counter_spec=spec)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    return window


def test_a_remembered_counter_that_refuses_says_could_not_be_counted_with_it(qtbot, fixtures_dir, refusing_spec):
    Settings().set_last_counter(refusing_spec)
    window = new_window(qtbot, None)
    assert window.counter_spec == refusing_spec
    window.open_files([str(fixtures_dir / "demo.request.json")])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    row = window.current_row
    assert row.kind == "uncounted" and row.status_text() == "not counted"
    assert f"could not be counted with {refusing_spec}: " in row.error and REFUSAL in row.error
    errors = [text for level, text in window.messages if level == "error"]
    assert errors and all("could not be counted with" in text for text in errors)
    assert not any("could not be read" in text or "unreadable" in text for _, text in window.messages)
    assert "could not be counted with" in window.message_bar.message()
    window.detail.setCurrentIndex(DetailTabs.ITEM)
    assert "Could not be counted" in window.detail.item.toPlainText()
    window.shutdown()


def test_the_demo_counts_with_the_embedded_counter_and_keeps_the_remembered_one(qtbot, refusing_spec):
    Settings().set_last_counter(refusing_spec)
    args = build_parser().parse_args(["--demo"])
    assert startup_counter(args) == core.DEFAULT_COUNTER
    assert startup_counter(build_parser().parse_args(["--demo", "--counter", refusing_spec])) == refusing_spec
    assert startup_counter(build_parser().parse_args([])) is None  # the remembered one
    window = new_window(qtbot, startup_counter(args))
    window.open_demo()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    rows = window.request_model.rows()
    assert [r.kind for r in rows] == ["assembled", "assembled"]
    assert {r.counter_name for r in rows} == {core.DEFAULT_COUNTER}
    assert not [text for level, text in window.messages if level == "error"]
    assert Settings().last_counter() == refusing_spec  # the demo did not forget the person's choice
    window.shutdown()
