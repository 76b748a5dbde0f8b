"""The texts a Jinja chat template looks for inside a value to write it otherwise.

Qwen3 and DeepSeek-R1 split an assistant message's content at ``</think>`` and leave the reasoning out of every
reply before the last user message; Qwen3 reads a user message that starts with ``<tool_response>`` as a tool
result. What such a message adds to the prompt is then not its text's tokens plus a constant for its place: it
depends on what the text holds. The default assembly and the plans predict from text counts, so an item whose
text holds one of these spellings is counted in its place instead (``TokenCounter.rewritten_by_template``).

``spellings(source, environment)`` reads the template's syntax tree and returns every string constant given to a
string method that looks inside its object (``split``, ``startswith``, ``replace``, ``find``... and the
``replace`` / ``split`` filters) or tested with ``in`` / ``not in`` against a value that is not itself a constant:
whatever that value is (a message's content, a tool's name), so it may say too much; also markup compared with a
slice of a text (``content[:15] == '<tool_response>'``), and a constant reached through a name ``set`` to it or a
macro's argument. Three kinds are left out: a word tested with ``in`` (``'tool_calls' in message``, ``'response' in
tool['function']``: a template asks for a key that way, and looks for markup, not words, inside a text), whitespace
alone (a template trims or splits on newlines everywhere, and the predictions already key each text by the class of
its first and last character), and a single character (``'.' in tool.name``: one would send nearly every text to
be counted in its place). ``None``: the template could not be read.
"""
from __future__ import annotations

import re
from functools import lru_cache

from jinja2 import nodes

_LOOKING_METHODS = {"split", "rsplit", "startswith", "endswith", "replace", "find", "rfind", "index", "rindex",
                    "count", "partition", "rpartition", "removeprefix", "removesuffix", "strip", "lstrip", "rstrip"}
_LOOKING_FILTERS = {"replace", "split"}
_WORD = re.compile(r"\w+")


def _constants(node: nodes.Node, named: dict[str, set[str]]) -> list[str]:
    """The string constants ``node`` is or holds (a tuple of them: ``startswith(('a', 'b'))``; a name ``set`` to
    one, or a macro's argument given one, anywhere in the template: ``named``)."""
    if isinstance(node, nodes.Const) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (nodes.Tuple, nodes.List)):
        return [value for item in node.items for value in _constants(item, named)]
    if isinstance(node, nodes.Name):
        return sorted(named.get(node.name, ()))
    return []


def _named(tree: nodes.Template) -> dict[str, set[str]]:
    """Every string constant each name is ``set`` to, or given as a macro's argument (by position or keyword), or
    given to a macro as a default."""
    named: dict[str, set[str]] = {}
    for assign in tree.find_all(nodes.Assign):
        if isinstance(assign.target, nodes.Name) and isinstance(assign.node, nodes.Const) \
                and isinstance(assign.node.value, str):
            named.setdefault(assign.target.name, set()).add(assign.node.value)
    macros = {m.name: m for m in tree.find_all(nodes.Macro)}
    for macro in macros.values():
        for arg, default in zip(macro.args[len(macro.args) - len(macro.defaults):], macro.defaults):
            if isinstance(default, nodes.Const) and isinstance(default.value, str):
                named.setdefault(arg.name, set()).add(default.value)
    for call in tree.find_all(nodes.Call):
        macro = macros.get(call.node.name) if isinstance(call.node, nodes.Name) else None
        if macro is None:
            continue
        given = list(zip(macro.args, call.args)) + [(next((a for a in macro.args if a.name == k.key), None), k.value)
                                                    for k in call.kwargs]
        for arg, value in given:
            if arg is not None and isinstance(value, nodes.Const) and isinstance(value.value, str):
                named.setdefault(arg.name, set()).add(value.value)
    return named


def spellings(source: str, environment) -> frozenset[str] | None:
    try:
        tree = environment.parse(source)
    except Exception:  # noqa: BLE001 - a template its environment cannot parse: transformers will refuse it too
        return None
    named = _named(tree)
    found: list[str] = []
    for call in tree.find_all(nodes.Call):
        target = call.node
        if isinstance(target, nodes.Getattr) and target.attr in _LOOKING_METHODS \
                and not isinstance(target.node, nodes.Const):
            for arg in call.args[:1] + [k.value for k in call.kwargs[:1]]:
                found += _constants(arg, named)
    for node in tree.find_all(nodes.Filter):
        if node.name in _LOOKING_FILTERS:
            for arg in node.args[:1] + [k.value for k in node.kwargs[:1]]:
                found += _constants(arg, named)
    for compare in tree.find_all(nodes.Compare):
        left = compare.expr
        for operand in compare.ops:
            if operand.op in ("in", "notin") and not isinstance(operand.expr, nodes.Const):
                found += [value for value in _constants(left, named) if not _WORD.fullmatch(value)]
            elif operand.op in ("eq", "ne"):  # a slice of a text compared with markup: content[:15] == '<tool_response>'
                for one, other in ((left, operand.expr), (operand.expr, left)):
                    if isinstance(other, nodes.Getitem) and isinstance(other.arg, nodes.Slice):
                        found += [value for value in _constants(one, named) if not _WORD.fullmatch(value)]
            left = operand.expr
    return frozenset(s for s in found if len(s.strip()) > 1)


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
