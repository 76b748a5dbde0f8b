"""The requests list's filter and sort (an index array over precomputed list values): the order and the
rows shown are what a stable sort and the filter rules give, the selected row stays selected through
sorts, filters, rows read in place, rows added and removed, and the proxy passes Qt's model tester
through all of it."""
from __future__ import annotations

import copy
import random

from PySide6.QtCore import QItemSelectionModel, Qt

import core
from inspector.document import pending_row, read_pending, rows_from_entry
from inspector.document.listing import STATUS_ORDER
from inspector.models import ROW_ROLE, SORT_ROLE, RequestFilterProxy, RequestListModel

COLUMNS = range(len(RequestListModel.COLUMNS))


def _rows(fixtures_dir, counter, copies: int = 6):
    base = []
    for name in ("recorded.results.jsonl", "rag_overflow.rejected.json", "demo.request.json"):
        for entry in core.load_entries(fixtures_dir / name):
            base.extend(rows_from_entry(entry, str(fixtures_dir / name), counter, with_baseline=True))
    rows = []
    rng = random.Random(15)
    for n in range(copies * len(base)):
        row = copy.copy(base[n % len(base)])
        row.__dict__.pop("_listing", None)
        row.label = f"{row.label}-{rng.randint(0, 40)}"  # ties, to see the sort is stable
        rows.append(row)
    return rows


def _listed(tmp_path, fixtures_dir, copies: int | None, at_least: int = 0):
    """The recorded results written ``copies`` times (or enough times for ``at_least`` lines) into one JSONL,
    indexed: its path, index, pending rows, and an empty list model behind a filter proxy."""
    path = tmp_path / "many.results.jsonl"
    lines = (fixtures_dir / "recorded.results.jsonl").read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines * (copies or at_least // len(lines) + 1)) + "\n", encoding="utf-8")
    index = core.index_jsonl(path)
    pending = [pending_row(str(path), index, s) for s in index.rows]
    model = RequestListModel()
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    return path, index, pending, model, proxy


def _shown(proxy) -> list:
    return [proxy.index(r, 0).data(ROW_ROLE) for r in range(proxy.rowCount())]


def _expected_order(rows, column, descending):
    model = RequestListModel()
    model.append_rows(rows)
    keys = [model.index(i, column).data(SORT_ROLE) for i in range(len(rows))]
    order = sorted(range(len(rows)), key=keys.__getitem__, reverse=descending)
    return [rows[i] for i in order]


def test_every_column_sorts_both_ways_stably_as_its_keys_say(qtmodeltester, fixtures_dir, counter):
    rows = _rows(fixtures_dir, counter)
    model = RequestListModel()
    model.append_rows(rows)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)
    both = (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder)
    for orders in (both, both[::-1], both):  # each direction first, then both again (kept)
        for column in COLUMNS:
            for order in orders:
                proxy.sort(column, order)
                descending = order == Qt.SortOrder.DescendingOrder
                assert _shown(proxy) == _expected_order(rows, column, descending), RequestListModel.COLUMNS[column]
        proxy.sort(-1)
        assert _shown(proxy) == rows  # file order again
        if orders is both[::-1]:  # rows added: the orders worked out before are not used again
            more = _rows(fixtures_dir, counter, copies=2)
            model.append_rows(more)
            rows = rows + more
    qtmodeltester.check(proxy)


def test_the_tokens_and_audit_columns_sort_as_a_person_reads_them(fixtures_dir, counter):
    rows = _rows(fixtures_dir, counter, copies=1)
    model = RequestListModel()
    model.append_rows(rows)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(RequestListModel.C_TOKENS, Qt.SortOrder.DescendingOrder)
    tokens = [r.input_tokens if r.input_tokens is not None else -1 for r in _shown(proxy)]
    assert tokens == sorted(tokens, reverse=True)
    proxy.sort(RequestListModel.C_AUDIT, Qt.SortOrder.AscendingOrder)
    statuses = [STATUS_ORDER[r.status] for r in _shown(proxy)]
    assert statuses == sorted(statuses)  # unreadable and rejected first, then errors, warnings, clean


def test_filters_combine_and_follow_the_rows(fixtures_dir, counter):
    rows = _rows(fixtures_dir, counter)
    model = RequestListModel()
    model.append_rows(rows)
    proxy = RequestFilterProxy()
    proxy.setSourceModel(model)
    proxy.sort(RequestListModel.C_TOKENS, Qt.SortOrder.AscendingOrder)
    proxy.set_text("  RAG-T ")
    assert set(map(id, _shown(proxy))) == {id(r) for r in rows if "rag-t" in r.label.lower()}
    proxy.set_has_drops(True)
    assert set(map(id, _shown(proxy))) == {id(r) for r in rows if "rag-t" in r.label.lower() and r.dropped_count}
    proxy.set_text("")
    proxy.set_audit_errors(True)
    assert set(map(id, _shown(proxy))) == {id(r) for r in rows if r.dropped_count
                                          and r.status in ("error", "rejected", "invalid")}
    shown = _shown(proxy)
    tokens = [r.input_tokens if r.input_tokens is not None else -1 for r in shown]
    assert tokens == sorted(tokens)  # still sorted under the filter


def test_a_selected_row_stays_selected_through_sorts_filters_reads_and_removals(qtmodeltester, qtbot, tmp_path,
                                                                                 fixtures_dir, counter):
    from PySide6.QtWidgets import QTableView

    path, index, pending, model, proxy = _listed(tmp_path, fixtures_dir, 3)
    qtmodeltester.check(proxy)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(proxy)
    proxy.sort(RequestListModel.C_TOKENS, Qt.SortOrder.DescendingOrder)
    model.append_rows(pending[:20])
    model.append_rows(pending[20:])  # rows arriving while sorted
    target = pending[7]
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows

    def select(row):
        number = proxy.mapFromSource(model.index(model.row_number(row), 0)).row()
        view.selectionModel().setCurrentIndex(proxy.index(number, 0), flags)

    def current():
        return view.selectionModel().currentIndex().data(ROW_ROLE)

    select(target)
    assert current() is target
    for row in pending[::2]:  # read in place: their tokens, and so their places, change
        row.absorb(read_pending(row, counter))
    model.rows_changed(pending[::2])
    qtmodeltester.check(proxy)
    assert current() is target
    tokens = [r.input_tokens if r.input_tokens is not None else -1 for r in _shown(proxy)]
    assert tokens == sorted(tokens, reverse=True)
    proxy.sort(RequestListModel.C_LABEL, Qt.SortOrder.AscendingOrder)
    proxy.set_text(target.label.lower())
    assert current() is target and all(target.label.lower() in r.label.lower() for r in _shown(proxy))
    proxy.set_text("no such request anywhere")
    assert proxy.rowCount() == 0 and current() is None
    proxy.set_text("")
    select(target)
    other = str(fixtures_dir / "demo.request.json")
    (extra,) = rows_from_entry(core.load_entries(other)[0], other, counter)
    model.insert_after(pending[0], extra)  # a row inserted before the selected one, while sorted
    assert current() is target and extra in _shown(proxy)
    model.remove_row(extra)
    model.remove_row(pending[3])
    assert current() is target and pending[3] not in _shown(proxy) and len(_shown(proxy)) == len(pending) - 1
    qtmodeltester.check(proxy)
    model.remove_source(str(path))
    assert proxy.rowCount() == 0
    qtmodeltester.check(proxy)


def test_rows_read_in_place_are_told_in_runs_a_view_repaints_only_where_it_shows_them(qtbot, tmp_path, fixtures_dir):
    """Qt's item views repaint everything they show for a change of more than 200 cells, wherever the cells
    are: rows read in place are told as runs of consecutive rows of at most 200 cells, so a chunk read far
    below the shown rows repaints nothing and one read among them repaints those rows."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QTableView

    from inspector.models.requestproxy import VIEW_CELLS, changed_runs

    assert changed_runs([5, 3, 4, 10, 11, 12, 13, 14, 30], 3) == [(3, 5), (10, 12), (13, 14), (30, 30)]
    assert changed_runs([], 20) == [] and changed_runs(list(range(41)), 20) == [(0, 19), (20, 39), (40, 40)]
    path, index, rows, model, proxy = _listed(tmp_path, fixtures_dir, None, at_least=400)
    model.append_rows(rows)
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(proxy)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    told: list[tuple[int, int]] = []
    proxy.dataChanged.connect(lambda top, bottom, *_: told.append((top.row(), bottom.row())))
    painted: list = []

    class Paints(QObject):
        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint:
                painted.append(event.rect())
            return False

    paints = Paints()
    view.viewport().installEventFilter(paints)
    qtbot.wait(20)
    painted.clear()
    far = rows[200:290]  # a chunk read far below what the view shows (900 cells)
    model.rows_changed(far)
    qtbot.wait(20)
    per_run = VIEW_CELLS // proxy.columnCount()
    assert told == [(200 + at, min(289, 200 + at + per_run - 1)) for at in range(0, 90, per_run)]
    assert painted == []
    model.rows_changed([rows[1], rows[2]])  # two shown rows: those two are repainted
    qtbot.wait(20)
    assert told[-1] == (1, 2)
    assert painted and all(rect.height() <= 2 * view.rowHeight(1) + 2 for rect in painted)  # and the grid line


def test_an_order_kept_for_another_column_is_worked_out_again_when_rows_are_read_in_place(tmp_path, fixtures_dir,
                                                                                           counter):
    """Sorted by audit, then by label (whose keys a read leaves as they were), rows read in place meanwhile: sorted
    by audit again, the rows are in their new findings' order, not the one kept from before the read."""
    _, _, pending, model, proxy = _listed(tmp_path, fixtures_dir, 3)
    model.append_rows(pending)
    for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
        proxy.sort(RequestListModel.C_AUDIT, order)
    proxy.sort(RequestListModel.C_LABEL, Qt.SortOrder.AscendingOrder)
    for row in pending[1::2]:
        row.absorb(read_pending(row, counter))
    model.rows_changed(pending[1::2])
    for order in (Qt.SortOrder.DescendingOrder, Qt.SortOrder.AscendingOrder):
        proxy.sort(RequestListModel.C_AUDIT, order)
        descending = order == Qt.SortOrder.DescendingOrder
        assert _shown(proxy) == _expected_order(pending, RequestListModel.C_AUDIT, descending)
