"""The inspector's house rules, read from its source: panes talk only through the window, and the
document layer stays Qt-free."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

INSPECTOR = Path(__file__).resolve().parent.parent / "inspector"


def imported_modules(path: Path) -> set[str]:
    """Absolute names of what ``path`` imports (relative imports resolved against its package)."""
    package = ".".join(path.relative_to(INSPECTOR.parent).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.level and node.module else (node.module if not node.level
                                                                                else base)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


PANES = sorted((INSPECTOR / "panes").glob("*.py"))


@pytest.mark.parametrize("path", PANES, ids=lambda p: p.name)
def test_a_pane_never_reaches_the_window_or_a_controller(path):
    names = imported_modules(path)
    forbidden = {n for n in names if n.startswith(("inspector.mainwindow", "inspector.controllers",
                                                   "inspector.menus"))}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}: panes talk only through the window's signals"


@pytest.mark.parametrize("path", sorted((INSPECTOR / "document").glob("*.py")), ids=lambda p: p.name)
def test_the_document_layer_is_qt_free(path):
    names = imported_modules(path)
    assert not {n for n in names if n.startswith(("PySide6", "pyqtgraph"))}, f"{path.name} imports Qt"
