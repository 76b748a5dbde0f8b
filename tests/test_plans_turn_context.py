"""Plans whose small prompts must carry the turn a message belongs to: Qwen3 writes the reply that
ends a prompt otherwise when a user message comes before it (an empty thinking block), so what the question adds
after an assistant reply depends on whether a user message opened that reply's turn. With a system message the
small prompts held that user message already; without one (a plan with no instructions, an imported agent
transcript) the default put the thinking block on the question instead of the template entry. Checked against
the reference on the real tokenizers of ../shared/tokenizers/hf (skipped when absent), and on the embedded
Mistral counter, whose small prompts carry no turn (``writes_by_turn``)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from real_hf import real
from support import default_counter
from test_plan_fast_counting import TEXT, TOOLSETS, assert_same, outcome, plans

from core import ContextAssembler, ContextPlan, Message, SectionPlan, ToolCall, ToolDefinition

USER, ASSISTANT = Message(role="user", content="Hello there", id="u1"), Message(role="assistant", content="Hi.", id="a1")
QUESTION = Message(role="user", content="And now?", id="q")
ORPHAN = Message(role="tool", content="result text here", tool_call_id="call_1", id="t1")  # its call dropped


def counter_of(name: str):
    """A real hf tokenizer, or the embedded Mistral counter (``writes_by_turn`` False: no turn in its small prompts)."""
    return default_counter() if name == "mistral" else real(name)


def _layout(compaction: str, system: bool) -> tuple[SectionPlan, ...]:
    return ((SectionPlan("system", pinned=True),) if system else ()) + (
        SectionPlan("recent", share=0.8, compaction=compaction), SectionPlan("question", pinned=True))


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral"])
@pytest.mark.parametrize("compaction", ["drop-oldest", "newest-turns", "pin-and-fold"])
@pytest.mark.parametrize("history", [
    [USER, ASSISTANT],
    [USER, ASSISTANT, Message(role="user", content="More", id="u2"), Message(role="assistant", content="Sure.", id="a2")],
    [ORPHAN, ASSISTANT, Message(role="user", content="More", id="u2"), Message(role="assistant", content="Sure.", id="a2")],
    [USER, Message(role="assistant", content="Calling.", id="c1", tool_calls=[ToolCall(id="call_1", name="f", arguments={})]),
     ORPHAN, ASSISTANT],
], ids=["one turn", "two turns", "a result without its call first", "a tool call in the turn"])
def test_the_question_after_a_reply_costs_what_the_reference_says_without_a_system_message(name, compaction, history):
    counter = counter_of(name)
    data = {"recent": history, "question": [QUESTION]}
    plan = ContextPlan(sections=_layout(compaction, system=False), budget_tokens=4000)
    fast, reference = (outcome(ContextAssembler(plan, counter, reference=r), data) for r in (False, True))
    if isinstance(reference, Exception):  # Mistral refuses a prompt that opens with a tool result: both say so
        assert str(fast) == str(reference)
        return
    assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()


def test_qwen3_counts_the_thinking_block_of_the_reply_the_question_follows_in_the_template_entry():
    """What the reference means: without the question, the reply ends the prompt after a user message and
    gets Qwen3's empty thinking block; with it, it does not. So the question adds its own tokens less that
    block, and the template entry (the rest of the prompt) holds it."""
    counter = real("qwen3")
    plan = ContextPlan(sections=_layout("drop-oldest", system=False), budget_tokens=4000)
    result = ContextAssembler(plan, counter).assemble({"recent": [USER, ASSISTANT], "question": [QUESTION]})
    costs = {e.id: e.tokens for e in result.trace}
    alone = counter.count([USER.chat(), ASSISTANT.chat(), QUESTION.chat()], [])
    without = counter.count([USER.chat(), ASSISTANT.chat()], [])
    assert costs["q"] == alone - without
    assert sum(costs.values()) == result.input_tokens == alone


@st.composite
def conversations(draw):
    """Turns of a user message, an assistant reply (sometimes a tool call and its result first), in any
    number, the plan with or without a system message."""
    history = []
    for n in range(draw(st.integers(1, 6))):
        history.append(Message(role="user", content=draw(TEXT) or "u", id=f"u{n}"))
        if draw(st.integers(0, 3)) == 0:
            call = ToolCall(id=f"call{n}", name="lookup", arguments={"q": draw(TEXT)})
            history.append(Message(role="assistant", tool_calls=[call], id=f"c{n}"))
            history.append(Message(role="tool", content=draw(TEXT) or "{}", tool_call_id=f"call{n}", id=f"r{n}"))
        history.append(Message(role="assistant", content=draw(TEXT) or "a", id=f"a{n}"))
    system = draw(st.booleans())
    layout = ((SectionPlan("system", pinned=True),) if system else ()) + (
        SectionPlan("recent", share=draw(st.sampled_from([None, 0.5, 0.8])),
                    compaction=draw(st.sampled_from(["drop-oldest", "newest-turns", "pin-and-fold"]))),
        SectionPlan("question", pinned=True))
    data = {"recent": history, "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    if system:
        data["system"] = [Message(role="system", content=draw(TEXT) or "Be brief.")]
    return layout, (), data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral"])
def test_plans_with_and_without_a_system_message_equal_the_reference(name):
    counter = counter_of(name)

    @given(conversations())
    @settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    def check(case):
        layout, fill_order, data, where, nudge = case
        assert_same(layout, fill_order, data, counter, where, nudge)

    check()


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral"])
def test_a_dropped_note_before_a_reply_the_prompt_goes_on_after_costs_what_the_reference_says(name):
    """The small prompt of an entry ended on the message after its section: a reply there was the prompt's last
    message, and Qwen3 gave it an empty thinking block that the whole prompt, which goes on with user messages,
    does not have (a dropped note cost 10 tokens for 6 at 19 of 45 budgets; the case the plan property found on
    real Qwen3). The small prompt now ends with the user message that closes that reply's turn."""
    counter = counter_of(name)
    call = ToolCall(id="call0", name="lookup", arguments={"q": ""})
    layout = (SectionPlan("system", pinned=True), SectionPlan("notes"), SectionPlan("recent"),
              SectionPlan("evidence", compaction="by-score", into="question"), SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content="Be brief.")],
            "notes": [Message(role="user", content="n", id="n0"), Message(role="user", content="n", id="n1")],
            "recent": [Message(role="user", content="u", id="u0"), Message(role="assistant", tool_calls=[call], id="c0"),
                       Message(role="tool", content="{}", tool_call_id="call0", id="r0"),
                       Message(role="assistant", content="a", id="a0"),
                       Message(role="user", content="u", id="u1", pinned=True),
                       Message(role="user", content="u", id="u2", pinned=True)],
            "evidence": [Message(role="user", content="", id=f"p{i}", pinned=i < 2, score=0.0, source="")
                         for i in range(6)],
            "question": [Message(role="user", content="Why?", id="q")]}
    for where in (0.0, 0.3, 0.5, 0.6, 0.7, 0.9):
        for nudge in (-2, -1, 0, 1, 2):
            assert_same(layout, ("evidence", "recent"), data, counter, where, nudge)


@pytest.mark.parametrize("name", ["qwen3", "gemma4"])
def test_the_plan_property_holds_on_real_templates_with_and_without_a_system_message(name):
    """``tests/test_plan_fast_counting.py``'s plans (notes, tool-call turns, pinned messages, passages into the
    question, every history strategy, tools offered) on real Qwen3 and Gemma 4, the system message kept or left
    out: run here, it found the defects above."""
    counter = counter_of(name)

    @given(plans(), st.sampled_from(TOOLSETS), st.booleans())  # the same examples every run: CI does not depend on
    @settings(max_examples=40, deadline=None, derandomize=True,  # what one run happens to draw (ad hoc, 300 random
              suppress_health_check=[HealthCheck.too_slow])       # examples a tokenizer passed; README, session 17)
    def check(case, tools, without_system):
        layout, fill_order, data, where, nudge = case
        assume(all(s.compaction != "summarise-span" for s in layout))  # a known defect under Gemma 4: below
        if without_system:
            layout = tuple(s for s in layout if s.name != "system")
            data = {k: v for k, v in data.items() if k != "system"}
        assert_same(layout, fill_order, data, counter, where, nudge, tools)

    check()


# Found by the property above in a fresh clone (its own random examples), present before session 17 and not mended
# yet: under Gemma 4, with tool-call turns, runs of user messages and three tools offered, the default's summarise-span
# figures put the section over its allowance where the reference's do not. Strict: it fails once mended.
GEMMA4_SUMMARISE = dict(
        case=((SectionPlan(name='system', share=None, pinned=True, compaction='drop-oldest', into=None),
          SectionPlan(name='notes', share=0.1, pinned=False, compaction='drop-oldest', into=None),
          SectionPlan(name='recent', share=0.3, pinned=False, compaction='summarise-span', into=None),
          SectionPlan(name='evidence', share=None, pinned=False, compaction='by-score', into='question'),
          SectionPlan(name='question', share=None, pinned=True, compaction='drop-oldest', into=None)),
         ('evidence', 'recent'),
         {'system': [Message(role='system', content='字!1a\n  é!\U000a15c2\x9e', id=None, pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None)],
          'notes': [Message(role='user', content='cagehagigidbfgedhdcjejeghadeajicbhfaihbdfeaeechafaiiicjcggj1.aifjhcjbacijehdgiafjgjfcfgbggjdcgcbajhajea\t\r\n', id='n0', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='\U000b5999\x1c½0\x8cCZ\x19¨\x93\xa0Õ\U0007c817\x8cº\n字!1字!1 a', id='n1', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='\n\nadbjiifgicfjaiajfdeegggfhecfjihaaighiaidgecj', id='n2', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None)],
          'recent': [Message(role='user', content='u', id='u0', pinned=True, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='eigehafhghdfadjdieifajjhjijdejigdgbffgabbgcjgigb', id='u1', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='assistant', content=None, id='c1', pinned=False, tool_calls=[ToolCall(id='call1', name='lookup', arguments={'q': ''}, raw_arguments=None)], tool_call_id=None, score=None, source=None),
           Message(role='tool', content='{}', id='r1', pinned=False, tool_calls=[], tool_call_id='call1', score=None, source=None),
           Message(role='user', content='\U00058e1cebagafiahddheifchgjcdghjfhidhgigiebeedgi', id='u2', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='u', id='u3', pinned=True, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='assistant', content=None, id='c3', pinned=False, tool_calls=[ToolCall(id='call3', name='lookup', arguments={'q': ''}, raw_arguments=None)], tool_call_id=None, score=None, source=None),
           Message(role='tool', content='{}', id='r3', pinned=False, tool_calls=[], tool_call_id='call3', score=None, source=None),
           Message(role='assistant', content='\x0ehjghcjdccgdecihcdccaeaeeehcifdahichcdjdiibiigcjdfcjacabeijcfbcfcgdfjcdadjbffhegheccababadijejjeiddgbfecebhbedegdijdb', id='a3', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='\x18©\x85', id='u4', pinned=True, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='assistant', content='&ã\x94ô\U000ad0a1', id='a4', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='u', id='u5', pinned=True, tool_calls=[], tool_call_id=None, score=None, source=None),
           Message(role='user', content='\x10cZF\U000e9895csP', id='u6', pinned=True, tool_calls=[], tool_call_id=None, score=None, source=None)],
          'evidence': [Message(role='user', content='\x8a"¯\\', id='p0', pinned=False, tool_calls=[], tool_call_id=None, score=2.0, source=''),
           Message(role='user', content='', id='p1', pinned=True, tool_calls=[], tool_call_id=None, score=2.0, source='doc.md'),
           Message(role='user', content='fibibhgghhadibhejaehbeffbcghadajbadhaijfcfieachdb', id='p2', pinned=False, tool_calls=[], tool_call_id=None, score=0.5, source='doc.md'),
           Message(role='user', content='  1\n!a<think></s>', id='p3', pinned=False, tool_calls=[], tool_call_id=None, score=0.5, source='doc.md'),
           Message(role='user', content='', id='p4', pinned=False, tool_calls=[], tool_call_id=None, score=2.0, source=''),
           Message(role='user', content='bhhgejggebcebejfcefbcecehcffeecgjjfjjeeifcaihbgdcabehbbaggjbgbgachghebbgedcjacfgbjcegifahijabjahgfahhfehihigbgjcaiajgjcecjdbhbjhccjhjhfajbebgabhebifhjggadidhedfieghéhghbdhicajfdbcbfeaifcefaaeabcddjdhfbddajefafaghcgdbcjjjif', id='p5', pinned=False, tool_calls=[], tool_call_id=None, score=1.0, source='doc.md'),
           Message(role='user', content='´:\U0004a85b', id='p6', pinned=False, tool_calls=[], tool_call_id=None, score=0.5, source='doc.md'),
           Message(role='user', content='<s>bdebhedefhccbidcdhjjeddddhibhbfaibcdjchgacgcfiidchacijjcdajeiahfaacebibbcijhhjihcedffebadchahafagecgddgfgedbgbffjhdbefcaggachbhihfeecbgbcbiggfdfehggifebjefgdijcfjhbja', id='p7', pinned=False, tool_calls=[], tool_call_id=None, score=2.0, source='')],
          'question': [Message(role='user', content='Why?', id='q', pinned=False, tool_calls=[], tool_call_id=None, score=None, source=None)]},
         0.26232417880092834,
         1),
        tools=(ToolDefinition(name='lookup', description='Lookup something.', parameters={'type': 'object', 'properties': {'q': {'type': 'string'}}, 'required': ['q']}, access=None),
         ToolDefinition(name='fetch', description='Fetch something.', parameters={'type': 'object', 'properties': {'url': {'type': 'string'}, 'page': {'type': 'string'}}, 'required': ['url']}, access=None),
         ToolDefinition(name='search', description='Search something.', parameters={'type': 'object', 'properties': {'q': {'type': 'string'}}, 'required': ['q']}, access=None)),
        without_system=False,
)


def test_summarise_span_under_gemma4_with_tool_calls_equals_the_reference():
    """Found by a fresh clone's random draw (session 17), mended in session 18: Gemma 4 leaves out a tool result whose
    call is not in the request, so a slice left out that ends at a tool result takes that result too, and the
    variant counts learned the tool result's boundary at the next message, with everything up to the next "{}" taken
    for its markup; a later slice then counted 241 tokens where its variant counts 351, and the default returned
    158 tokens for a section the reference fits in 140 (``HFVariants._written_at``)."""
    layout, fill_order, data, where, nudge = GEMMA4_SUMMARISE["case"]
    assert_same(layout, fill_order, data, real("gemma4"), where, nudge, GEMMA4_SUMMARISE["tools"])


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral"])
def test_a_prompt_that_ends_on_a_reply_after_a_tool_call_costs_what_the_reference_says(name):
    """The section's small prompts ended at the tool result after it, without the reply that ends the whole
    prompt, which Qwen3 writes with an empty thinking block after a user message (a dropped turn 7 tokens for 11
    at 4 of 29 budgets, and 24 others fell back to the reference; older than session 17, found by its review). They
    now take the rest of that last turn."""
    counter = counter_of(name)
    call = ToolCall(id="call0", name="lookup", arguments={"q": "x"})
    layout = (SectionPlan("recent", compaction="drop-oldest"), SectionPlan("tail", pinned=True))
    data = {"recent": [Message(role="user", content="Hello there", id="u0"),
                       Message(role="assistant", content="Hi.", id="a0"),
                       Message(role="user", content="Look it up", id="u1")],
            "tail": [Message(role="assistant", tool_calls=[call], id="c0"),
                     Message(role="tool", content="found it", tool_call_id="call0", id="r0"),
                     Message(role="assistant", content="Here it is.", id="a1")]}
    for where in (0.0, 0.2, 0.4, 0.6, 0.8, 0.99):
        for nudge in (-1, 0, 1):
            assert_same(layout, (), data, counter, where, nudge)


@pytest.mark.parametrize("name", ["qwen3", "gemma4", "mistral"])
@pytest.mark.parametrize("question", [False, True], ids=["the run ends the prompt", "a question after the run"])
def test_a_section_before_an_agent_run_longer_than_a_small_prompt_takes_costs_what_the_reference_says(name, question):
    """A section followed by an agent's run of 20 tool calls (41 messages, past ``TURN_MESSAGES``): its small prompts
    ended on the message after the section, without the reply that ends the prompt, which Qwen3 writes with an
    empty thinking block; three dropped turns were priced 4 tokens short with no note, and other budgets fell back
    to the reference (session 18). Such a section is now counted whole (``_closes_long``)."""
    counter = counter_of(name)
    run = []
    for k in range(20):
        run += [Message(role="assistant", tool_calls=[ToolCall(id=f"call{k}", name="lookup", arguments={"q": f"x{k}"})],
                        id=f"c{k}"),
                Message(role="tool", content=f"found {k}", tool_call_id=f"call{k}", id=f"r{k}")]
    run.append(Message(role="assistant", content="Here it is.", id="fin"))
    layout = (SectionPlan("recent", compaction="drop-oldest"), SectionPlan("run", pinned=True)) + (
        (SectionPlan("question", pinned=True),) if question else ())
    data = {"recent": [USER, ASSISTANT, Message(role="user", content="Another one", id="u2"),
                       Message(role="assistant", content="Sure thing.", id="a2"),
                       Message(role="user", content="Look it up", id="u3")], "run": run}
    if question:
        data["question"] = [QUESTION]
    for where in (0.0, 0.3, 0.6, 0.99):
        for nudge in (-1, 0, 1):
            assert_same(layout, (), data, counter, where, nudge)


def test_a_question_after_a_tool_result_under_mistral_when_the_system_text_moves_costs_what_the_reference_says():
    """A fresh clone's random draw of the Mistral plan property (session 18; the code at the session's start gives the
    same): without the question the prompt ends on a tool result, and Mistral writes the system text at the start of
    the last run of user messages, so the question's cost holds that move. The default priced it one token short: it
    took the prompt ending on the tool result for one Mistral closes with an empty user turn (it does so only after
    an assistant reply)."""
    layout = (SectionPlan("system", pinned=True), SectionPlan("notes", compaction="drop-oldest"),
              SectionPlan("recent", compaction="drop-oldest"),
              SectionPlan("evidence", compaction="by-score", into="question"), SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content="Be brief.")],
            "notes": [Message(role="user", content="\n0", id="n0")],
            "recent": [Message(role="user", content="u", id="u0", pinned=True),
                       Message(role="user", content="u", id="u1", pinned=True),
                       Message(role="assistant", content="0000000000000000", id="a1"),
                       Message(role="user", content="u", id="u2", pinned=True),
                       Message(role="assistant", id="c2", tool_calls=[ToolCall(id="call2", name="lookup", arguments={"q": ""})]),
                       Message(role="tool", content="{}", id="r2", tool_call_id="call2")],
            "evidence": [], "question": [Message(role="user", content="Why?", id="q")]}
    assert_same(layout, (), data, default_counter(), 0.375, 0)


def test_a_dropped_tool_call_that_joins_the_reply_before_it_costs_what_the_reference_counts_through_a_filler():
    """Found by session 19's review (older): under Mistral a dropped tool call, alone in its section after a kept
    reply, makes two replies in a row, which Mistral joins into one it refuses (text and tool calls). The reference
    counts that partial prompt through an empty user turn between the two (``countable_variants``), so the call
    costs 35 tokens; the default took the prompt for refused and gave it 0."""
    layout = (SectionPlan("system", pinned=True), SectionPlan("s1", compaction="drop-oldest"),
              SectionPlan("s2", compaction="drop-oldest"), SectionPlan("question", pinned=True))
    data = {"system": [Message(role="system", content="Be brief.")],
            "s1": [Message(role="user", content="42 is it.", id="u1"), Message(role="assistant", content="42 is it.", id="a2")],
            "s2": [Message(role="user", content="the end.", id="u4"),
                   Message(role="assistant", id="c5", tool_calls=[ToolCall(id="call5", name="lookup", arguments={"q": "\n0"})]),
                   Message(role="tool", content="42", id="r5", tool_call_id="call5")],
            "question": [Message(role="user", content="u", id="q")]}
    plan = ContextPlan(sections=layout, budget_tokens=15)
    fast = ContextAssembler(plan, default_counter()).assemble(data)
    reference = ContextAssembler(plan, default_counter(), reference=True).assemble(data)
    assert fast.to_json() == reference.to_json()
    assert [e.tokens for e in fast.trace if e.id == "c5"] == [35]
