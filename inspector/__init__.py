"""Context Inspector, the desktop app: see exactly what a model request carried, and why.

Everything about requests, budgets, decisions and audits is asked of ``core``; this package only
shows it.
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
