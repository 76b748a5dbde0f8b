"""The sandbox's attribute lookup for chat templates, with its verdicts remembered.

transformers renders a chat template in jinja2's ``ImmutableSandboxedEnvironment``. Every ``x.y`` the
template evaluates goes through the environment's ``getattr``: it takes the attribute, turns a string's
``format`` / ``format_map`` into a sandboxed one, and asks ``is_safe_attribute(obj, name, value)``: a
name with a leading underscore, an internal attribute of a function, method, type, code object, frame,
generator or coroutine, or a method that changes a list, dict, set or deque is refused. Asking costs a
dozen ``isinstance`` checks a lookup, and a template that keeps its state in a ``namespace()`` (Gemma 4's
does) makes tens of thousands of lookups a render: nine tenths of its render time was these checks
(349 of 382 ms of a complete count of 100 tool-call turns).

The verdict depends on the object's type and the name only (``value`` is not looked at by either
environment's ``is_safe_attribute``; every check is an ``isinstance`` of the object against fixed types
and ABCs), so for objects of the plain types a template is given and makes (``PLAIN_TYPES``, and the
``namespace()`` class transformers gives each template) it is remembered per (type, name), and a lookup whose verdict is "safe" returns the attribute at once. Its
``format`` / ``format_map`` methods still go the stock way (wrapped), as does every lookup of another type,
every refused one and every missing one (the stock way makes the same ``Undefined`` it made). A ``dict``'s
key read as ``x.key`` (the template's messages and tools are dicts) is the stock lookup's own fallback
(``getattr`` fails, then ``x[key]``), taken first where ``key`` is no attribute of ``dict``. Where the
environment is not one of these two classes with their own ``getattr``, ``is_safe_attribute`` and
``wrap_str_format`` (another jinja2, a subclass), ``fast_getattr`` returns ``None`` and the stock lookup
stays.
"""
from __future__ import annotations

import types
from typing import Any, Callable

_DICT_NAMES = frozenset(dir(dict))
_FORMATS = ("format", "format_map")
_METHODS = (types.MethodType, types.BuiltinMethodType)


def _plain_types() -> tuple[type, ...]:
    plain: list[type] = [str, dict, list, tuple, int, float, bool, type(None)]
    try:
        from jinja2.runtime import LoopContext
        from jinja2.utils import Cycler, Joiner, Namespace

        plain += [Namespace, LoopContext, Cycler, Joiner]
    except ImportError:  # pragma: no cover - another jinja2: its plain types only
        pass
    return tuple(plain)


PLAIN_TYPES = frozenset(_plain_types())


def _plain(kind: type) -> bool:
    """One of ``PLAIN_TYPES``, or a namespace class of jinja2's that looks its attributes up as jinja2's does
    (transformers compiles every template with a ``TemplateNamespace`` of its own that refuses names with a
    leading underscore when they are set)."""
    if kind in PLAIN_TYPES:
        return True
    try:
        from jinja2.utils import Namespace
    except ImportError:  # pragma: no cover
        return False
    return (issubclass(kind, Namespace) and kind.__getattribute__ is Namespace.__getattribute__
            and "__class__" not in vars(kind))


def _stock(environment) -> bool:
    """Whether ``environment`` looks attributes up as jinja2's sandboxes do (the verdicts then depend on type and
    name only)."""
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment
    except ImportError:  # pragma: no cover
        return False
    kind = type(environment)
    return (kind in (ImmutableSandboxedEnvironment, SandboxedEnvironment)
            and kind.getattr is SandboxedEnvironment.getattr
            and kind.wrap_str_format is SandboxedEnvironment.wrap_str_format
            and kind.is_safe_attribute in (ImmutableSandboxedEnvironment.is_safe_attribute,
                                           SandboxedEnvironment.is_safe_attribute)
            and "is_safe_attribute" not in vars(environment) and "wrap_str_format" not in vars(environment))


CHECK_EVERY = 64  # lookups between two calls of ``check`` (a lookup takes about a microsecond)


def fast_getattr(environment, stock: Callable[[Any, str], Any],
                 check: Callable[[], None]) -> Callable[[Any, str], Any] | None:
    """``stock`` (the environment's own ``getattr``) with its verdicts remembered for ``PLAIN_TYPES``, calling
    ``check`` (the render's deadline) every ``CHECK_EVERY`` lookups; ``None`` where ``environment`` is not a stock
    sandbox."""
    if not _stock(environment):
        return None
    is_safe = environment.is_safe_attribute
    verdicts: dict[tuple[type, str], bool] = {}
    plain: dict[type, bool] = {}
    left = [CHECK_EVERY]

    def lookup(obj: Any, attribute: str) -> Any:
        left[0] -= 1
        if left[0] <= 0:
            left[0] = CHECK_EVERY
            check()
        if attribute.__class__ is not str:  # (the ``attr`` filter's name may be anything: the stock way)
            return stock(obj, attribute)
        kind = type(obj)
        if kind is dict and attribute not in _DICT_NAMES:  # the stock lookup's fallback: ``obj[attribute]``
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return stock(obj, attribute)
        safe = verdicts.get((kind, attribute))
        if safe is None:
            known = plain.get(kind)
            if known is None:
                known = plain[kind] = _plain(kind)
            if not known:
                return stock(obj, attribute)
            safe = verdicts[(kind, attribute)] = bool(is_safe(obj, attribute, None))
        if not safe:
            return stock(obj, attribute)  # the unsafe-attribute ``Undefined``, as the sandbox makes it
        try:
            value = getattr(obj, attribute)
        except AttributeError:
            return stock(obj, attribute)
        if type(value) in _METHODS and getattr(value, "__name__", None) in _FORMATS:
            return stock(obj, attribute)  # a string's ``format``: the sandbox wraps it
        return value

    return lookup
