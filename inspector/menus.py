"""The window's actions (each with its shortcut, added to the window so it works with the menu bar
hidden) and its menus. Every action calls the window; none reaches into a pane."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

import core

if TYPE_CHECKING:
    from .mainwindow import MainWindow


def _action(w: MainWindow, text: str, shortcut: QKeySequence | str | None, slot, tip: str) -> QAction:
    action = QAction(text, w)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.setStatusTip(tip)
    action.setToolTip(tip)
    action.triggered.connect(slot)
    w.addAction(action)  # shortcuts work even when the menu bar is hidden
    return action


def build_actions(w: MainWindow) -> None:
    K = QKeySequence.StandardKey
    w.act_open = _action(w, "&Open…", K.Open, w.opener.open_dialog, "Open request or result files")
    w.act_demo = _action(w, "Open &Demo", "Ctrl+D", w.open_demo, "Open the bundled demo request with its naive baseline")
    w.act_reload = _action(w, "&Reload", "F5", w.reload, "Read the open files again")
    w.act_save = _action(w, "&Save Result As…", "Ctrl+Shift+S", w.saver.save_result_dialog,
                         "Write the selected result as JSON to a new file")
    w.act_close = _action(w, "&Close File", "Ctrl+W", w.close_current_file, "Close the file of the selected request")
    w.act_counter = _action(w, "&Counter…", "Ctrl+K", w.counters.choose_dialog,
                            "Pick a Hugging Face tokenizer directory to count with")
    w.act_default_counter = _action(w, "Use &Embedded Counter", "Ctrl+Shift+K",
                                    lambda: w.set_counter_spec(core.DEFAULT_COUNTER),
                                    f"Count with {core.DEFAULT_COUNTER}")
    w.act_cancel = _action(w, "Cancel &Loading", "Esc", w.cancel_loading, "Stop reading files")
    w.act_quit = _action(w, "&Quit", "Ctrl+Q", w.close, "Quit")
    w.act_filter = _action(w, "&Find Request", "Ctrl+F", w.find,
                           "Filter the requests; in the rendered request or the JSON: find text there")
    w.act_find_detail = _action(w, "Find in Request or &JSON", "Ctrl+Shift+F", w.detail.open_find,
                                "Find text in the rendered request (or the JSON, when its tab is shown)")
    w.act_next = _action(w, "&Next Request", "Ctrl+Down", lambda: w.step_request(1), "Select the next request")
    w.act_prev = _action(w, "&Previous Request", "Ctrl+Up", lambda: w.step_request(-1), "Select the previous request")
    w.act_tabs = [_action(w, f"Show {name} Tab", f"Alt+{n + 1}",
                          lambda _=False, n=n: w.detail.setCurrentIndex(n), f"Show the {name} tab")
                  for n, name in enumerate(w.detail.NAMES)]
    w.act_log = w.log_dock.toggleViewAction()
    w.act_log.setText("&Log")
    w.act_log.setShortcut(QKeySequence("Ctrl+L"))
    w.addAction(w.act_log)
    w.act_replay = w.replay_dock.toggleViewAction()
    w.act_replay.setText("&Replay Panel")
    w.act_replay.setShortcut(QKeySequence("Ctrl+R"))
    w.act_replay.setStatusTip("Edit the limits, reserve, margin, fill order, plan and counter and watch "
                              "the request re-assemble")
    w.addAction(w.act_replay)
    w.act_session = w.session_dock.toggleViewAction()
    w.act_session.setText("&Session")
    w.act_session.setShortcut(QKeySequence("Ctrl+Shift+T"))
    w.act_session.setStatusTip("The selected call's trace as a session: every model call's input against the "
                               "window, what changed between calls, the cached prefix, the span tree")
    w.addAction(w.act_session)
    w.act_experiments = w.experiments_dock.toggleViewAction()
    w.act_experiments.setText("E&xperiments Panel")
    w.act_experiments.setShortcut(QKeySequence("Ctrl+Shift+X"))
    w.act_experiments.setStatusTip("Grades of an experiment's answers, variants by seeds, and the position curve")
    w.addAction(w.act_experiments)
    w.act_sweep = w.sweep_dock.toggleViewAction()
    w.act_sweep.setText("S&weep")
    w.act_sweep.setShortcut(QKeySequence("Ctrl+Shift+W"))
    w.addAction(w.act_sweep)
    w.act_sweep.setStatusTip("An opened SWEEP.json: figures per setting, histograms, the requests of a bucket")
    w.act_run_experiment = _action(w, "Run E&xperiment…", "Ctrl+Alt+X", w.experiments.run_dialog,
                                   "Send variants of the selected request to a model endpoint you name, N seeds "
                                   "each, and record every answer")
    w.act_reset_replay = _action(w, "Reset Replay to &Recorded", "Ctrl+Shift+R", w.reset_replay,
                                 "Put every replay control back to the recorded value")
    w.act_only_changes = _action(w, "Only &Changes", "Ctrl+Shift+C", w.only_changes.toggle,
                                 "Show only the items whose decision the replay changed")
    w.act_save_replayed = _action(w, "Save Re&played Result As…", "Ctrl+Alt+S", w.saver.save_replayed_dialog,
                                  "Write the replayed result as JSON to a new file")
    w.act_save_replayed.setEnabled(False)
    w.act_export = _action(w, "&Export…", "Ctrl+Shift+E", w.export_dialog,
                           "Export the shown result: result JSON, OpenAI request body, OTLP JSON span or "
                           "an HTML report, optionally redacted")
    w.act_reassemble = _action(w, "Re-&assemble", "Ctrl+E", w.reassemble_current,
                               "Turn the imported provider request into a core request, assemble it "
                               "under its context limit and open it in the replay panel")
    w.act_context_limit = _action(w, "Context &Limit for Model…", "Ctrl+Shift+L", w.imports.focus_context_limit,
                                  "Set the context limit of the selected imported request's model "
                                  "(remembered for that model)")
    w.import_bar.set_reassemble_tip(f"{w.act_reassemble.statusTip()} ({w.act_reassemble.shortcut().toString()})")
    w.act_help = _action(w, "&Shortcuts and Legend", "F1", w.show_help,
                         "Every shortcut, and what each tint of the rendered request marks")
    w.act_about = _action(w, "&About Context Inspector", "Ctrl+F1", w.show_about, "Versions and credits")
    for action in (w.act_export, w.act_reassemble, w.act_context_limit, w.act_cancel, w.act_save, w.act_close):
        action.setEnabled(False)


def build_menus(w: MainWindow) -> None:
    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addAction(w.act_open)
    w.recent_menu = file_menu.addMenu("Open &Recent")
    _fill(file_menu, w.act_demo, w.act_reload, None, w.act_save, w.act_save_replayed, w.act_export, w.act_close, None,
          w.act_counter)
    w.count_with_menu = file_menu.addMenu("Count &With")
    w.count_with_menu.aboutToShow.connect(lambda: fill_counter_menu(w))
    fill_counter_menu(w)
    _fill(file_menu, w.act_default_counter, w.act_cancel, None, w.act_quit)
    _fill(bar.addMenu("&Go"), w.act_filter, w.act_find_detail, w.act_next, w.act_prev)
    _fill(bar.addMenu("&Request"), w.act_reassemble, w.act_context_limit, None, w.act_run_experiment)
    view_menu = bar.addMenu("&View")
    _fill(view_menu, *w.act_tabs, None, w.act_replay, w.act_reset_replay, w.act_only_changes, None,
          w.act_session, w.act_experiments, w.act_sweep, None,
          w.act_log, None)
    w.columns_menu = view_menu.addMenu("Request List &Columns")
    w.columns_menu.aboutToShow.connect(lambda: w.requests.fill_columns_menu(w.columns_menu))
    w.requests.fill_columns_menu(w.columns_menu)
    _fill(bar.addMenu("&Help"), w.act_help, w.act_demo, w.act_about)


def fill_counter_menu(w: MainWindow) -> None:
    """Every bundled and configured counter, the current one checked; estimates say so, ones that need a
    fetch first are listed disabled with what to run."""
    menu = w.count_with_menu
    menu.clear()
    for entry in w.counters.choices():
        label = entry.spec + ("  (an estimate)" if entry.estimate else "")
        action = menu.addAction(label)
        action.setCheckable(True)
        action.setChecked(entry.spec == w.counter_spec)
        action.setToolTip(entry.description)
        action.setStatusTip(entry.description)
        action.setEnabled(entry.available)
        action.triggered.connect(lambda _=False, spec=entry.spec: w.set_counter_spec(spec))
    missing = [name for name in sorted(core.TIKTOKEN_ENCODINGS) if core.cached_encoding(name) is None]
    if missing:
        menu.addSeparator()
    for name in missing:  # the person's click is the only way a tokenizer is downloaded
        action = menu.addAction(f"Download {name}…")
        action.setStatusTip(f"Download the tiktoken encoding {name} from {core.TIKTOKEN_ENCODINGS[name].url} "
                            "(asks first)")
        action.triggered.connect(lambda _=False, name=name: w.counters.fetch_dialog(name))


def _fill(menu: QMenu, *items: QAction | None) -> None:
    """Add ``items`` to ``menu`` in order; None is a separator."""
    for item in items:
        if item is None:
            menu.addSeparator()
        else:
            menu.addAction(item)
