"""A reply whose reasoning the chat template leaves out is still in the prompt. Qwen3 and DeepSeek-R1 write every
reply before the last user message without what precedes its ``</think>``; Gemma 4 writes a reply without its
``<|channel>...<channel|>`` thought blocks. The check for what a template leaves out (``core.rendered``) called such
a reply "not rendered", gave it 0 tokens (its answer's tokens went to the template entry) and the audit reported a
``template-dropped`` error for every earlier reply. Found reading a Qwen3 plan's trace (214 of 428 kept replies
"not rendered"). A reply the template leaves out whole is still reported."""
from __future__ import annotations

import pytest
from real_hf import deepseek_counter, real

from core import ContextAssembler, ContextPlan, Message, SectionPlan, assemble, audit, parse_request
from core.rendered import missing_messages, without_reasoning


def _history(marked) -> list[dict]:
    out = []
    for t in range(6):
        out.append({"role": "user", "content": f"Which node holds disk {t}?", "id": f"u{t}"})
        out.append({"role": "assistant", "content": marked(t), "id": f"a{t}"})
    return out


QWEN = lambda t: f"<think>\nLook at the inventory for disk {t}.\n</think>\n\nDisk {t} is on node {t + 3}."  # noqa: E731
GEMMA = lambda t: f"<|channel>thought\nLook at the inventory for disk {t}.<channel|>Disk {t} is on node {t + 3}."  # noqa: E731


def _request(marked) -> dict:
    return {"id": "reasoning", "instructions": "Answer from the inventory.", "current": "And disk 9?",
            "history": _history(marked), "context_limit": 8192, "max_new_tokens": 256, "margin": 0}


@pytest.mark.parametrize("name,marked", [("qwen3", QWEN), ("gemma4", GEMMA)])
def test_earlier_replies_whose_reasoning_is_left_out_are_kept_with_their_tokens(name, marked):
    counter = real(name)
    request = parse_request(_request(marked))
    result = assemble(request, counter)
    replies = [e for e in result.trace if e.id.startswith("turn-") or e.section == "history"]
    assert replies and all(e.decision == "kept" for e in replies), [(e.id, e.decision) for e in replies]
    assert all(e.tokens > 0 for e in replies)
    rendered = counter.render_text(result.messages, result.tools)
    assert "Look at the inventory" not in rendered  # the template does leave the reasoning out
    assert missing_messages(result.messages, result.tools, rendered) == {}
    assert not [f for f in audit(result, counter) if f.rule == "template-dropped"]
    assert result.model_copy(update={"counting_note": None}).to_json() == \
        assemble(request, counter, reference=True).to_json()


def test_a_plan_over_replies_with_reasoning_keeps_them_as_the_reference_does():
    counter = real("qwen3")
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction="drop-oldest"),
                                 SectionPlan("q", pinned=True)), budget_tokens=200, reserve_output_tokens=32)
    data = {"system": [Message(role="system", content="Answer from the inventory.")],
            "recent": [Message(role=m["role"], content=m["content"], id=m["id"]) for m in _history(QWEN)],
            "q": [Message(role="user", content="And disk 9?", id="q")]}
    fast = ContextAssembler(plan, counter).assemble(data)
    slow = ContextAssembler(plan, counter, reference=True).assemble(data)
    assert fast.model_copy(update={"counting_note": None}).to_json() == slow.to_json()
    assert {e.decision for e in fast.trace} <= {"kept", "pinned", "dropped", "required"}
    assert any(e.decision == "kept" and e.id.startswith("a") for e in fast.trace)


def test_deepseek_r1_replies_are_kept(tmp_path_factory):
    counter = deepseek_counter(tmp_path_factory)
    result = assemble(parse_request(_request(QWEN)), counter)
    assert not [e for e in result.trace if e.decision == "not rendered"]
    assert not [f for f in audit(result, counter) if f.rule == "template-dropped"]


def test_a_reply_left_out_whole_is_still_missing():
    """The check still finds a reply the render does not hold at all, reasoning or not."""
    from core.contracts import ChatMessage

    messages = [ChatMessage(role="user", content="Where is disk 1?"),
                ChatMessage(role="assistant", content=QWEN(1)),
                ChatMessage(role="user", content="And disk 2?"),
                ChatMessage(role="assistant", content=QWEN(2))]
    rendered = "<|im_start|>user\nWhere is disk 1?<|im_end|>\n<|im_start|>assistant\nDisk 1 is on node 4.<|im_end|>\n" \
               "<|im_start|>user\nAnd disk 2?<|im_end|>\n"
    assert missing_messages(messages, [], rendered) == {3: f"its text ({len(QWEN(2))} chars)"}


@pytest.mark.parametrize("text,expected", [
    ("no markup", None),
    ("<think>\nwhy\n</think>\n\nanswer", "answer"),
    ("<think>a</think>b</think> c", "c"),
    ("<think>only reasoning</think>", ""),
    ("<|channel>thought\nwhy<channel|>answer", "answer"),
    ("pre <|channel>x<channel|> mid <|channel>y<channel|> post", "pre  mid  post"),
])
def test_the_text_without_its_reasoning(text, expected):
    assert without_reasoning(text) == expected


def test_a_dropped_system_prompt_that_mentions_think_is_still_missing():
    """Found in review: the rule applied to every message, so a system prompt mentioning ``</think>`` that Mistral Nemo
    drops (a conversation ending with tool results) was called present and its drop went unreported. Only an
    assistant reply is looked for without its reasoning."""
    from core.contracts import ChatMessage, ToolCall

    counter = real("mistral-nemo")
    messages = [ChatMessage(role="system", content="Keep any reasoning inside <think></think>"),
                ChatMessage(role="user", content="What is the weather in Paris?"),
                ChatMessage(role="assistant", content="",
                            tool_calls=[ToolCall(id="abcdefghi", name="weather", arguments={"city": "Paris"})]),
                ChatMessage(role="tool", content="sunny, 21C", tool_call_id="abcdefghi")]
    rendered = counter.render_text(messages, [])
    assert "Keep any reasoning" not in rendered  # the template does drop it
    assert 0 in missing_messages(messages, [], rendered)


@pytest.mark.parametrize("system_text", ["Keep any reasoning inside think tags",
                                         "Keep any reasoning inside <think></think>"])
def test_a_plan_reports_the_dropped_system_prompt_whatever_it_says(system_text):
    counter = real("mistral-nemo")
    plan = ContextPlan(sections=(SectionPlan("system", pinned=True), SectionPlan("recent", compaction="drop-oldest")),
                       budget_tokens=4000, reserve_output_tokens=32)
    from core.contracts import ToolCall

    data = {"system": [Message(role="system", content=system_text, id="sys")],
            "recent": [Message(role="user", content="What is the weather in Paris?", id="u1"),
                       Message(role="assistant", content="", id="a1",
                               tool_calls=[ToolCall(id="abcdefghi", name="weather", arguments={"city": "Paris"})]),
                       Message(role="tool", content="sunny, 21C", id="t1", tool_call_id="abcdefghi")]}
    result = ContextAssembler(plan, counter).assemble(data)
    entry = next(e for e in result.trace if e.id == "sys")
    assert entry.decision == "not rendered"
    assert "template-dropped" in [f.rule for f in audit(result, counter)]


def test_a_reply_of_reasoning_alone_left_out_whole_is_missing():
    """A reply whose text is all reasoning has no rest to find: it is looked for as it is, so a template that drops it
    whole is still reported (and one that writes it empty is reported too: loud, not silent)."""
    from core.contracts import ChatMessage

    messages = [ChatMessage(role="user", content="Where is disk 1?"),
                ChatMessage(role="assistant", content="<think>\nonly thinking\n</think>"),
                ChatMessage(role="user", content="And disk 2?")]
    rendered = "<|im_start|>user\nWhere is disk 1?<|im_end|>\n<|im_start|>user\nAnd disk 2?<|im_end|>\n"
    assert 1 in missing_messages(messages, [], rendered)
