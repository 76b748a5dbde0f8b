"""How one list a strategy asks about differs from the one before (where they part and meet again), and a chain
walk's state as distances back (so it holds in a list the entries moved in)."""
from __future__ import annotations

import operator
from typing import Any


def _where_lists_part(old: list[Any], new: list[Any], equal_will_do: bool = False) -> tuple[int, int, int] | None:
    """Where ``new`` differs from ``old`` by one change in one place (entries dropped, added or replaced
    there; the same objects before and after it): the first index that differs, ``len(old) - len(new)``
    and the index in ``new`` from which the two hold the same objects again (the same list: ``(len, 0, len)``).
    ``None`` for any other change. The very objects, not equal ones: two tool calls whose arguments compare
    equal (``1``, ``1.0`` and ``True``; keys in another order) are written otherwise. ``equal_will_do``: equal
    objects will do (a caller whose ``old`` holds no tool calls: an object equal to one of them is written as it
    is), and the lists are compared at the speed of ``==`` (which takes the very object as equal at once)."""
    def same(a: list[Any], b: list[Any]) -> bool:
        return a == b if equal_will_do else all(map(operator.is_, a, b))

    step, p = 1, 0
    limit = min(len(old), len(new))
    while p < limit and old[p] is new[p]:  # gallop over the common start: strategies change the front
        span = min(step, limit - p)
        if same(old[p:p + span], new[p:p + span]):
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
    if rejoin > len(new) or not same(new[rejoin:] if rejoin else new, old[rejoin + d:] if rejoin + d else old):
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


_STILL = (0, 0)  # a shift that moves nothing
_SMALL = 256  # neighbouring pieces that move nothing and hold no more than this together are read into one list
_MOST_PIECES = 24  # more pieces than this are read into one list


class Pieces:
    """A list held as pieces of other lists, ``(items, start, stop, shift)``: a chain walk's costs, and the states it
    had before each entry (``_back``'s), each state's run distances moved by its piece's ``shift`` as it is read. A
    list that takes over part of the last one's (its states' run distances moved where the entries moved inside a
    run of user messages that lasts to the end of both) holds pieces of the last one's, so a strategy that drops
    entries one at a time from the front of a long section, or adds them there, asks each question without a pass
    over the section. Pieces of about one size are read into one list as they meet, so a list holds a few pieces
    (about the logarithm of its length) and each item is read into a new list a few times at most over the
    questions. Never changed once made."""

    __slots__ = ("pieces", "size")

    def __init__(self, pieces: list[tuple[list, int, int, tuple[int, int]]], size: int) -> None:
        """``pieces`` (none empty) holding ``size`` items, as they are (``__add__`` joins them)."""
        self.pieces, self.size = pieces, size

    @classmethod
    def of(cls, items: list) -> Pieces:
        return cls([(items, 0, len(items), _STILL)] if items else [], len(items))

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple:
        if i < 0:
            i += self.size
        if not 0 <= i < self.size:
            raise IndexError(i)
        for seq, start, stop, shift in self.pieces:
            if i < stop - start:
                state = seq[start + i]
                return state if shift == _STILL else _moved(state, shift)
            i -= stop - start
        raise IndexError(i)  # (not reached: the size says so)

    def read(self, start: int, stop: int) -> list:
        """The items from ``start`` to ``stop`` as a list (each clamped to the list, as positions: no index from the
        end)."""
        start, stop = max(start, 0), min(stop, self.size)
        if start >= stop:
            return []
        if len(self.pieces) == 1 and self.pieces[0][3] == _STILL:  # (the usual case: one list, as it is)
            seq, first, _, _ = self.pieces[0]
            return seq[first + start:first + stop]
        return _read(self._cut(start, stop))[0]

    def total(self, start: int, stop: int) -> int:
        """``sum(self.read(start, stop))`` of a list of numbers (a chain walk's costs: no shift applies), without the
        list read: each piece's stretch summed where it lies."""
        start, stop = max(start, 0), min(stop, self.size)
        out, at = 0, 0
        for seq, first, last, _ in self.pieces:
            size = last - first
            lo, hi = max(start - at, 0), min(stop - at, size)
            if lo < hi:
                out += sum(seq[first + lo:first + hi]) if hi - lo < size else sum(seq[first:last])
            at += size
            if at >= stop:
                break
        return out

    def _cut(self, start: int, stop: int) -> list[tuple[list, int, int, tuple[int, int]]]:
        """The pieces of the items from ``start`` to ``stop`` (none empty)."""
        if len(self.pieces) == 1:
            seq, first, last, shift = self.pieces[0]
            lo, hi = first + max(start, 0), first + min(stop, last - first)
            return [(seq, lo, hi, shift)] if lo < hi else []
        out, at = [], 0
        for seq, first, last, shift in self.pieces:
            size = last - first
            lo, hi = max(start - at, 0), min(stop - at, size)
            if lo < hi:
                out.append((seq, first + lo, first + hi, shift))
            at += size
            if at >= stop:
                break
        return out

    def head(self, p: int) -> Pieces:
        """The first ``p`` items."""
        p = max(0, min(p, self.size))
        return self if p == self.size else Pieces(self._cut(0, p), p) if p else _NONE

    def tail_from(self, i: int, shift: tuple[int, int] | None = None) -> Pieces:
        """The items from ``i`` on, the states' run distances moved by ``shift`` as well."""
        i = max(0, min(i, self.size))
        pieces = self.pieces if i == 0 else self._cut(i, self.size)
        if shift is not None and shift != _STILL:
            pieces = [(seq, first, last, (was[0] + shift[0], was[1] + shift[1])) for seq, first, last, was in pieces]
        return Pieces(pieces, self.size - i)

    def __add__(self, other: Pieces) -> Pieces:
        """This list, then ``other``."""
        if not other.size:
            return self
        if not self.size:
            return other
        return Pieces(_joined(self.pieces + other.pieces), self.size + other.size)


_NONE = Pieces([], 0)


def _joined(pieces: list[tuple[list, int, int, tuple[int, int]]]) -> list[tuple[list, int, int, tuple[int, int]]]:
    """``pieces`` with neighbours that continue one another made one, and neighbours of about one size (neither more
    than twice the other) read into one list: a list that grows by a few states at a time then holds a few pieces,
    as a binary counter holds a few ones, and a state is read into a new list about once per doubling."""
    if len(pieces) < 2:
        return pieces
    out: list[tuple[list, int, int, tuple[int, int]]] = []
    for piece in pieces:
        while out:
            a = out[-1]
            if a[0] is piece[0] and a[2] == piece[1] and a[3] == piece[3]:  # one piece, cut in two
                piece = (a[0], a[1], piece[2], a[3])
            else:
                size_a, size_b = a[2] - a[1], piece[2] - piece[1]
                if (size_a > 2 * size_b or size_b > 2 * size_a) and not (
                        size_a + size_b <= _SMALL and a[3] == piece[3] == _STILL):  # (a short copy, at C speed)
                    break
                piece = _read([a, piece])
            out.pop()
        out.append(piece)
    if len(out) > _MOST_PIECES:
        out = [_read(out)]
    return out


def _read(pieces: list[tuple[list, int, int, tuple[int, int]]]) -> tuple[list, int, int, tuple[int, int]]:
    """``pieces`` read into one new list, as one piece."""
    states: list[tuple] = []
    for seq, first, last, shift in pieces:
        states += seq[first:last] if shift == _STILL else [_moved(x, shift) for x in seq[first:last]]
    return states, 0, len(states), _STILL
