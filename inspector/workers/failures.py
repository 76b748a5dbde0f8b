"""What a background job tells the person when it fails: never a traceback (the one rule every worker
thread follows, written once here)."""
from __future__ import annotations

import logging

import core

log = logging.getLogger("inspector")


def failure_text(exc: BaseException, told: str | None, doing: str, *args: object,
                 known: type[BaseException] = core.ContextInspectorError) -> str:
    """The one line the person is shown for ``exc``: the core's own message for a ``known`` error (it names
    the problem and the place); anything else is a bug: logged with its traceback (``doing % args``, as
    ``logging`` formats it) and told as ``told (Type: message)``, or ``Type: message`` when ``told`` is None."""
    if isinstance(exc, known):
        return str(exc)
    log.error(doing, *args, exc_info=exc)
    what = f"{type(exc).__name__}: {exc}"
    return what if told is None else f"{told} ({what})"
