"""Untrusted text never becomes a control token: evidence passages and tool results are neutralised
against the counter's own spellings before anything is counted or rendered.

Some tokenizers read a control token's spelling inside ordinary text as the control token itself
(Mistral Nemo's Hugging Face tokenizer reads ``[INST]`` in a passage as the token that opens a user turn;
Qwen reads ``<|im_start|>``). Mistral's tekken and tiktoken (as we call it) read them as plain text, and
for them nothing changes. Where the counter would read one, each occurrence is broken by a WORD JOINER
(U+2060, invisible, no width) after its first character, so its tokens are those of plain text; the
result is checked with the tokenizer itself, and if a spelling still survives every character of it is
separated. A text that cannot be neutralised is refused (fail closed), never sent.

What was changed is on the result (``neutralised``: section, id, spellings, count) and in the item's
trace reason; the audit then checks the emitted token ids (core.audit).
"""
from __future__ import annotations

from dataclasses import dataclass

from .contracts import Request
from .counters.base import TokenCounter, literal_spans
from .errors import CounterError
from .render import escape

WORD_JOINER = "\u2060"


@dataclass(frozen=True)
class Neutralised:
    section: str  # "evidence" | "tool_exchanges"
    id: str
    spellings: tuple[str, ...]
    count: int

    def reason(self) -> str:
        shown = ", ".join(self.spellings[:3]) + (" ..." if len(self.spellings) > 3 else "")
        return (f"neutralised {self.count} control-token spelling{'s' if self.count != 1 else ''} ({shown}) with "
                "U+2060 so the tokenizer reads them as plain text")

    def to_json(self) -> dict:
        return {"section": self.section, "id": self.id, "spellings": list(self.spellings), "count": self.count}


def neutralise_text(text: str, counter: TokenCounter) -> tuple[str, list[str]]:
    """``text`` with every spelling the counter would read as a control token broken, and those spellings."""
    spellings = counter.untrusted_spellings()
    if not spellings or counter.text_is_never_control():
        return text, []
    if not counter.holds_untrusted_spelling(text):
        return text, []  # one scan of the text: most hold no spelling, and are not tokenised to learn it
    spans = literal_spans(text, spellings)
    if not spans or not counter.reads_as_control(text):
        return text, []
    found = [literal for literal, _, _ in spans]
    out = _break(text, spans, lambda s: s[0] + WORD_JOINER + s[1:])
    if counter.reads_as_control(out):  # a normaliser or a shorter spelling inside: separate every character
        out = _break(text, spans, lambda s: WORD_JOINER.join(s))
        if counter.reads_as_control(out):
            raise CounterError(f"{counter.name}: untrusted text holds {found[0]!r}, which cannot be neutralised for "
                               "this tokenizer; refusing to send it as a control token")
    return out, found


def _break(text: str, spans, how) -> str:
    pieces, at = [], 0
    for literal, start, end in spans:
        pieces += [text[at:start], how(text[start:end])]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _escaped_reads_as_control(text: str, counter: TokenCounter) -> bool:
    """Whether ``text``, escaped as a passage is sent, holds a spelling the counter reads as a control token;
    remembered per counter by content (a replay asks again about every passage it asked about before)."""
    memo = counter.__dict__.setdefault("_escaped_control_memo", {})
    known = memo.get(text)
    if known is None:
        known = counter.reads_as_control(escape(text))
        if len(memo) >= 65536:
            memo.clear()
        memo[text] = known
    return known


def neutralise_request(request: Request, counter: TokenCounter) -> tuple[Request, list[Neutralised]]:
    """The request with its evidence passages and tool results neutralised (the same object when
    nothing needed it) and what was changed."""
    if not counter.untrusted_spellings() or counter.text_is_never_control():
        return request, []
    changed: list[Neutralised] = []
    evidence = []
    for passage in request.evidence:  # a passage is sent escaped: only what survives escaping is a danger
        if not _escaped_reads_as_control(passage.text, counter):
            evidence.append(passage)
            continue
        text, found = neutralise_text(passage.text, counter)
        if found:
            changed.append(Neutralised("evidence", passage.id, tuple(dict.fromkeys(found)), len(found)))
            passage = passage.model_copy(update={"text": text})
        evidence.append(passage)
    exchanges = []
    for x, exchange in enumerate(request.tool_exchanges):
        results = []
        for result in exchange.results:
            text, found = neutralise_text(result.content, counter)
            if found:
                changed.append(Neutralised("tool_exchanges", result.tool_call_id, tuple(dict.fromkeys(found)),
                                           len(found)))
                result = result.model_copy(update={"content": text})
            results.append(result)
        exchanges.append(exchange.model_copy(update={"results": results}) if results != exchange.results
                         else exchange)
    if not changed:
        return request, []
    return request.model_copy(update={"evidence": evidence, "tool_exchanges": exchanges}), changed


def neutralise_sections(sections, counter: TokenCounter):
    """A plan's sections with their tool messages neutralised (plans carry tool results as messages), and
    what was changed; ``sections`` itself when nothing needed it."""
    if not counter.untrusted_spellings() or counter.text_is_never_control():
        return sections, []
    changed: list[Neutralised] = []
    out = {}
    for name, messages in sections.items():
        fixed = []
        for i, message in enumerate(messages):
            get = message.get if isinstance(message, dict) else lambda key, m=message: getattr(m, key, None)
            content = get("content")
            if get("role") == "tool" and isinstance(content, str):
                text, found = neutralise_text(content, counter)
                if found:
                    changed.append(Neutralised(name, get("id") or f"{name}-{i}", tuple(dict.fromkeys(found)),
                                               len(found)))
                    message = ({**message, "content": text} if isinstance(message, dict)
                               else message.model_copy(update={"content": text}))
            fixed.append(message)
        out[name] = fixed
    return (out, changed) if changed else (sections, [])


def mark_result(result, changed: list[Neutralised]):
    """Record ``changed`` on the result and in the reasons of the items it names."""
    if not changed:
        return result
    by_item = {(c.section, c.id): c for c in changed}
    for entry in result.trace:
        hit = by_item.get((entry.section, entry.id))
        if hit is None and entry.section == "tool_exchanges":  # an exchange's entry names its calls' ids
            hit = next((c for (section, cid), c in by_item.items() if section == "tool_exchanges" and cid in entry.id.split("+")),
                       None)
        if hit is not None:
            entry.reason = f"{entry.reason}; {hit.reason()}" if entry.reason else hit.reason()
    result.neutralised = [c.to_json() for c in changed]  # type: ignore[attr-defined]
    return result
