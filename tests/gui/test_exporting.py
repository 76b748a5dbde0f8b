"""File ▸ Export…: each kind writes a file that loads back (JSON kinds) or stands alone (HTML); redaction
leaves no message text; nothing is ever written over an opened file."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

import core
from inspector.files.exporting import ExportDialog, KINDS, suggested_name, with_suffix

FORMATS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
# an assembled request of ours, and a provider's traced model call (imported, with trace and span ids)
SOURCES = [("tool_exchange.result.json", None), ("formats/otlp_traces.json", 0)]


def open_source(open_and_wait, fixtures_dir, name, index):
    window = open_and_wait(fixtures_dir / name)
    if index is not None:
        window.select_proxy_row(index)
    assert window.current_row.result is not None
    return window


def message_texts(result: core.AssemblyResult) -> list[str]:
    """Every message text and tool-call argument long enough not to occur by chance elsewhere."""
    texts = [m.content for m in result.messages if m.content and len(m.content) >= 12]
    texts += [json.dumps(c.arguments) for m in result.messages for c in m.tool_calls if c.arguments]
    return texts


@pytest.mark.parametrize("name, index", SOURCES)
def test_json_export_loads_back_as_the_same_result(open_and_wait, fixtures_dir, tmp_path, name, index):
    window = open_source(open_and_wait, fixtures_dir, name, index)
    out = tmp_path / "export.result.json"
    assert window.export_to(str(out), "json")
    assert core.load_result(out) == window.current_row.result


@pytest.mark.parametrize("name, index", SOURCES)
def test_openai_export_is_a_request_body_that_imports_back(open_and_wait, fixtures_dir, tmp_path, name, index):
    window = open_source(open_and_wait, fixtures_dir, name, index)
    result = window.current_row.result
    out = tmp_path / "export.openai.json"
    assert window.export_to(str(out), "openai")
    body = json.loads(out.read_text(encoding="utf-8"))
    assert [m["role"] for m in body["messages"]] == [m.role for m in result.messages]
    (request,) = core.import_file(out).requests
    assert [m.content for m in request.messages] == [m.content for m in result.messages]
    assert [t.name for t in request.tools] == [t.name for t in result.tools]


@pytest.mark.parametrize("name, index", SOURCES)
def test_otlp_export_is_one_span_that_imports_back(open_and_wait, fixtures_dir, tmp_path, name, index):
    window = open_source(open_and_wait, fixtures_dir, name, index)
    row = window.current_row
    out = tmp_path / "export.otlp.json"
    assert window.export_to(str(out), "otlp")
    (request,) = core.import_file(out).requests
    assert request.recorded.input_tokens == row.result.input_tokens  # our count, as the span's usage
    assert len(request.messages) == len(row.result.messages)
    if row.imported is not None:  # a traced call keeps its trace and span
        assert (request.recorded.trace_id, request.recorded.span_id) == \
            (row.imported.recorded.trace_id, row.imported.recorded.span_id)


@pytest.mark.parametrize("name, index", SOURCES)
def test_html_export_has_the_section_table_and_no_external_resources(open_and_wait, fixtures_dir, tmp_path, name,
                                                                     index):
    window = open_source(open_and_wait, fixtures_dir, name, index)
    result = window.current_row.result
    out = tmp_path / "report.html"
    assert window.export_to(str(out), "html")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<h2>Composition</h2>" in page  # the app's section names, in its colours, with their tokens
    for section, tokens in result.sent_tokens_by_section().items():
        assert (f'<span class="sw" style="background:{core.SECTION_COLOURS[section]}"></span>'
                f'{core.section_title(section)}</td><td class="n">{tokens:,}</td>') in page
    for finding in window.current_row.findings:
        assert finding.rule in page
    assert not re.search(r"<script|<link|<img|<iframe|\bsrc\s*=|\bhref\s*=|@import|https?://", page, re.I)
    assert not re.search(r"url\((?!#)", page)  # only the page's own hatch pattern


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, index", SOURCES)
def test_redacted_export_keeps_counts_and_ids_and_no_message_text(open_and_wait, fixtures_dir, tmp_path, name, index,
                                                                  kind):
    window = open_source(open_and_wait, fixtures_dir, name, index)
    result = window.current_row.result
    texts = message_texts(result)
    assert texts
    out = tmp_path / f"redacted.{kind}"
    assert window.export_to(str(out), kind, redact=True)
    written = out.read_text(encoding="utf-8")
    for text in texts:
        assert text not in written and json.dumps(text)[1:-1] not in written and html.escape(text) not in written
    assert "[redacted: " in written
    if kind != "openai":  # a request body carries no counts; the others keep ours
        assert str(result.input_tokens) in written
    for m in result.messages:
        for call in m.tool_calls:
            assert call.id in written  # ids stay


def test_export_never_writes_over_an_opened_file(open_and_wait, fixtures_dir, tmp_path):
    original = tmp_path / "opened.result.json"
    original.write_bytes((fixtures_dir / "tool_exchange.result.json").read_bytes())
    window = open_and_wait(original)
    before = original.read_bytes()
    assert not window.export_to(str(original), "json", redact=True)
    assert original.read_bytes() == before
    assert "never overwritten" in window.message_bar.message()
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary left behind


def test_export_dialog_chooses_kind_redaction_and_file(open_and_wait, fixtures_dir, tmp_path, qtbot):
    window = open_and_wait(FORMATS_DIR / "otlp_traces.json")
    assert window.act_export.isEnabled() and window.act_export.shortcut().toString() == "Ctrl+Shift+E"
    dialog = window.export_dialog()
    assert isinstance(dialog, ExportDialog) and dialog.isVisible()
    assert [dialog.kind_box.itemData(i) for i in range(dialog.kind_box.count())] == list(core.EXPORT_KINDS)
    target = tmp_path / "chat.result.json"
    dialog.path_edit.setText(str(target))
    dialog.set_kind("html")
    assert dialog.path() == str(tmp_path / "chat.html")  # the suffix follows the kind
    dialog.redact_box.setChecked(True)
    dialog.export_button.click()
    page = (tmp_path / "chat.html").read_text(encoding="utf-8")
    assert "<h2>Composition</h2>" in page and "[redacted: " in page
    for text in message_texts(window.current_row.result):
        assert text not in page
    dialog.path_edit.clear()
    assert not dialog.export_button.isEnabled()


def test_export_file_names_come_from_the_label():
    assert suggested_name("chat gpt-4o (span 10/2)", "otlp") == "chat_gpt-4o_(span_10_2).otlp.json"
    assert with_suffix("/tmp/a.result.json", "html") == "/tmp/a.html"
    assert with_suffix("/tmp/mine.txt", "html") == "/tmp/mine.txt"
