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
    """The states a chain walk had before each entry (``_back``'s): a list, then, where a list took over the last
    one's tail inside a run of user messages that lasts to the end of both, that tail as a piece of the list it was
    walked in, ``(states, start, shift)``, its run distances moved by ``shift`` as it is read. A strategy that drops
    entries one at a time from the front of a long run then asks each question without a pass of Python over the
    run (the states before it are plain lists, joined as lists join). Never changed once made."""

    __slots__ = ("head_list", "tail", "size")

    def __init__(self, head_list: list[tuple], tail: tuple[list, int, tuple[int, int]] | None = None) -> None:
        self.head_list = head_list
        self.tail = tail if tail is not None and tail[1] < len(tail[0]) else None
        self.size = len(head_list) + (len(tail[0]) - tail[1] if self.tail is not None else 0)

    @classmethod
    def of(cls, states: list[tuple]) -> States:
        return cls(states)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple:
        if i < 0:
            i += self.size
        if not 0 <= i < self.size:
            raise IndexError(i)
        if i < len(self.head_list):
            return self.head_list[i]
        seq, start, shift = self.tail
        return _moved(seq[start + i - len(self.head_list)], shift)

    def read(self, start: int, stop: int) -> list[tuple]:
        """The states from ``start`` to ``stop`` as a list."""
        n = len(self.head_list)
        out = self.head_list[start:min(stop, n)]
        if stop > n and self.tail is not None:
            seq, first, shift = self.tail
            out += [_moved(x, shift) for x in seq[first + max(start - n, 0):first + stop - n]]
        return out

    def head(self, p: int) -> States:
        """The first ``p`` states."""
        return States(self.read(0, p) if p > len(self.head_list) else self.head_list[:p])

    def tail_from(self, i: int, shift: tuple[int, int] | None = None) -> States:
        """The states from ``i`` on, their run distances moved by ``shift`` as well."""
        n = len(self.head_list)
        tail = self.tail
        if shift is None:  # as they are: the list's part as a list, the moved tail as it was
            if i >= n and tail is not None:
                return States([], (tail[0], tail[1] + i - n, tail[2]))
            return States(self.head_list[i:], tail)
        if tail is None:  # the list itself becomes the moved tail
            return States([], (self.head_list, i, shift)) if i < n else States([])
        moved = (tail[2][0] + shift[0], tail[2][1] + shift[1])
        if i >= n:
            return States([], (tail[0], tail[1] + i - n, moved))
        return States([_moved(x, shift) for x in self.head_list[i:]], (tail[0], tail[1], moved))

    def __add__(self, other: States) -> States:
        """This list, then ``other`` (``other``'s moved tail kept as it is; this one's, if any, read now)."""
        mine = self.head_list if self.tail is None else self.read(0, self.size)
        return States(mine + other.head_list, other.tail)
