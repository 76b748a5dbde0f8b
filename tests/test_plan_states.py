"""A chain walk's states (``core.plans.lists.States``: a list and, where a list took over the last one's tail inside a
run of user messages, that tail with its run distances moved as it is read): the same states as the plain lists the
walk used to build, for any sequence of the three things a walk does with them (take the last list's first states,
add the states it walked, take over the last list's tail with its run distances moved or not)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.plans.lists import States, _moved

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
    model, pieces = list(first), States.of(list(first))
    for p, walked, at, shift in steps:
        p, at = min(p, len(model)), min(at, len(model))
        model = model[:p] + walked + _shifted(model[at:], shift)
        pieces = pieces.head(p) + States.of(list(walked)) + pieces.tail_from(at, shift)
        assert len(pieces) == len(model)
        assert pieces.read(0, len(pieces)) == model
        assert [pieces[i] for i in range(-len(model), 0)] == model
        assert [pieces[i] for i in range(len(model))] == model
        middle = len(model) // 2
        assert pieces.read(middle, len(model)) == model[middle:] and pieces.head(middle).read(0, middle) == model[:middle]


def test_a_moved_tail_is_not_read_until_asked():
    base = [("m", "t", i, i, True) for i in range(100_000)]
    states = States.of(base)
    for k in range(1, 200):  # a strategy dropping the run's oldest entry 200 times
        states = States.of([("x", "t", None, None, False)]) + states.tail_from(2, (1, 1))
        assert states.tail[0] is base and len(states.head_list) == 1  # the long list itself, not a copy
    # after k drops, the state at j >= 1 is the long list's at j + k moved k times: distance j + 2k
    assert len(states) == 100_000 - 199 and states[1] == ("m", "t", 1 + 2 * 199, 1 + 2 * 199, True)
    assert states[0] == ("x", "t", None, None, False)
