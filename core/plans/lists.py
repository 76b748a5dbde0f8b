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
    ``None`` for any other change. The very objects, not equal ones: two tool calls whose arguments compare
    equal (``1``, ``1.0`` and ``True``; keys in another order) are written otherwise."""
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


def _moved(state: tuple, shift: tuple[int, int]) -> tuple:
    """A walk state (``_back``'s) with its run starts' distances moved by ``shift``."""
    previous, text, trail, last, previous_user = state
    return (previous, text, None if trail is None else trail + shift[0], None if last is None else last + shift[1],
            previous_user)


class States:
    """The states a chain walk had before each entry (``_back``'s), as pieces of the lists they were walked in:
    ``(states, start, stop, shift)``, a piece's run distances moved by ``shift`` as it is read. A list that takes
    over the last list's tail inside a run of user messages lasting to the end of both has that tail's states with
    each run start moved: a piece, not a pass over the tail, so a strategy that drops entries one at a time from
    the front of a long run asks each question in time independent of the run's length. Never changed once made."""

    __slots__ = ("pieces", "size")
    MOST_PIECES = 16  # past this many, the states are read into one list (a lookup walks the pieces)

    def __init__(self, pieces: list[tuple[list, int, int, tuple[int, int] | None]]) -> None:
        self.pieces = [p for p in pieces if p[2] > p[1]]
        self.size = sum(stop - start for _, start, stop, _ in self.pieces)
        if len(self.pieces) > self.MOST_PIECES:
            self.pieces = [(self.read(0, self.size), 0, self.size, None)]

    @classmethod
    def of(cls, states: list[tuple]) -> States:
        return cls([(states, 0, len(states), None)])

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple:
        if i < 0:
            i += self.size
        for seq, start, stop, shift in self.pieces:
            if i < stop - start:
                state = seq[start + i]
                return state if shift is None else _moved(state, shift)
            i -= stop - start
        raise IndexError(i)

    def read(self, start: int, stop: int) -> list[tuple]:
        """The states from ``start`` to ``stop`` as a list."""
        return [self[i] for i in range(start, stop)]

    def head(self, p: int) -> States:
        """The first ``p`` states."""
        pieces, left = [], p
        for seq, start, stop, shift in self.pieces:
            if left <= 0:
                break
            pieces.append((seq, start, min(stop, start + left), shift))
            left -= stop - start
        return States(pieces)

    def tail(self, i: int, shift: tuple[int, int] | None = None) -> States:
        """The states from ``i`` on, their run distances moved by ``shift`` as well."""
        pieces = []
        for seq, start, stop, moved in self.pieces:
            if i < stop - start:
                if shift is not None:
                    moved = shift if moved is None else (moved[0] + shift[0], moved[1] + shift[1])
                pieces.append((seq, start + max(i, 0), stop, moved))
            i -= stop - start
        return States(pieces)

    def __add__(self, other: States) -> States:
        return States(self.pieces + other.pieces)
