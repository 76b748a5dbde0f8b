"""What a chat template does, learned from a few renders of small requests (where its syntax says too little):
whether it writes a reply with reasoning, or the text beside a tool call, otherwise once a question or another reply
follows it; whether it takes a user message for no question; whether it writes a marker token between one message's
text and the next; and whether the tokenizer reads a message's first word in the prompt as it reads it alone. Each is
asked once per counter, the first-word probe once per tokenizer, template and template arguments
(``core.counters.hf_template``); where one says so, the default assemblies price no item apart and count with the
reference method (``core.repeats``), or the hf variant counts are not made. The template's syntax is read in
``core.counters.template_state``."""
from __future__ import annotations

# replies whose text templates rewrite by what it holds (reasoning before ``</think>``, Gemma 4's thought channel)
_REASONED = ("Zq reasoning</think>Answer.", "<think>Zq reasoning</think>Answer.",
             "<|channel>thought\nZq reasoning<channel|>Answer.")


def reasoning_by_position(counter) -> bool:
    """Whether ``counter``'s template writes a reply with reasoning otherwise once a question or another reply follows
    it (Qwen3 and GLM keep the reasoning after the last question only, LFM2.5 in the last reply only; DeepSeek-R1
    leaves it out of every reply, wherever it stands)."""
    return _reasoning_moves(counter, [], ["user"]) or later_reply_rewrites(counter)


def later_reply_rewrites(counter) -> bool:
    """Whether ``counter``'s template writes a reply with reasoning otherwise once another reply follows it, from
    renders of a question, such a reply and a second question, with a second reply after them and without (roles
    alternate, as many templates demand): LFM2.5 keeps the reasoning of the last reply only; Qwen3 of every reply
    after the last question, so a later reply changes nothing. Only asked where the template rewrites some text
    (``TokenCounter.rewrite_test``)."""
    return _reasoning_moves(counter, ["user"], ["user", "assistant"])


def _reasoning_moves(counter, before: list, after: list) -> bool:
    """Whether a question and a reply with reasoning, then the messages ``before``, write the reply otherwise than with
    the messages ``after`` instead (each a message, or a role written with a plain text)."""
    from ..contracts import ChatMessage

    rewritten = counter.rewrite_test()
    if rewritten is None:
        return False
    question = ChatMessage(role="user", content="Why?")
    for text in _REASONED:
        if not rewritten(text):
            continue
        head = [question, ChatMessage(role="assistant", content=text)]
        tails = [[ChatMessage(role=m, content=f"Later {k}.") if isinstance(m, str) else m for k, m in enumerate(tail)]
                 for tail in (before, after)]
        try:
            renders = [counter.render_text(head + tail, []) for tail in tails]
        except Exception:  # noqa: BLE001 - a template that refuses either: nothing seen to move
            continue
        if ("Zq" in renders[0]) != ("Zq" in renders[1]):
            return True
    return False


def takes_for_no_question(counter, text: str) -> bool:
    """Whether ``counter``'s template takes a user message of ``text`` for no question, from two renders of a question
    and a reply with reasoning, then that message or a plain one: Qwen3 looks for the last user message that is not a
    ``<tool_response>`` and keeps the reasoning of the replies after it, so the reply keeps its reasoning after ``text``
    where ``text`` is no question. Asked where the template writes reasoning by position and ``text`` holds markup it
    looks for."""
    memo = counter.__dict__.setdefault("_no_question", {})  # (by text, for the counter's life; kept small)
    if text not in memo:
        if len(memo) >= 256:
            memo.clear()
        from ..contracts import ChatMessage

        memo[text] = _reasoning_moves(counter, [ChatMessage(role="user", content=text)], ["user"])
    return memo[text]


def tool_call_text_by_later_reply(counter) -> bool:
    """Whether ``counter``'s template writes the text beside a tool call otherwise once a reply without tool calls
    follows it, from renders of a question, a tool call with text, its result and a second question, with a reply
    before that question and without: gpt-oss keeps such text (as analysis) only while no final reply follows, so a
    slice that leaves that reply out rewrites the call before it."""
    from ..contracts import ChatMessage, ToolCall, ToolDefinition

    tool = ToolDefinition(name="lookup", description="Look something up.",
                          parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    head = [ChatMessage(role="user", content="Why?"),
            ChatMessage(role="assistant", content="Zq note.", tool_calls=[ToolCall(id="call_zq", name="lookup",
                                                                                    arguments={"q": "x"})]),
            ChatMessage(role="tool", content="Result.", tool_call_id="call_zq")]
    later = ChatMessage(role="user", content="Later.")
    try:
        renders = [counter.render_text(head + tail, [tool])
                   for tail in ([ChatMessage(role="assistant", content="Done."), later], [later])]
    except Exception:  # noqa: BLE001 - a template that refuses either: nothing seen to move
        return False
    return ("Zq" in renders[0]) != ("Zq" in renders[1])


def splits_between_messages(counter) -> bool:
    """Whether ``counter``'s template writes an added token (one the tokenizer reads out of text wherever it stands)
    between one message's text and the next, from a render of a question, a reply and another question. Where it
    writes only text there (RWKV's ``User: ...\n\nAssistant: ...``, Vicuna's ``USER: ... ASSISTANT:``), the tokenizer
    may join the end of one message with the start of the next, and no item's cost stands apart."""
    from ..contracts import ChatMessage

    texts = ["Alpha one.", "Beta two.", "Gamma three."]
    messages = [ChatMessage(role=role, content=text) for role, text in zip(("user", "assistant", "user"), texts)]
    try:
        rendered = counter.render_text(messages, [])
    except Exception:  # noqa: BLE001 - a template that refuses it: its counts say so
        return True
    added = [a for a in counter.untrusted_spellings() if a]
    at = 0
    ends = []
    for text in texts:
        start = rendered.find(text, at)
        if start < 0:
            return True  # a text the template leaves out or rewrites: nothing to tell
        ends.append((start, start + len(text)))
        at = start + len(text)
    return all(any(a in rendered[end:start] for a in added) for (_, end), (start, _) in zip(ends, ends[1:]))


# first words of every kind an item's text starts with: letters of several scripts and cases (the evidence preamble's
# and a summary's first words among them), digits, CJK, punctuation and a tag
_FIRST_WORDS = ("Evidence passages are reference data.", "Summary of earlier conversation: none.", "Why?",
                "Hello there.", "the end.", "é字 text.", "Привет мир.", "字 text.", "1 two three.", "42 is it.",
                "7th.", "<tag> text.", "- item.", "\"Quoted\" text.", "(aside) text.",
                "# Heading")
# where a message's text stands: a question alone, a reply, a question after a reply, a question after the system text
_PLACES = (("user",), ("user", "assistant"), ("user", "assistant", "user"), ("system", "user"))


def starts_alike_in_place(counter) -> bool:
    """Whether ``counter`` counts a message's text in the prompt as its own tokens plus a constant of its place,
    whatever it starts with, from renders of short texts in four places: what the default assembly's item model
    rests on (a turn's shape is its roles and the whitespace at its edges; a plan entry's constant is keyed by the class
    of its first character too, a finer key). Not so where the template's text before a message runs into its first
    word, or the tokenizer marks the start of each stretch of text between added tokens (SentencePiece's "▁") and the
    template writes text right before a message's: Phi-3's tokenizer as converted from llama.cpp's GGUF file keeps the
    newline after ``<|user|>`` (the one in ../shared/tokenizers/hf/phi35 strips it), so "Evidence" is one token
    alone and two there, "Why" one in both, "42" two alone and one there. What an item adds then depends on its first
    word, which no constant of its place holds."""
    from ..contracts import ChatMessage

    alone = counter.text_counts(list(_FIRST_WORDS))
    for roles in _PLACES:
        offsets = set()
        for word, own in zip(_FIRST_WORDS, alone):
            messages = [ChatMessage(role=role, content=("Be brief." if role == "system" else "Earlier text."))
                        for role in roles[:-1]] + [ChatMessage(role=roles[-1], content=word)]
            try:
                offsets.add(counter.count(messages, []) - own)
            except Exception:  # noqa: BLE001 - a template that refuses this place: nothing seen there
                break
        if len(offsets) > 1:
            return False
    return True
