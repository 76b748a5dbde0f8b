"""A chain walk's states and costs (``core.plans.lists.Pieces``: a list held as pieces of the lists walked before, a
state's run distances moved as it is read where a list took over the last one's tail inside a run of user messages):
the same states as the plain lists the walk used to build, for any sequence of the three things a walk does with them (take the last list's first states,
add the states it walked, take over the last list's tail with its run distances moved or not)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.plans.lists import Pieces, _moved

DISTANCE = st.none() | st.integers(0, 50)
STATE = st.tuples(st.sampled_from(["a", "b"]), st.just("t"), DISTANCE, DISTANCE, st.booleans())
SHIFT = st.none() | st.tuples(st.integers(-5, 5), st.integers(-5, 5))


def _shifted(states: list[tuple], shift: tuple[int, int] | None) -> list[tuple]:
    return list(states) if shift is None else [_moved(s, shift) for s in states]


@given(first=st.lists(STATE, max_size=12),
       steps=st.lists(st.tuples(st.integers(0, 14), st.lists(STATE, max_size=4), st.integers(0, 14), SHIFT),
                      max_size=30))
@settings(max_examples=300, deadline=None)
def test_pieces_read_as_the_lists_they_stand_for(first, steps):
    model, pieces = list(first), Pieces.of(list(first))
    for p, walked, at, shift in steps:
        p, at = min(p, len(model)), min(at, len(model))
        model = model[:p] + walked + _shifted(model[at:], shift)
        pieces = pieces.head(p) + Pieces.of(list(walked)) + pieces.tail_from(at, shift)
        assert len(pieces) == len(model)
        assert pieces.read(0, len(pieces)) == model
        assert [pieces[i] for i in range(-len(model), 0)] == model
        assert [pieces[i] for i in range(len(model))] == model
        middle = len(model) // 2
        for a, b in ((-3, -1), (-2, middle), (middle, len(model) + 3), (middle, middle - 1)):  # clamped, as positions
            assert pieces.read(a, b) == model[max(a, 0):max(b, 0)]
        assert pieces.read(middle, len(model)) == model[middle:] and pieces.head(middle).read(0, middle) == model[:middle]


def test_a_moved_tail_is_not_read_until_asked():
    base = [("m", "t", i, i, True) for i in range(100_000)]
    states = Pieces.of(base)
    for k in range(1, 200):  # a strategy dropping the run's oldest entry 200 times
        states = Pieces.of([("x", "t", None, None, False)]) + states.tail_from(2, (1, 1))
        assert states.pieces[-1][0] is base and len(states.pieces) == 2  # the long list itself, not a copy
    # after k drops, the state at j >= 1 is the long list's at j + k moved k times: distance j + 2k
    assert len(states) == 100_000 - 199 and states[1] == ("m", "t", 1 + 2 * 199, 1 + 2 * 199, True)
    assert states[0] == ("x", "t", None, None, False)


def test_a_list_grown_at_the_front_keeps_few_pieces_and_moves_each_state_a_few_times(monkeypatch):
    """Newest-turns over single-message turns asks about the list with one more entry at its front each time, inside
    one run of user messages: every state of the last list is taken over with its run distances moved. Found at 2,000
    turns: the states walked first were moved again at each question (881,127 moves, a quadratic). The pieces are
    read into one list as they meet at about one size, so a state is moved about once per doubling."""
    import math

    from core.plans import lists

    moves = []
    real = lists._moved
    monkeypatch.setattr(lists, "_moved", lambda state, shift: moves.append(1) or real(state, shift))
    model: list[tuple] = []
    states = Pieces.of([])
    for k in range(2000):
        walked = [("m", "t", None, None, False)]
        model = walked + [real(s, (1, 1)) for s in model]
        states = Pieces.of(list(walked)) + states.tail_from(0, (1, 1))
        assert len(states.pieces) <= 2 * math.log2(k + 2) + 2
    assert states.read(0, len(states)) == model
    assert len(moves) < 2000 * 2 * math.log2(2000)  # the quadratic moved about 2,000,000


@given(first=st.lists(st.integers(0, 99), max_size=12),
       steps=st.lists(st.tuples(st.integers(0, 14), st.lists(st.integers(0, 99), max_size=4), st.integers(0, 14)),
                      max_size=30), bounds=st.lists(st.tuples(st.integers(-3, 40), st.integers(-3, 40)), max_size=6))
@settings(max_examples=200, deadline=None)
def test_a_total_of_costs_is_the_sum_of_what_read_gives(first, steps, bounds):
    """``Pieces.total`` (the sum of a stretch of a walk's costs, ``chains._sum_before``) is ``sum(read(...))``, clamped
    alike, for any pieces the walks make of costs."""
    model, pieces = list(first), Pieces.of(list(first))
    for p, walked, at in steps:
        p, at = min(p, len(model)), min(at, len(model))
        model = model[:p] + walked + model[at:]
        pieces = pieces.head(p) + Pieces.of(list(walked)) + pieces.tail_from(at)
        for a, b in bounds + [(0, len(model)), (0, p), (at, len(model))]:
            assert pieces.total(a, b) == sum(pieces.read(a, b)) == sum(model[max(a, 0):max(b, 0)])
