"""Kept importable for older code: the counters now live in ``core.counters`` (one module per family)."""
from .counters import *  # noqa: F401,F403
from .counters import __all__  # noqa: F401
from .counters.base import literal_spans as _literal_spans  # noqa: F401
