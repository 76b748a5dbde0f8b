"""Nothing of the person's is written over without asking: saves and exports start in the folder the
person saved into before (never an input's folder), name the strategy, and ask before replacing a file.
Every file dialog and prompt is replaced by a stand-in that records what it was asked."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from inspector.files.exporting import ExportDialog

OPENED = ("demo.baseline.json", "trip_plan_pin_and_fold.plan.json", "rag_tight.request.json", "tool_exchange.request.json",
          "recorded.results.jsonl")


def fixture_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of the test's own: with no folder remembered, saves start there."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


class Prompts:
    """Stands in for QMessageBox.question and QFileDialog.getSaveFileName."""

    def __init__(self, monkeypatch, *, replace: bool) -> None:
        self.replace = replace
        self.questions: list[str] = []
        self.dialogs: list[tuple[str, object]] = []  # (suggested path, options)
        monkeypatch.setattr(QMessageBox, "question", self._question)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", self._save_dialog)

    def _question(self, parent, title, text, *args, **kwargs):
        self.questions.append(text)
        return QMessageBox.StandardButton.Yes if self.replace else QMessageBox.StandardButton.No

    def _save_dialog(self, parent, caption, directory, pattern, *args, **kwargs):
        self.dialogs.append((directory, kwargs.get("options")))
        return directory, pattern  # the person accepts the suggestion as it is


def export_with_defaults(window, qtbot) -> ExportDialog:
    dialog = window.export_dialog()
    assert dialog is not None
    dialog.export_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible() or bool(dialog.path()), timeout=180000)
    return dialog


def test_saving_and_exporting_every_opened_row_with_the_defaults_leaves_every_input_unchanged(
        open_and_wait, fixtures_dir, home, monkeypatch, qtbot):
    before = fixture_hashes(fixtures_dir)
    prompts = Prompts(monkeypatch, replace=True)  # even a careless "Replace" cannot reach an input
    window = open_and_wait(*(fixtures_dir / name for name in OPENED), demo=True)
    rows = [r for r in window.request_model.rows() if r.result is not None]
    assert len(rows) >= 8
    for number in range(window.request_proxy.rowCount()):
        window.select_proxy_row(number)
        if window.current_row.result is None:
            continue
        export_with_defaults(window, qtbot)
        window.saver.save_result_dialog()
    assert fixture_hashes(fixtures_dir) == before
    written = sorted(p.name for p in home.iterdir())
    assert "demo.assemble.result.json" in written and "demo.naive_truncate.result.json" in written
    assert all(Path(path).parent == home for path, _ in prompts.dialogs)  # never the input's folder
    assert all(opts == QFileDialog.Option.DontConfirmOverwrite for _, opts in prompts.dialogs)  # we ask, once
    assert prompts.questions  # the second save of a name asked before replacing it


def test_an_export_over_an_existing_file_asks_and_keeps_it_when_told_no(open_and_wait, home, monkeypatch, qtbot):
    prompts = Prompts(monkeypatch, replace=False)
    window = open_and_wait(demo=True)
    dialog = window.export_dialog()
    target = Path(dialog.path())
    assert target.parent == home and target.name == "demo.assemble.result.json"
    target.write_text("mine\n", encoding="utf-8")
    dialog.export_button.click()
    assert prompts.questions == [f"{target.name} already exists in {home}.\nReplace it?"]
    assert target.read_text(encoding="utf-8") == "mine\n"
    assert dialog.isVisible()  # the person can pick another name
    prompts.replace = True
    dialog.export_button.click()
    qtbot.waitUntil(lambda: target.read_text(encoding="utf-8") != "mine\n", timeout=180000)
    assert '"strategy": "assemble"' in target.read_text(encoding="utf-8")


def test_save_result_over_an_existing_file_asks_first(open_and_wait, home, monkeypatch):
    prompts = Prompts(monkeypatch, replace=False)
    window = open_and_wait(demo=True)
    existing = home / "demo.assemble.result.json"
    existing.write_text("mine\n", encoding="utf-8")
    window.saver.save_result_dialog()
    assert len(prompts.questions) == 1 and existing.read_text(encoding="utf-8") == "mine\n"
    window.select_proxy_row(1)
    window.saver.save_result_dialog()  # a name not taken yet: written without a question
    assert len(prompts.questions) == 1 and (home / "demo.naive_truncate.result.json").is_file()


def test_saves_start_in_the_folder_the_person_saved_into_last_and_it_is_remembered(
        open_and_wait, fixtures_dir, home, tmp_path, monkeypatch):
    prompts = Prompts(monkeypatch, replace=True)
    window = open_and_wait(fixtures_dir / "demo.result.json")
    chosen = tmp_path / "exports"
    chosen.mkdir()
    assert window.export_to(str(chosen / "mine.html"), "html")
    dialog = window.export_dialog()
    assert Path(dialog.path()).parent == chosen
    assert window.settings.save_folder() == str(chosen)  # the next run starts there too
    window.saver.save_result_dialog()
    assert Path(prompts.dialogs[-1][0]).parent == chosen
