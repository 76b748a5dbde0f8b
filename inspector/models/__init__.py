"""Qt models and delegates: thin adapters over the loaded rows and core results (napari's ``_qt`` habit).

Every model here is checked with Qt's model tester (``qtmodeltester`` in tests/gui/test_models.py).
"""
from .delegates import DecisionDelegate
from .findings import FindingsModel
from .requestlist import RequestListModel
from .requestproxy import RequestFilterProxy
from .roles import CHANGE_ROLE, DECISION_ROLE, ITEM_ID_ROLE, ROW_ROLE, SECTION_ROLE, SORT_ROLE, TOKENS_ROLE
from .sectiontree import ChangeFilterProxy, SectionTreeModel, change_text, sent_delta, source_text

__all__ = ["CHANGE_ROLE", "ChangeFilterProxy", "DECISION_ROLE", "DecisionDelegate", "FindingsModel", "ITEM_ID_ROLE",
           "ROW_ROLE", "RequestFilterProxy", "RequestListModel", "SECTION_ROLE", "SORT_ROLE", "SectionTreeModel",
           "TOKENS_ROLE", "change_text", "sent_delta", "source_text"]
