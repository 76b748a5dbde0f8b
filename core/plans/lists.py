"""How one list a strategy asks about differs from the one before (where they part and meet again), and a chain
walk's state as distances back (so it holds in a list the entries moved in)."""
from __future__ import annotations

import operator
from itertools import islice
from typing import Any


def _where_lists_part(old: list[Any], new: list[Any]) -> tuple[int, int, int] | None:
    """Where ``new`` differs from ``old`` by one change in one place (entries dropped, added or replaced
    there; the same objects before and after it): the first index that differs, ``len(old) - len(new)``
    and the index in ``new`` from which the two hold the same objects again (the same list: ``(len, 0, len)``).
    ``None`` for any other change."""
    step, p = 1, 0
    limit = min(len(old), len(new))
    while p < limit and old[p] is new[p]:  # gallop over the common start: strategies change the front
        span = min(step, limit - p)
        if all(map(operator.is_, old[p:p + span], new[p:p + span])):
            p += span
            step *= 2
        else:
            step = 1
            p += 1
    d = len(old) - len(new)
    if p == len(old) == len(new):  # the same list
        return p, 0, p
    rejoin = p + max(-d, 0) if d else p + 1
    # the rest, compared in place (both have len(new) - rejoin entries from there)
    if rejoin > len(new) or not all(map(operator.is_, islice(new, rejoin, None), islice(old, rejoin + d, None))):
        return None
    return p, d, rejoin


def _back(state: tuple, n: int) -> tuple:
    """A walk's state before position ``n`` with its run starts as distances back from ``n`` (so a state
    taken over from a list the entries moved in still holds)."""
    previous, text, trail, last, previous_user = state
    return (previous, text, None if trail is None else n - trail, None if last is None else n - last, previous_user)


def _at(state: tuple, n: int) -> tuple:
    """``_back``'s state with its run starts as positions again."""
    previous, text, trail, last, previous_user = state
    return (previous, text, None if trail is None else n - trail, None if last is None else n - last, previous_user)


def _same_run(distance: int | None, start: int | None, n: int, rejoined: int) -> bool:
    """Whether a run start (a position in this list, before position ``n``) is the one the last list's
    state had (``distance`` back), among the entries both lists share from where they meet again (a start
    before that spans the change)."""
    if distance is None or start is None:
        return distance is None and start is None
    return start >= rejoined and distance == n - start


def _same_context(a: tuple, b: tuple) -> bool:
    """Whether two chain contexts are the same committed prompt around the section (by identity)."""
    for x, y in zip(a[:-1], b[:-1]):
        if isinstance(x, list):
            if len(x) != len(y) or not all(map(operator.is_, x, y)):
                return False
        elif not (x is y or (isinstance(x, (str, bool, tuple)) and x == y)):
            return False
    return True
