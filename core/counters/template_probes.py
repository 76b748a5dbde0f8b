"""What a chat template does, learned from a few renders of small requests (where its syntax says too little): whether
it writes a reply with reasoning otherwise once a question or another reply follows it, whether it writes a marker
token between one message's text and the next, and whether the tokenizer reads a message's first word in the prompt
as it reads it alone. Each is asked once per counter (``core.counters.hf_template``); where one says no, the default
assemblies price no item apart and count with the reference method (``core.repeats``). The template's syntax is read
in ``core.counters.template_state``."""
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


def _reasoning_moves(counter, before: list[str], after: list[str]) -> bool:
    """Whether a question and a reply with reasoning, then messages of the roles ``before``, write the reply
    otherwise than with messages of the roles ``after`` instead."""
    from ..contracts import ChatMessage

    rewritten = counter.rewrite_test()
    if rewritten is None:
        return False
    question = ChatMessage(role="user", content="Why?")
    for text in _REASONED:
        if not rewritten(text):
            continue
        head = [question, ChatMessage(role="assistant", content=text)]
        try:
            renders = [counter.render_text(head + [ChatMessage(role=role, content=f"Later {k}.")
                                                   for k, role in enumerate(roles)], []) for roles in (before, after)]
        except Exception:  # noqa: BLE001 - a template that refuses either: nothing seen to move
            continue
        if ("Zq" in renders[0]) != ("Zq" in renders[1]):
            return True
    return False


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


# first words whose tokens a tokenizer that marks the start of each stretch of text (SentencePiece's prefix "▁", put
# before the text between two added tokens) reads otherwise after template text than alone; several of each key a
# constant is learned by (``core.text_edges._seam_start``): letters of several scripts and cases (the evidence
# preamble's first word among them), digits, a tag
_FIRST_WORDS = ("Evidence passages are reference data.", "Why?", "Hello there.", "the end.", "é字 text.", "Привет мир.",
                "1 two three.", "42 is it.", "7th.", "<tag> text.", "<b>bold</b> text.")
# where a message's text stands: a question alone, a reply, a question after a reply, a question after the system text
_PLACES = (("user",), ("user", "assistant"), ("user", "assistant", "user"), ("system", "user"))


def starts_alike_in_place(counter) -> bool:
    """Whether ``counter`` counts a message's text in the prompt as its own tokens plus a constant of its place and of
    its start's key (``core.text_edges._seam_start``: the run of punctuation it opens with, the class of its first
    letter or digit), whatever word it starts with; from renders of short texts in four places. A SentencePiece
    tokenizer whose normaliser puts "▁" before every stretch of text between added tokens reads a text right after
    template text (Phi-3's ``<|user|>`` and a newline, where the role token does not strip the newline, as the
    tokenizer converted from llama.cpp's GGUF file has it) without the mark it has alone: "Evidence" is one token
    alone and two there, "Why" one in both. What an item adds then depends on its first word, which no constant
    learned by that key holds."""
    from ..contracts import ChatMessage
    from ..text_edges import _seam_start

    alone = counter.text_counts(list(_FIRST_WORDS))
    keys = [_seam_start(word) for word in _FIRST_WORDS]
    for roles in _PLACES:
        offsets: dict[tuple, set[int]] = {}
        for word, own, key in zip(_FIRST_WORDS, alone, keys):
            messages = [ChatMessage(role=role, content=("Be brief." if role == "system" else "Earlier text."))
                        for role in roles[:-1]] + [ChatMessage(role=roles[-1], content=word)]
            try:
                offsets.setdefault(key, set()).add(counter.count(messages, []) - own)
            except Exception:  # noqa: BLE001 - a template that refuses this place: nothing seen there
                break
        if any(len(found) > 1 for found in offsets.values()):
            return False
    return True
