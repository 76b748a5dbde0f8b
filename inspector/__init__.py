"""Context Inspector, the desktop app: see exactly what a model request carried, and why.

Everything about requests, budgets, decisions and audits is asked of ``core``; this package only
shows it.

Layout (the window talks to everything; nothing else talks sideways):

- ``mainwindow.py``: the window. It lays out panes and docks, holds the one selection state
  (``select_row``, ``select_item``, ``refresh_view``) and connects panes to controllers.
  ``menus.py``: its actions and menus. ``help.py``: the About box. ``app.py``: the command line.
- ``panes/``: one widget per thing a person looks at (requests list, budget bar, section tree,
  detail tabs, import bar, replay panel and its what-if chart, message bar, status line). A pane
  shows what the window gives it (``show_row``, ``show_result``...) and reports what the person
  picked through its own signals; it never imports another pane it does not contain, a controller
  or the window.
- ``models/``: Qt models and delegates, thin adapters over rows and core results. Every model is
  checked with Qt's model tester (``qtmodeltester``) in tests/gui.
- ``controllers/``: what the window asks of core and the workers (opening files, the counter,
  imported requests, the replay). Each owns its state and calls back into the window.
- ``workers/``: QThreads, background jobs and worker processes (a large JSONL's rows, replays:
  ``readpool``); results come back through queued signals.
- ``document/``: Qt-free: the rows of the list, an item's content, imported rows, replay targets.
- ``files/``: settings, recent files, saving and exporting (never over an open file).

Adding a pane (sessions, experiments, sweep...): put the widget in ``panes/<name>.py`` and its Qt
model, if any, in ``models/<name>.py`` (with a ``qtmodeltester`` test); put the code that asks core
for its data in ``controllers/<name>.py`` (slow work in a ``workers/`` job). In ``MainWindow``:
create the pane in ``_build_panes`` (a dock via ``self._dock(...)`` or a tab), connect its signals
to window methods in ``_connect``, and add its toggle or actions in ``menus.py``. A new column of
the requests list goes in ``models/requestlist.py`` (``COLUMNS`` and ``_display``/``_sort_value``).
"""
from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError, version

APP_NAME = "Context Inspector"
DIST_NAME = "context-inspector"

# Messages reach the person in the window; stderr only when the app configures logging (``app.main``).
logging.getLogger("inspector").addHandler(logging.NullHandler())


def app_version() -> str:
    """The installed distribution's version (what ``--version`` and the About box print)."""
    try:
        return version(DIST_NAME)
    except PackageNotFoundError:
        return "unknown (not installed)"
