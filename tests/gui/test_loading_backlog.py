"""What a load sends while the window is busy waits in the paced queue of steps (``inspector.turns``) and is taken over
several turns of the event loop, in the order it came. Each test keeps the window busy (not handling events) until the
loading thread has listed and read whole files, so that all it sent waits at once, as after a long stall, and then acts
as a person would while that backlog is taken."""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from .test_large_jsonl import _write_requests


def _open_and_let_it_finish(window, paths) -> None:
    before = window.request_model.rowCount()  # (the rows of files opened before)
    window.open_files([str(p) for p in paths])
    thread = window.opener.thread
    assert thread is not None
    assert thread.wait(180000)  # every batch sent; none taken yet
    assert window.request_model.rowCount() == before


def _until_rows_listed(window) -> None:
    while window.request_model.rowCount() == 0:
        QApplication.processEvents()
        time.sleep(0.001)


def test_what_a_load_sent_while_the_window_was_busy_is_taken_over_several_turns(window, qtbot, tmp_path):
    """Taken a few steps at a time, the heartbeat ticking between the first and the last, in the order it came (the
    job's end last): every row read, the first selected, the file said loaded."""
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 1500)
    opener = window.opener
    taken: list[tuple[str, int]] = []
    ticks = [0]
    for name in ("_on_batch", "_on_rows_read", "_on_job_finished"):
        real = getattr(opener, name)
        setattr(opener, name, lambda *a, real=real, name=name, **k: taken.append((name, ticks[0])) or real(*a, **k))
    _open_and_let_it_finish(window, [path])
    assert taken == []
    heartbeat = QTimer()
    heartbeat.setInterval(1)
    heartbeat.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    heartbeat.start()
    try:
        qtbot.waitUntil(window.is_idle, timeout=180000)
    finally:
        heartbeat.stop()
    names = [name for name, _ in taken]
    assert names.count("_on_batch") >= 2 and names.count("_on_rows_read") >= 2
    assert names.index("_on_rows_read") > names.index("_on_batch")
    assert names[-1] == "_on_job_finished" and names.count("_on_job_finished") == 1
    assert taken[-1][1] > taken[0][1]  # the event loop turned between the first and the last
    model = window.request_model
    assert model.rowCount() == 1500 and not any(model.row_at(i).pending for i in range(1500))
    assert window.current_row is model.row_at(0)
    assert any(text.startswith("Loaded many.requests.jsonl") for _, text in window.messages)


def test_reload_while_a_second_files_rows_still_wait_keeps_both_files(window, qtbot, tmp_path):
    """Reload handles the finished job at once; a file whose rows had not been taken yet is not judged unreadable
    (and closed): both files are read again."""
    a, b = tmp_path / "a.requests.jsonl", tmp_path / "b.requests.jsonl"
    _write_requests(a, 1500)
    _write_requests(b, 50)
    _open_and_let_it_finish(window, [a, b])  # one job, two files
    _until_rows_listed(window)  # a's first rows taken, b's still waiting
    window.opener.reload()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.request_model.rowCount() == 1550
    assert sorted(window.opener.open_paths) == sorted([str(a.resolve()), str(b.resolve())])
    assert not any("Not opened" in text for _, text in window.messages)


def test_a_row_the_person_selects_is_not_replaced_by_the_first_row_waiting_to_be_shown(window, qtbot, tmp_path):
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 3000)
    _open_and_let_it_finish(window, [path])
    _until_rows_listed(window)
    window.select_proxy_row(5)  # the person clicks the sixth row as soon as the list is there
    clicked = window.current_row
    assert clicked is window.request_model.row_at(5)
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.current_row is clicked


def test_reload_while_the_first_row_waits_to_be_shown_shows_a_row_of_the_list(window, qtbot, tmp_path):
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 3000)
    _open_and_let_it_finish(window, [path])
    _until_rows_listed(window)
    window.opener.reload()
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    assert model.rowCount() == 3000
    assert window.current_row is not None
    assert any(model.row_at(i) is window.current_row for i in range(model.rowCount()))


def test_a_click_after_the_jobs_end_but_before_its_first_row_is_shown_leaves_nothing_busy(window, qtbot, tmp_path,
                                                                                         monkeypatch):
    """One step a turn: the job's end is taken while the file's first row still waits to be shown (so the window is
    still busy then); the person clicks another row; the wait is dropped, and the busy display goes once it is."""
    from inspector import turns

    monkeypatch.setattr(turns, "SLICE_S", 0.0)
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 1500)
    _open_and_let_it_finish(window, [path])
    opener = window.opener
    while opener.thread is not None:  # up to the job's end
        QApplication.processEvents()
        time.sleep(0.001)
    assert opener._selecting is not None and opener.is_busy()
    window.select_proxy_row(5)
    clicked = window.current_row
    qtbot.waitUntil(window.is_idle, timeout=180000)
    qtbot.wait(20)
    assert window.current_row is clicked
    assert not window.progress.isVisible() and not window.cancel_button.isVisible()
    assert not window.act_cancel.isEnabled()


def test_a_row_selected_while_its_read_content_waits_is_not_read_again(window, qtbot, tmp_path, monkeypatch):
    """The job has read every row and ended (its rows read still wait to be taken): a pending row the person selects
    is not given to a second reader; it is shown read once its content is taken."""
    from inspector.controllers import opening

    started = []
    real = opening.ReadRowThread
    monkeypatch.setattr(opening, "ReadRowThread", lambda row, *a, **k: started.append(row) or real(row, *a, **k))
    path = tmp_path / "many.requests.jsonl"
    _write_requests(path, 3000)
    _open_and_let_it_finish(window, [path])
    _until_rows_listed(window)
    while window.request_model.rowCount() < 3000:
        QApplication.processEvents()
        time.sleep(0.001)
    row = window.request_model.row_at(2900)
    assert row.pending
    window.select_row(row, origin="list")
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert started == []
    assert window.current_row is row and not row.pending and row.kind == "assembled"


def test_a_row_clicked_before_a_newly_opened_files_rows_come_stays_selected(window, qtbot, tmp_path):
    """A file is open and shown; the person opens a second, large one and, before its rows are listed, clicks a row
    of the first: the later choice stands (the second file's first row is not selected over it when it comes). A
    file opened with nothing clicked meanwhile still has its first row selected."""
    x, a = tmp_path / "x.requests.jsonl", tmp_path / "a.requests.jsonl"
    _write_requests(x, 20)
    _write_requests(a, 1500)
    window.open_files([str(x)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    model = window.request_model
    assert window.current_row is model.row_at(0)
    _open_and_let_it_finish(window, [a])
    window.select_proxy_row(3)  # the person's click, before a's rows are taken
    clicked = window.current_row
    assert clicked.source == str(x.resolve())
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert model.rowCount() == 1520
    assert window.current_row is clicked
    b = tmp_path / "b.requests.jsonl"
    _write_requests(b, 30)
    window.open_files([str(b)])
    qtbot.waitUntil(window.is_idle, timeout=180000)
    assert window.current_row is not None and window.current_row.source == str(b.resolve())

