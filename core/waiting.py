"""Waiting on a slow call (a model endpoint) while a cancel can still interrupt the wait at once."""
from __future__ import annotations

import threading
from typing import Any, Callable

from .errors import AssemblyCancelled


def call_cancellable(call: Callable[[], Any], cancel: threading.Event | None, cancelled_message: str,
                     *, name: str = "model-call") -> Any:
    """``call()`` on a daemon thread; its value, or its exception re-raised; ``AssemblyCancelled``
    as soon as ``cancel`` is set (the call's thread is left to finish on its own)."""
    if cancel is None:
        return call()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the waiting thread below
            outcome["error"] = exc

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        if cancel.is_set():
            raise AssemblyCancelled(cancelled_message)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
