"""What the inspector has loaded, Qt-free: the rows of the requests list, an item's content, the imported
provider requests and the replay of a row. Built from core results only; the panes and models show them.
"""
from .building import (audit_result, entry_label, entry_place, invalid_row, pending_row, read_pending,
                       rows_from_entry, unreadable_line)
from .content import ItemContent, find_entry, item_content, receipt_fields, section_summary
from .row import Row, rejection_text

__all__ = ["ItemContent", "Row", "audit_result", "entry_label", "entry_place", "find_entry", "invalid_row",
           "item_content", "pending_row", "read_pending", "receipt_fields", "rejection_text", "rows_from_entry",
           "section_summary", "unreadable_line"]
