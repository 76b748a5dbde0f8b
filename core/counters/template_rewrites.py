"""The texts a Jinja chat template looks for inside a value to write it otherwise.

Qwen3 and DeepSeek-R1 split an assistant message's content at ``</think>`` and leave the reasoning out of every
reply before the last user message; Qwen3 reads a user message that starts with ``<tool_response>`` as a tool
result. What such a message adds to the prompt is then not its text's tokens plus a constant for its place: it
depends on what the text holds. The default assembly and the plans predict from text counts, so an item whose
text holds one of these spellings is counted in its place instead (``TokenCounter.rewritten_by_template``).

``spellings(source, environment)`` reads the template's syntax tree and returns every string constant given to a
string method that looks inside its object (``split``, ``startswith``, ``replace``, ``find``... and the
``replace`` / ``split`` filters) or tested with ``in`` / ``not in`` against a value that is not itself a constant:
whatever that value is (a message's content, a tool's name), so it may say too much. Two kinds are left out: a
word tested with ``in`` (``'tool_calls' in message``, ``'response' in tool['function']``: a template asks for a
key that way, and looks for markup, not words, inside a text), and whitespace alone (a template trims or splits
on newlines everywhere, and the predictions already key each text by the class of its first and last
character). ``None``: the template could not be read.
"""
from __future__ import annotations

import re
from functools import lru_cache

from jinja2 import nodes

_LOOKING_METHODS = {"split", "rsplit", "startswith", "endswith", "replace", "find", "rfind", "index", "rindex",
                    "count", "partition", "rpartition", "removeprefix", "removesuffix", "strip", "lstrip", "rstrip"}
_LOOKING_FILTERS = {"replace", "split"}
_WORD = re.compile(r"\w+")


def _constants(node: nodes.Node) -> list[str]:
    """The string constants ``node`` is or holds (a tuple of them: ``startswith(('a', 'b'))``)."""
    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (nodes.Tuple, nodes.List)):
        return [value for item in node.items for value in _constants(item)]
    return []


def spellings(source: str, environment) -> frozenset[str] | None:
    try:
        tree = environment.parse(source)
    except Exception:  # noqa: BLE001 - a template its environment cannot parse: transformers will refuse it too
        return None
    found: list[str] = []
    for call in tree.find_all(nodes.Call):
        target = call.node
        if isinstance(target, nodes.Getattr) and target.attr in _LOOKING_METHODS \
                and not isinstance(target.node, nodes.Const):
            for arg in call.args[:1]:
                found += _constants(arg)
    for node in tree.find_all(nodes.Filter):
        if node.name in _LOOKING_FILTERS:
            for arg in node.args[:1]:
                found += _constants(arg)
    for compare in tree.find_all(nodes.Compare):
        left = compare.expr
        for operand in compare.ops:
            if operand.op in ("in", "notin") and not isinstance(operand.expr, nodes.Const):
                found += [value for value in _constants(left) if not _WORD.fullmatch(value)]
            left = operand.expr
    return frozenset(s for s in found if s.strip())


def rewritten_test(templates: str | dict):
    """``text -> bool``: whether ``text`` holds a spelling the templates look for (every text, where a template
    could not be read); ``None`` where they look for nothing."""
    found = spellings_of_templates(templates)
    if found is None:
        return lambda text: True
    if not found:
        return None
    search = re.compile("|".join(map(re.escape, sorted(found, key=len, reverse=True)))).search
    return lambda text: search(text) is not None


def spellings_of_templates(templates: str | dict) -> frozenset[str] | None:
    """``spellings`` over every template of a tokenizer; ``None`` where one could not be read."""
    found: set[str] = set()
    for source in (templates.values() if isinstance(templates, dict) else [templates]):
        if not isinstance(source, str):
            continue
        known = _spellings_of_source(source)
        if known is None:
            return None
        found |= known
    return frozenset(found)


@lru_cache(maxsize=32)
def _spellings_of_source(source: str) -> frozenset[str] | None:
    from .template_compare import _environment

    return spellings(source, _environment(source))
