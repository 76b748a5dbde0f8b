"""Which columns the requests list shows: a menu of them (the list header's right-click and View > Request List
Columns), remembered by name between runs. The request's name is always shown: it is what tells the rows apart.

At 1280x800 with the replay panel open the list has about 310 pixels for ten columns; hiding the ones a person
does not read (Format, Drift, the file) gives the others their width back.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QMenu, QTableView

from ..models import RequestListModel

ALWAYS_SHOWN = frozenset({RequestListModel.C_LABEL})


def hidden_names(view: QTableView) -> list[str]:
    """The names of the columns ``view`` hides, in column order."""
    return [name for c, name in enumerate(RequestListModel.COLUMNS) if view.isColumnHidden(c)]


def hide_named(view: QTableView, names: list[str]) -> bool:
    """Hide exactly the columns named in ``names`` (names no column has are ignored; the request's name is never
    hidden). Whether anything changed."""
    wanted = set(names)
    changed = False
    for c, name in enumerate(RequestListModel.COLUMNS):
        hide = name in wanted and c not in ALWAYS_SHOWN
        if view.isColumnHidden(c) != hide:
            view.setColumnHidden(c, hide)
            changed = True
    return changed


def fill_columns_menu(menu: QMenu, view: QTableView, changed: Callable[[], None]) -> QMenu:
    """``menu`` filled with a checkable entry per column and "Show Every Column"; ``changed()`` after a change."""
    menu.clear()
    tips = RequestListModel.TIPS

    def toggle(column: int, shown: bool) -> None:
        view.setColumnHidden(column, not shown)
        changed()

    for c, name in enumerate(RequestListModel.COLUMNS):
        action = menu.addAction(name)
        action.setCheckable(True)
        action.setChecked(not view.isColumnHidden(c))
        action.setEnabled(c not in ALWAYS_SHOWN)
        action.setToolTip(tips[c])
        action.setStatusTip(tips[c])
        action.toggled.connect(lambda shown, c=c: toggle(c, shown))
    menu.addSeparator()
    every = menu.addAction("Show Every Column")
    every.setEnabled(any(view.isColumnHidden(c) for c in range(len(RequestListModel.COLUMNS))))
    every.triggered.connect(lambda: hide_named(view, []) and changed())
    return menu
