"""The hash of a span of plan messages (a summary's ``span_hash``, recorded in traces and the key a recorded
summariser replays by) is the SHA-256 of the messages' JSON dump without ``pinned``: written directly for messages
without tool calls, it must stay byte for byte what pydantic's dump gives."""
from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.contracts import ToolCall
from core.plans.model import Message
from core.plans.summaries import _dumped, _span_hash

TEXT = st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["", "é\u0301", "\ud800", "a\nb", "\"q\""]))
# a tool call's argument values: JSON's own (dumped as they are, directly) and what JSON mode converts (a tuple, a set,
# an infinite float, an int subclass, bytes, a non-string key): pydantic's dump for those
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4),
                   st.sampled_from([(1, 2), frozenset({3}), b"raw", float("inf"), float("nan")]))
ARGUMENT = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3),
    st.dictionaries(st.integers(0, 3), inner, max_size=2)), max_leaves=8)
MESSAGES = st.builds(
    Message, role=st.sampled_from(["system", "user", "assistant", "tool"]), content=TEXT,
    id=st.one_of(st.none(), st.text(max_size=8)), pinned=st.booleans(),
    tool_calls=st.one_of(st.just([]), st.lists(st.builds(ToolCall, id=st.text(min_size=1, max_size=6),
                                                          name=st.sampled_from(["f", "g"]),
                                                          arguments=st.dictionaries(st.text(max_size=3),
                                                                                    ARGUMENT, max_size=3),
                                                          raw_arguments=st.none() | st.text(max_size=4)),
                                               max_size=2)),
    tool_call_id=st.one_of(st.none(), st.text(max_size=6)),
    score=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-3, 3)),
    source=st.one_of(st.none(), st.text(max_size=6)))


@given(st.lists(MESSAGES, max_size=6))
@settings(max_examples=300, deadline=None)
def test_the_span_hash_is_pydantics_dump_hashed(span):
    for m in span:
        assert _dumped(m) == m.model_dump(mode="json", exclude={"pinned"})
    canonical = json.dumps([m.model_dump(mode="json", exclude={"pinned"}) for m in span], sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    assert _span_hash(span) == hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def test_values_copied_in_without_validation_are_dumped_as_pydantic_dumps_them():
    """Found in review: a score copied in as ``1`` or ``True`` (``model_copy(update=...)`` does not validate) is
    written ``1.0`` by pydantic's JSON dump; the direct dump wrote ``1``, and the span's hash changed."""
    for score in (1, True, 0):
        m = Message(role="user", content="hi", score=0.5).model_copy(update={"score": score})
        expected = m.model_dump(mode="json", exclude={"pinned"})
        assert json.dumps(_dumped(m), sort_keys=True) == json.dumps(expected, sort_keys=True)


def test_a_known_span_keeps_its_hash():
    """A hash recorded by an earlier version (a trace's summary) is found again."""
    span = [Message(role="user", content="Where is the disk?", id="u1"),
            Message(role="assistant", content="On node 3.", id="a1", pinned=True, score=0.5, source="notes")]
    assert _span_hash(span) == hashlib.sha256(json.dumps(
        [{"role": "user", "content": "Where is the disk?", "id": "u1", "tool_calls": [], "tool_call_id": None,
          "score": None, "source": None},
         {"role": "assistant", "content": "On node 3.", "id": "a1", "tool_calls": [], "tool_call_id": None,
          "score": 0.5, "source": "notes"}], sort_keys=True, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")).hexdigest()


def test_a_lone_surrogate_in_a_folded_message_is_assembled():
    """Found while writing the test above: a message holding a lone surrogate made pin-and-fold (and a summary) raise
    ``UnicodeEncodeError`` from the span's hash. Now it is assembled, by the default as by the reference."""
    from core import ContextAssembler, ContextPlan, SectionPlan, make_counter

    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction="pin-and-fold")),
                       budget_tokens=40)
    data = {"system": [Message(role="system", content="Be brief.")],
            "recent": [Message(role="user", content="x \ud800 " * 30, id=f"m{i}") for i in range(5)]}
    counter = make_counter()
    fast = ContextAssembler(plan, counter).assemble(data)
    slow = ContextAssembler(plan, counter, reference=True).assemble(data)
    assert fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json()
    assert any(e.decision == "dropped" for e in fast.trace)


def test_a_tool_call_id_with_a_lone_surrogate_maps_to_a_mistral_id():
    """The same kind of input: a plan's tool call id holding a lone surrogate made the mistral: counter raise
    ``UnicodeEncodeError`` while mapping it to mistral-common's nine characters."""
    from core.counting import mistral_tool_call_id

    mapped = mistral_tool_call_id("call_\ud800")
    assert len(mapped) == 9 and mapped.isalnum() and mapped != mistral_tool_call_id("call_\ud801")
