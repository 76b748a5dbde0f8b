"""Token counters, built off the GUI thread once per spec and shared (the embedded one takes most of a second)."""
from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QThread, Signal

import core

log = logging.getLogger("inspector")


class CounterCache:
    """Counters by spec, built at most once each, safe to ask from any thread.

    ``lock`` serialises use of the counters: their count cache is not thread-safe, and the GUI
    thread renders with the same counter a worker may be assembling with.
    """

    def __init__(self) -> None:
        self._build_lock = threading.Lock()
        self.lock = threading.RLock()
        self._counters: dict[str, core.TokenCounter] = {}

    @staticmethod
    def normalise(spec: str | None) -> str:
        return spec or core.DEFAULT_COUNTER

    @classmethod
    def _key(cls, spec: str | None) -> str:
        """``auto`` counts our own requests (no model) with the embedded counter: one instance serves both."""
        spec = cls.normalise(spec)
        return core.DEFAULT_COUNTER if spec == core.AUTO else spec

    @classmethod
    def built_as(cls, spec: str | None) -> str:
        """The spec the counter for ``spec`` is built from (``auto``: the embedded counter's)."""
        return cls._key(spec)

    def peek(self, spec: str | None) -> core.TokenCounter | None:
        return self._counters.get(self._key(spec))

    def get(self, spec: str | None) -> core.TokenCounter:
        """The counter for ``spec``; raises ``core.CounterError`` if it cannot be built."""
        spec = self._key(spec)
        with self._build_lock:
            counter = self._counters.get(spec)
            if counter is None:
                counter = core.make_counter(spec)
                self._counters[spec] = counter
            return counter

    def auto(self) -> core.AutoCounter:
        """The chooser for ``auto``: each imported request counted with the counter its model calls for, every
        counter built once through this cache."""
        if getattr(self, "_auto", None) is None:
            cache = self

            class _Cached(core.AutoCounter):
                def _build(self, spec: str) -> core.TokenCounter:
                    return cache.get(spec)

            self._auto = _Cached()
        return self._auto

    def spec_of(self, counter: core.TokenCounter | None) -> str | None:
        """The spec ``counter`` was built from here (a worker process builds the same one from it)."""
        with self._build_lock:
            return next((spec for spec, built in self._counters.items() if built is counter), None)

    def forget_failures(self) -> None:
        """``auto`` tries again the counters it could not build (a tokenizer was just fetched)."""
        self._auto = None

    def forget(self, spec: str | None) -> None:
        with self._build_lock:
            self._counters.pop(self._key(spec), None)


_SHARED = CounterCache()


def shared_counter_cache() -> CounterCache:
    return _SHARED


class CounterThread(QThread):
    """Builds one counter off the GUI thread."""

    built = Signal(str, object)  # spec, counter
    failed = Signal(str, str)  # spec, one-line message

    def __init__(self, cache: CounterCache, spec: str, parent=None) -> None:
        super().__init__(parent)
        self._cache = cache
        self.spec = spec

    def run(self) -> None:
        try:
            counter = self._cache.get(self.spec)
        except core.ContextInspectorError as exc:
            self.failed.emit(self.spec, str(exc))
        except Exception as exc:  # a tokenizer library failing in its own way: still one line, never a crash
            log.exception("building counter %s", self.spec)
            self.failed.emit(self.spec, f"{self.spec}: cannot build the counter ({type(exc).__name__}: {exc})")
        else:
            self.built.emit(self.spec, counter)
