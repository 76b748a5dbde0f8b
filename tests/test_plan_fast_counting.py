"""Plans count fast and exactly (issue 5): the default plan assembly answers from item costs and gives
the same decisions, trace and bytes as ``reference=True``, which counts the complete prompt for
every question a strategy or the trace asks."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURES, LyingCounter, default_counter, fixture_data

from core import (CompactionOutcome, ContextAssembler, ContextBudgetError, ContextPlan, Message, SectionPlan,
                  SummariseSpan, ToolCall, ToolDefinition, assemble_plan_request, make_counter, parse_plan_request)
from core.plans import forget_constants

ADVERSARIAL = st.one_of(
    st.text(max_size=50),
    st.text(alphabet="abcdefghij", min_size=40, max_size=300),                 # long runs without spaces
    st.sampled_from(["Привет мир ", "こんにちは世界", "مرحبا بالعالم", "🙂🚀👩‍💻", "e\u0301", "\t\r\n", "  ",
                     "[INST]", "[/INST]", "</s>", "<s>", "<|im_start|>", "</evidence>", "&amp;", "\"quoted\"",
                     "Summary of earlier conversation:", "1.", "\n\n",
                     "<think>", "</think>", "<|channel>", "<channel|>", "<tool_response>"]),  # rewritten by templates
    st.lists(st.sampled_from(["a", " ", "\n", "1", "!", "é", "字"]), max_size=24).map("".join),  # tiny mixed
)
TEXT = st.lists(ADVERSARIAL, min_size=0, max_size=4).map("".join)
HISTORY_STRATEGIES = ("drop-oldest", "pin-and-fold", "newest-turns", "summarise-span")


class Fixed:
    """A summariser that always answers, so a summarise-span plan is deterministic."""

    def __init__(self, text: str = "the user asked about trains; the answer named two routes.") -> None:
        self.text = text
        self.calls = 0

    def summarise(self, span, *, cancel=None):
        self.calls += 1
        return self.text


@st.composite
def plans(draw):
    turns = draw(st.integers(0, 8))
    history = []
    for n in range(turns):
        history.append(Message(role="user", content=draw(TEXT) or "u", id=f"u{n}", pinned=draw(st.integers(0, 9)) == 0))
        if draw(st.integers(0, 7)) == 0:  # an assistant tool call and its result
            call = ToolCall(id=f"call{n}", name="lookup", arguments={"q": draw(TEXT)})
            history.append(Message(role="assistant", tool_calls=[call], id=f"c{n}"))
            history.append(Message(role="tool", content=draw(TEXT) or "{}", tool_call_id=f"call{n}", id=f"r{n}"))
        if draw(st.booleans()):
            history.append(Message(role="assistant", content=draw(TEXT) or "a", id=f"a{n}"))
    passages = [Message(role="user", content=draw(TEXT), id=f"p{i}", source=draw(st.sampled_from(["", "doc.md"])),
                        score=draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])), pinned=draw(st.integers(0, 12)) == 0)
                for i in range(draw(st.integers(0, 10)))]
    notes = [Message(role="user", content=draw(TEXT) or "n", id=f"n{i}") for i in range(draw(st.integers(0, 3)))]
    compaction = draw(st.sampled_from(HISTORY_STRATEGIES))
    share = draw(st.sampled_from([None, 0.3, 0.6, 0.9]))
    note_share = draw(st.sampled_from([None, 0.1]))
    if share is not None and note_share is not None and share + note_share > 1:
        note_share = None
    layout = (SectionPlan("system", pinned=True),
              SectionPlan("notes", share=note_share, compaction=draw(st.sampled_from(("drop-oldest", "pin-and-fold")))),
              SectionPlan("recent", share=share, compaction=compaction),
              SectionPlan("evidence", compaction="by-score", into="question"),
              SectionPlan("question", pinned=True))
    fill_order = draw(st.sampled_from([(), ("evidence", "recent"), ("recent", "evidence")]))
    data = {"system": [Message(role="system", content=draw(TEXT) or "Be brief.")], "notes": notes,
            "recent": history, "evidence": passages,
            "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    return layout, fill_order, data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


def outcome(assembler, data, **kwargs):
    try:
        return assembler.assemble(data, **kwargs)
    except ContextBudgetError as exc:
        return exc


def same_as_reference(plan, counter, strategies, data) -> None:
    """The default assembly of ``plan`` is the reference's, byte for byte (or the same error)."""
    reference = outcome(ContextAssembler(plan, counter, strategies=strategies, reference=True), data)
    fast = outcome(ContextAssembler(plan, counter, strategies=strategies), data)
    if isinstance(reference, Exception):
        assert str(fast) == str(reference)
        return
    assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()


def _tool(name: str, *args: str) -> ToolDefinition:
    return ToolDefinition(name=name, description=f"{name.capitalize()} something.", parameters={
        "type": "object", "properties": {a: {"type": "string"} for a in args}, "required": list(args[:1])})


# no tools, one, and several (the tool check probes the first and the last only)
TOOLSETS = [(), (_tool("lookup", "q"),), (_tool("lookup", "q"), _tool("fetch", "url", "page"), _tool("search", "q"))]


def assert_same(layout, fill_order, data, counter, where: float, nudge: int, tools=()) -> None:
    roomy = ContextPlan(sections=layout, fill_order=fill_order, budget_tokens=10 ** 6)
    strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
    tools = list(tools)
    everything = outcome(ContextAssembler(roomy, counter, strategies=strategies, reference=True), data, tools=tools)
    if isinstance(everything, ContextBudgetError):  # a prompt the template refuses: both must refuse it
        assert str(outcome(ContextAssembler(roomy, counter, strategies=strategies), data, tools=tools)) == str(everything)
        return
    pins = sum(e.tokens for e in everything.trace if e.decision in ("pinned", "required"))
    if where < 0.5:  # a budget somewhere between the pins and everything
        budget = max(8, int(pins + 2 * where * (everything.input_tokens - pins)) + nudge)
    else:  # a budget that entries fill exactly (or miss by a token or two)
        running = [pins]
        for entry in everything.trace:
            if entry.decision == "kept":
                running.append(running[-1] + entry.tokens)
        budget = max(8, running[int(where * 1000) % len(running)] + nudge)
    plan = ContextPlan(sections=layout, fill_order=fill_order, budget_tokens=budget)
    reference = outcome(ContextAssembler(plan, counter, strategies=strategies, reference=True), data, tools=tools)
    fast = outcome(ContextAssembler(plan, counter, strategies=strategies), data, tools=tools)
    if isinstance(reference, ContextBudgetError):
        assert isinstance(fast, ContextBudgetError) and str(fast) == str(reference)
        return
    assert not isinstance(fast, Exception), fast
    if fast.counting_note is None:
        assert fast.to_json() == reference.to_json()
    else:  # a recorded fallback: everything but the note is the reference's
        assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json()


@given(plans(), st.sampled_from(TOOLSETS))
@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
def test_plan_fast_equals_reference_mistral(case, tools):
    """(Fixed draws since session 18: a fresh clone's random draw found the older defect kept as a strict xfail in
    tests/test_plans_turn_context.py, and CI must not rest on one run's luck; wider random runs are done by hand.)"""
    layout, fill_order, data, where, nudge = case
    assert_same(layout, fill_order, data, default_counter(), where, nudge, tools)


@given(plans(), st.sampled_from(TOOLSETS))
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_plan_fast_equals_reference_hf(toy_counter, case, tools):
    layout, fill_order, data, where, nudge = case
    data = dict(data, system=[m.model_copy(update={"role": "system"}) for m in data["system"]])
    assert_same(layout, fill_order, data, toy_counter, where, nudge, tools)


@pytest.fixture(scope="module")
def toy_counter(toy_tokenizer_dir):
    return make_counter(f"hf:{toy_tokenizer_dir}")


# ---- the recorded plan fixtures, the CLI, and what the fast method does when it is wrong


@pytest.mark.parametrize("name", ["trip_plan_drop_oldest", "trip_plan_pin_and_fold", "trip_plan_summarise_span"])
def test_plan_fixtures_fast_equals_reference_and_the_recording(name):
    request = parse_plan_request(fixture_data(f"{name}.plan.json"))
    fast_stats, slow_stats = {}, {}
    fast = assemble_plan_request(request, make_counter(), stats=fast_stats)
    slow = assemble_plan_request(request, make_counter(), reference=True, stats=slow_stats)
    assert fast.counting_note is None
    assert fast.to_json() == slow.to_json()
    assert fast.to_json() == (FIXTURES / f"{name}.result.json").read_text(encoding="utf-8")
    assert fast_stats["full_counts"] < slow_stats["full_counts"]


def history(turns: int, words: int = 12) -> list[Message]:
    out = []
    for t in range(turns):
        out.append(Message(role="user", content=f"Question {t}: " + "how far is the station " * (words // 5 + 1) + "?",
                           id=f"u{t}"))
        out.append(Message(role="assistant", content=f"Answer {t}. " + "take the number nine bus " * (words // 5 + 1),
                           id=f"a{t}"))
    return out


def big_plan(compaction: str, budget: int = 1500, custom: tuple[str, ...] = ()) -> tuple[ContextPlan, dict]:
    plan = ContextPlan(custom_strategies=custom, sections=(SectionPlan("system", pinned=True),
                                 SectionPlan("constraints", pinned=True),
                                 SectionPlan("recent", share=0.7, compaction=compaction),
                                 SectionPlan("evidence", compaction="by-score", into="question"),
                                 SectionPlan("question", pinned=True)), budget_tokens=budget)
    data = {"system": [Message(role="system", content="Answer from the notes. Be brief.")],
            "constraints": [Message(role="user", content="I am allergic to peanuts.", id="c0")],
            "recent": history(40),
            "evidence": [Message(role="user", content=f"Timetable page {i}: " + "bus nine leaves at ten " * (i % 7 + 2),
                                 id=f"p{i}", source=f"timetable.md#{i}", score=(i * 37 % 11) / 10) for i in range(30)],
            "question": [Message(role="user", content="When does the bus leave?", id="q")]}
    return plan, data


@pytest.mark.parametrize("compaction", ["drop-oldest", "pin-and-fold", "newest-turns", "summarise-span"])
def test_fast_plans_make_far_fewer_complete_counts(compaction):
    plan, data = big_plan(compaction)
    strategies = {"summarise-span": SummariseSpan(Fixed())}
    fast_stats, slow_stats = {}, {}
    fast = ContextAssembler(plan, make_counter(), strategies=strategies).assemble(data, stats=fast_stats)
    slow = ContextAssembler(plan, make_counter(), strategies=strategies, reference=True).assemble(data, stats=slow_stats)
    assert fast.to_json() == slow.to_json() and fast.counting_note is None
    assert slow_stats["full_counts"] > 60 and slow_stats["item_counts"] == 0
    assert fast_stats["full_counts"] <= 8, fast_stats
    assert fast_stats["predicted"] > 20


def test_a_wrong_prediction_falls_back_to_the_reference_and_says_so():
    plan, data = big_plan("newest-turns", budget=1200)
    reference = ContextAssembler(plan, make_counter(), reference=True).assemble(data)
    lying = LyingCounter(make_counter(), "Timetable page 8:")  # a kept passage that is not the first block
    result = ContextAssembler(plan, lying).assemble(data)
    assert result.counting_note and "reference method" in result.counting_note
    assert json.loads(result.to_json())["counting_note"] == result.counting_note
    assert result.model_copy(update={"counting_note": None}).to_json() == reference.to_json()


def test_a_constant_two_entries_disagree_on_is_not_used():
    plan, data = big_plan("newest-turns", budget=1200)
    reference = ContextAssembler(plan, make_counter(), reference=True).assemble(data)
    lying = LyingCounter(make_counter(), "Question 39")  # the first history entry of its kind learned
    stats: dict = {}
    result = ContextAssembler(plan, lying).assemble(data, stats=stats)
    assert result.to_json() == reference.to_json()  # counted whole where the constant was in doubt
    assert any(v == "unstable" for scope in lying._plan_constants.values() for v in scope.values())


def test_a_fallback_does_not_ask_the_summariser_twice():
    plan, data = big_plan("summarise-span", budget=1000)
    summariser = Fixed()
    lying = LyingCounter(make_counter(), "Timetable page 8:")
    result = ContextAssembler(plan, lying, strategies={"summarise-span": SummariseSpan(summariser)}).assemble(data)
    assert result.counting_note and result.model_extra["summaries"]
    assert summariser.calls == 1


class KeepQuestions:
    """The seed's example of a third-party strategy: keeps pins and questions (entries with '?')."""

    def __init__(self):
        self.calls = 0

    def compact(self, entries, *, budget_tokens, count):
        kept = [e for e in entries if e.pinned or "?" in (e.content or "")]
        while kept:
            self.calls += 1
            if count(kept) <= budget_tokens:
                break
            kept.pop(next(i for i, e in enumerate(kept) if not e.pinned))
        return CompactionOutcome(entries=tuple(kept), evicted=tuple(e for e in entries if e not in kept))


class DeclaredKeepQuestions(KeepQuestions):
    def thresholds(self, budget_tokens):
        return (budget_tokens,)


def test_third_party_strategies_get_exact_counts_unless_they_declare_their_budgets():
    plan, data = big_plan("keep-questions", budget=900, custom=("keep-questions",))
    results, predicted = [], []
    for strategy in (KeepQuestions(), DeclaredKeepQuestions()):
        stats, slow = {}, {}
        strategies = {"keep-questions": strategy}
        fast = ContextAssembler(plan, make_counter(), strategies=strategies).assemble(data, stats=stats)
        reference = ContextAssembler(plan, make_counter(), strategies=strategies, reference=True).assemble(
            data, stats=slow)
        assert fast.to_json() == reference.to_json()
        results.append(fast.to_json())
        predicted.append(stats["predicted"])
    assert strategy.calls > 5
    # only a strategy that says what it compares counts with has them answered from item costs
    assert predicted[1] - predicted[0] == strategy.calls // 2
    assert results[0] == results[1]


def test_constants_are_learned_once_per_counter_and_forgotten_on_request():
    plan, data = big_plan("newest-turns")
    counter = make_counter()
    first, second = {}, {}
    ContextAssembler(plan, counter).assemble(data, stats=first)
    counter._cache.clear()
    ContextAssembler(plan, counter).assemble(data, stats=second)
    assert second["item_counts"] < first["item_counts"]  # no probe prompts the second time
    forget_constants(counter)
    assert not counter._plan_constants


def test_cli_times_and_recounts_plan_requests(capsys):
    from core.cli import main

    source = str(FIXTURES / "trip_plan_drop_oldest.plan.json")
    outputs = {}
    for flags in ((), ("--reference-recount",)):
        code = main(["assemble", source, "--timings", *flags])
        captured = capsys.readouterr()
        assert code == 0
        stats = dict(kv.split("=") for kv in captured.err.split())
        assert set(stats) == {"assembly_seconds", "full_counts", "item_counts"}
        outputs[flags] = (captured.out, int(stats["full_counts"]), int(stats["item_counts"]))
    (fast_out, fast_full, fast_items), (ref_out, ref_full, ref_items) = outputs.values()
    assert fast_out == ref_out == (FIXTURES / "trip_plan_drop_oldest.result.json").read_text(encoding="utf-8")
    assert ref_items == 0 and ref_full > fast_full and fast_items > 0


@st.composite
def alternating_plans(draw, system: bool):
    """Strictly alternating conversations (user first, assistant last, then the question), as the real
    templates that refuse anything else need; whole turns kept newest first, passages by score."""
    turns = draw(st.integers(1, 8))
    history = []
    for n in range(turns):
        history.append(Message(role="user", content=draw(TEXT) or "u", id=f"u{n}"))
        history.append(Message(role="assistant", content=draw(TEXT) or "a", id=f"a{n}"))
    passages = [Message(role="user", content=draw(TEXT), id=f"p{i}", source="doc.md",
                        score=draw(st.sampled_from([0.0, 0.5, 1.0]))) for i in range(draw(st.integers(0, 8)))]
    layout = ((SectionPlan("system", pinned=True),) if system else ()) + (
        SectionPlan("recent", share=draw(st.sampled_from([None, 0.5, 0.8])), compaction="newest-turns"),
        SectionPlan("evidence", compaction="by-score", into="question"),
        SectionPlan("question", pinned=True))
    data = {"recent": history, "evidence": passages,
            "question": [Message(role="user", content=draw(TEXT) or "Why?", id="q")]}
    if system:
        data["system"] = [Message(role="system", content=draw(TEXT) or "Be brief.")]
    fill_order = draw(st.sampled_from([(), ("evidence", "recent")]))
    return layout, fill_order, data, draw(st.floats(0.0, 1.0)), draw(st.integers(-2, 2))


@pytest.mark.parametrize("key", ["llama31", "qwen25", "gemma2", "gemma4", "mistral_nemo"])
def test_plan_fast_equals_reference_with_real_chat_templates(real_template_tokenizer_dir, key):
    """Real templates put the system text and tools in places of their own (Gemma 2 refuses a system
    role and Mistral Nemo anything but strict alternation): the fast count still agrees."""
    counter = make_counter(f"hf:{real_template_tokenizer_dir(key)}")

    @given(alternating_plans(system=key != "gemma2"))
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(case):
        layout, fill_order, data, where, nudge = case
        assert_same(layout, fill_order, data, counter, where, nudge)

    check()


# ---- layouts a review found the item model getting wrong (each now counted whole, or right)

WEATHER = [ToolDefinition(name="get_weather", description="Current weather for a city",
                          parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                      "required": ["city"]})]
CALL = ToolCall(id="call1", name="get_weather", arguments={"city": "Paris"})


def same_at_every_budget(layout, data, counter, budgets, *, tools=(), fill_order=()):
    outcomes = set()
    for budget in budgets:
        plan = ContextPlan(sections=layout, fill_order=fill_order, budget_tokens=budget)
        strategies = {"summarise-span": SummariseSpan(Fixed(), max_summary_tokens=40)}
        reference = outcome(ContextAssembler(plan, counter, strategies=strategies, reference=True), data, tools=tools)
        fast = outcome(ContextAssembler(plan, counter, strategies=strategies), data, tools=tools)
        if isinstance(reference, Exception) or isinstance(fast, Exception):
            assert type(fast) is type(reference) and str(fast) == str(reference), budget
            outcomes.add("refused")
            continue
        assert fast.model_copy(update={"counting_note": None}).to_json() == reference.to_json(), budget
        outcomes.add("fell back" if fast.counting_note else "same")
    return outcomes


def test_a_system_message_after_other_messages_is_counted_whole():
    layout = (SectionPlan("notes", share=0.2), SectionPlan("rules"), SectionPlan("history", share=0.5,
                                                                                 compaction="drop-oldest"))
    data = {"notes": [Message(role="user", content="a", id="a")],
            "rules": [Message(role="system", content="Be brief.", id="sys")],
            "history": [Message(role="user", content="Why?", id="q"), Message(role="assistant", content="Because.",
                                                                              id="r"),
                        Message(role="user", content="And then?", id="q2", pinned=True)]}
    assert same_at_every_budget(layout, data, make_counter(), [10 ** 6, *range(10, 40)]) >= {"same"}


def test_a_tool_exchange_in_history_with_conversation_after_it():
    layout = (SectionPlan("history", compaction="pin-and-fold"), SectionPlan("question", pinned=True),
              SectionPlan("after", compaction="summarise-span"))
    data = {"history": [Message(role="user", content="Weather in Paris?", id="u0"),
                        Message(role="assistant", tool_calls=[CALL], id="c1"),
                        Message(role="tool", content='{"t": 21}', tool_call_id="call1", id="r1")],
            "question": [Message(role="user", content="And tomorrow?", id="q")],
            "after": [Message(role="assistant", content="Probably rain.", id="a5"),
                      Message(role="user", content="Thanks, bye.", id="u5")]}
    for tools in ((), WEATHER):
        assert "same" in same_at_every_budget(layout, data, make_counter(), [10 ** 6, 200, 120, 80], tools=tools)


def test_tools_a_template_folds_into_the_first_message(real_template_tokenizer_dir):
    """Llama 3.1 puts the tool text into the first message, whatever its role: entries that become or
    stop being first change what the tools cost, so such a plan is counted whole."""
    counter = make_counter(f"hf:{real_template_tokenizer_dir('llama31')}")
    layout = (SectionPlan("history", compaction="drop-oldest"), SectionPlan("exchange", pinned=True),
              SectionPlan("question", pinned=True))
    data = {"history": [Message(role="user", content="Is it warm in Paris today?", id="u0"),
                        Message(role="assistant", content="Let me check.", id="a0")],
            "exchange": [Message(role="assistant", tool_calls=[CALL], id="c1"),
                         Message(role="tool", content='{"temperature": 21}', tool_call_id="call1", id="r1")],
            "question": [Message(role="user", content="So should I take a coat?", id="q")]}
    assert same_at_every_budget(layout, data, counter, range(300, 460, 3), tools=WEATHER)


def test_an_over_allowance_error_reports_a_complete_count():
    class Greedy:  # a third party's strategy that hands back more than it was allowed
        def thresholds(self, budget_tokens):
            return (budget_tokens,)

        def compact(self, entries, *, budget_tokens, count):
            return CompactionOutcome(tuple(entries))

    layout = (SectionPlan("notes", share=0.1, compaction="greedy"), SectionPlan("question", pinned=True))
    plan = ContextPlan(sections=layout, budget_tokens=400, custom_strategies=("greedy",))
    data = {"notes": [Message(role="user", content="I am allergic to peanuts and I travel by train. " * 6, id="n"),
                      Message(role="assistant", content="Noted.", id="ok")],
            "question": [Message(role="user", content="When does the bus leave?", id="q")]}
    errors = [str(outcome(ContextAssembler(plan, make_counter(), strategies={"greedy": Greedy()}, reference=mode),
                          data)) for mode in (True, False)]
    assert errors[0] == errors[1] and "over its allowance" in errors[0]


def test_one_message_object_twice_is_two_entries():
    question = Message(role="user", content="When does it leave?", id="q")
    layout = (SectionPlan("question", pinned=True), SectionPlan("evidence", compaction="by-score", into="question"))
    data = {"question": [question, question],
            "evidence": [Message(role="user", content=f"Timetable {i}: bus at ten.", id=f"p{i}", score=i / 10)
                         for i in range(5)]}
    assert "same" in same_at_every_budget(layout, data, make_counter(), [10 ** 6, 90, 70, 60])


def test_a_pinned_section_with_a_share_gets_room_for_its_pins_first():
    layout = (SectionPlan("constraints", share=0.1, pinned=True), SectionPlan("question", pinned=True))
    data = {"constraints": [Message(role="user", content="I am allergic to peanuts and I travel by train. " * 10,
                                    id="pin")],
            "question": [Message(role="user", content="When does the bus leave?", id="q")]}
    for reference in (True, False):
        result = ContextAssembler(ContextPlan(sections=layout, budget_tokens=1000), make_counter(),
                                  reference=reference).assemble(data)
        allowance = {o["section"]: o["allowance"] for o in result.model_extra["section_outcomes"]}["constraints"]
        pins = sum(e.tokens for e in result.trace if e.section == "constraints")
        # everything is pinned, so the pins' count is the whole prompt's; the share is of what is left
        assert allowance == pins + math.floor(0.1 * (1000 - result.input_tokens))


def test_a_plan_marks_what_the_template_leaves_out_as_the_reference_does(tmp_path):
    """The emitted prompt's rendered text comes with its final count (``count_and_render_text``) and is what the
    check for left-out items reads: a message a template skips is ``not rendered`` in the default's trace exactly
    as in the reference's, under mistral and under an ``hf:`` template that leaves one out."""
    import tokenizer_factory

    skipping = ("{% for m in messages %}{% if 'SKIP' not in (m['content'] or '') %}<|im_start|>{{ m['role'] }}\n"
                "{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "tok", chat_template=skipping)
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction="drop-oldest"),
                                 SectionPlan("q", pinned=True)), budget_tokens=4096, reserve_output_tokens=64)
    recent = [Message(role="user" if i % 2 == 0 else "assistant", id=f"m{i}",
                      content=("SKIP this one" if i == 3 else f"Message {i} about the rollback plan."))
              for i in range(8)]
    data = {"system": [Message(role="system", content="Be brief.")], "recent": recent,
            "q": [Message(role="user", content="What now?", id="q")]}
    import core.rendered

    given: list = []
    original = core.rendered.mark_not_rendered

    def spy(result, counter, **kwargs):
        given.append(kwargs.get("rendered"))
        return original(result, counter, **kwargs)

    for spec in (f"hf:{directory}", None):
        given.clear()
        core.rendered.mark_not_rendered = spy
        try:
            fast = ContextAssembler(plan, make_counter(spec)).assemble(data)
        finally:
            core.rendered.mark_not_rendered = original
        counter = make_counter(spec)
        assert given and given[-1] == counter.render_text(fast.messages, fast.tools)  # the text counted, given
        slow = ContextAssembler(plan, make_counter(spec), reference=True).assemble(data)
        assert fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json()
        skipped = [e for e in fast.trace if e.id == "m3"]
        assert [e.decision for e in skipped] == (["not rendered"] if spec else ["kept"]), spec


@pytest.mark.parametrize("shape,compaction", [("tool calls", "newest-turns"), ("plain", "pin-and-fold"),
                                              ("reasoning", "drop-oldest"), ("tool calls", "drop-oldest")])
def test_the_emitted_prompts_text_comes_with_the_last_whole_count(tmp_path, shape, compaction):
    """Where the emitted prompt is the one a check near an allowance counted whole last (``final_total`` takes that
    count), the text that count rendered comes with it: the check for left-out items is given it and renders nothing
    again (it was rendered a second time for these plans before), and it is the emitted prompt's own text."""
    import core.rendered
    import tokenizer_factory
    from tests.benchmarks.bench_plans import shape_plan

    directory = tokenizer_factory.build_toy_tokenizer_dir(tmp_path / "tok")
    plan, data, tools = shape_plan(shape, 40, compaction)
    original = core.rendered.mark_not_rendered
    for spec in (f"hf:{directory}", "mistral:"):
        given: list = []

        def spy(result, counter, **kwargs):
            given.append(kwargs.get("rendered"))
            return original(result, counter, **kwargs)

        core.rendered.mark_not_rendered = spy
        try:
            fast = outcome(ContextAssembler(plan, make_counter(spec)), data, tools=tools)
        finally:
            core.rendered.mark_not_rendered = original
        slow = outcome(ContextAssembler(plan, make_counter(spec), reference=True), data, tools=tools)
        if isinstance(slow, Exception):  # (Mistral refuses a tool result the plan left without its call)
            assert str(fast) == str(slow) and spec == "mistral:"
            continue
        assert given and given[-1] is not None, spec
        assert given[-1] == make_counter(spec).render_text(fast.messages, fast.tools)
        assert fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json()
