"""How the window writes a token figure everywhere (the bar and its axes, the tree, the item pane, the list, the
status line): ``1,234``, and a difference ``+1,234`` / ``-1,234``."""
from __future__ import annotations

from typing import Any


def figure(value: Any) -> str:
    """``1,234``; anything that is not a whole number as it is."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def signed(value: Any) -> str:
    """``+1,234`` or ``-1,234`` (``+0``); anything that is not a whole number as it is."""
    return f"{value:+,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
