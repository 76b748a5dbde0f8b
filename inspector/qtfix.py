"""A guard against a reference-counting bug of PySide6 6.12 on CPython 3.11.

There, every call of a Qt method that returns nothing (``QLabel.setText``, ``QWidget.setVisible``...)
gives back a reference to ``None`` it never took, and some calls from Qt into Python code do the same
with ``True``. CPython 3.12 made these singletons immortal, so only 3.11 is hit: after some tens of
thousands of such calls a count reaches zero and the interpreter aborts ("Fatal Python error:
none_dealloc" / "bool_dealloc"), a crash a person would meet after a while of clicking.

The guard measures the leak on a harmless call and, only when it is there, adds a very large number
of references to ``None``, ``True`` and ``False`` (what CPython 3.12's immortality amounts to), so
their counts never reach zero. On a fixed PySide6 or a newer Python it does nothing.
"""
from __future__ import annotations

import ctypes
import sys

HEADROOM = 1 << 40  # references added to None: more void calls than a session could ever make

_guarded = False


def none_leaks_per_call() -> int:
    """References to ``None`` one void Qt call loses (0 on an unaffected build)."""
    from PySide6.QtCore import QObject

    probe = QObject()
    probe.setObjectName("probe")  # warm up: the first call may create cached objects
    before = sys.getrefcount(None)
    for _ in range(16):
        probe.setObjectName("probe")
    return max(0, (before - sys.getrefcount(None)) // 16)


def guard_none_refcount() -> bool:
    """Keep ``None``, ``True`` and ``False`` alive despite the leak; returns whether the guard was needed (once per process)."""
    global _guarded
    if _guarded or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return _guarded
    if none_leaks_per_call() == 0:
        return False
    for singleton in (None, True, False):
        refcount = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt: the first field of every object
        refcount.value += HEADROOM
    _guarded = True
    return True
