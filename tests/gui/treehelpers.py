"""Reading the section tree the way a person reads it: (section, item id) -> what the row shows."""
from __future__ import annotations

from inspector.models import DECISION_ROLE, ITEM_ID_ROLE, SECTION_ROLE, SectionTreeModel


def tree_items(window) -> dict:
    """(section, item id) -> the item's index in the window's tree model."""
    model = window.tree_model
    out = {}
    for s in range(model.rowCount()):
        parent = model.index(s, 0)
        for r in range(model.rowCount(parent)):
            index = model.index(r, 0, parent)
            out[(index.data(SECTION_ROLE), index.data(ITEM_ID_ROLE))] = index
    return out


def tree_decisions(window) -> dict[tuple[str, str], tuple[str, int]]:
    """(section, item id) -> (decision, marginal tokens) as the tree shows them."""
    model = window.tree_model
    return {key: (index.data(DECISION_ROLE),
                  int(model.index(index.row(), SectionTreeModel.C_TOKENS, index.parent()).data()))
            for key, index in tree_items(window).items()}
