"""The Request tab's rendered text and spans (``core.render_view``: the chat template rendered and the
prompt tokenised), made off the GUI thread: in a worker process counting with the same counter when there
is one (``readpool.in_worker``), else in the job's own thread under the counter's lock."""
from __future__ import annotations

import threading
from contextlib import nullcontext

import core

from ..document.reading import rendered_view
from .counters import shared_counter_cache
from .readpool import in_worker


def render_off_the_gui(result: core.AssemblyResult, findings: list[core.Finding], counter: core.TokenCounter,
                       lock: threading.RLock | None) -> core.RenderedView:
    """What ``core.render_view`` gives (it raises what that raises); called from a background thread."""

    def here() -> core.RenderedView:
        with lock or nullcontext():
            return core.render_view(result, counter, findings=findings)

    spec = shared_counter_cache().spec_of(counter)
    return in_worker(spec, counter, rendered_view, (result, findings), fallback=here)
