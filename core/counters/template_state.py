"""State a Jinja chat template carries from one message to the next.

Most templates write each message from its own fields, its neighbours and its position. Some keep a
``namespace`` made before the loop over the messages and change it as they write: the official DeepSeek-R1 template
writes the first tool call of the whole conversation with ``<｜Assistant｜><｜tool▁calls▁begin｜>`` and every later one
with a newline (``ns.is_first`` is never reset); Kimi K2 numbers every tool call of the conversation in its id; Cohere
Command R7B counts tool calls and documents. What one message adds to the prompt then depends on every message
before it, so the default assembly's item costs (each priced alone, or beside its neighbours) cannot be trusted:
such a request is assembled with the reference method, which counts every candidate prompt whole
(``TokenCounter.carried_state``).

``carried(source, environment)`` reads the template's syntax tree and returns the ``name.attribute`` pairs of
namespaces made outside a loop over the messages whose attribute is both set and read inside that loop, where the
loop writes output; and a loop over a slice of the messages that reads ``messages[loop.index0 - 1]`` (the whole
list's position, so another message than the one before: Bielik 11B v3). A namespace made inside the loop (Granite's ``content = namespace(val='')``, made afresh for
each message) carries nothing; nor does a loop that only looks (Qwen3 finds its last question in a loop that
writes nothing: what it found is the template's position logic, which the assemblies read otherwise). ``None``: the
template could not be read.
"""
from __future__ import annotations

from functools import lru_cache

from jinja2 import nodes


def carried(source: str, environment) -> frozenset[str] | None:
    found = _state(source, environment)
    return None if found is None else found[0]


def carried_outside_tools(source: str, environment) -> frozenset[str] | None:
    """The part of ``carried`` that a branch for something other than tool calls changes (a branch whose test names
    no tool, setting an attribute to another value than the namespace was made with: DeepSeek-R1 sets
    ``ns.is_tool = false`` for a user message, as it was made, so its state moves only with tool calls)."""
    found = _state(source, environment)
    return None if found is None else found[1]


def _state(source: str, environment) -> tuple[frozenset[str], frozenset[str]] | None:
    try:
        tree = environment.parse(source)
    except Exception:  # noqa: BLE001 - a template its environment cannot parse: transformers will refuse it too
        return None
    made = {(a.target.name, k.key): k.value for a in tree.find_all(nodes.Assign)
            if isinstance(a.target, nodes.Name) and _makes_namespace(a.node) for k in a.node.kwargs}
    found: set[str] = set()
    outside: set[str] = set()
    # (only loops over ``messages`` itself: a loop over a name set to it, Gemma 4's and Mistral Nemo's
    # ``loop_messages``, is not read, and those carry their previous message's type or an index for alternation,
    # which the assemblies read as neighbours; a template whose state is in such a loop is not caught)
    for loop in tree.find_all(nodes.For):
        if "messages" not in _names(loop.iter):
            continue
        body = nodes.Scope(loop.body)  # (a node to search the body with)
        if not isinstance(loop.iter, nodes.Name) and _indexes_by_loop(body, {"messages"}):
            found.add("messages[loop.index0]")  # a loop over a slice read by the whole list's positions: another
            continue  # message than its neighbour (Bielik 11B v3 skips the system message and reads one further back)
        if next(body.find_all(nodes.Output), None) is None:
            continue  # a loop that writes nothing
        fresh = {a.target.name for a in body.find_all(nodes.Assign)
                 if isinstance(a.target, nodes.Name) and _makes_namespace(a.node)}
        assigns: list[tuple[nodes.Assign, bool]] = []
        for child in loop.body:
            _assignments(child, False, assigns)
        written = {(a.target.name, a.target.attr) for a, _ in assigns
                   if isinstance(a.target, nodes.NSRef) and a.target.name not in fresh}
        read = {(g.node.name, g.attr) for g in body.find_all(nodes.Getattr) if isinstance(g.node, nodes.Name)}
        for name, attr in written & read:
            found.add(f"{name}.{attr}")
            initial = made.get((name, attr))
            if any(not in_tool and (a.target.name, a.target.attr) == (name, attr) and not (
                    isinstance(a.node, nodes.Const) and isinstance(initial, nodes.Const)
                    and type(a.node.value) is type(initial.value) and a.node.value == initial.value)
                   for a, in_tool in assigns if isinstance(a.target, nodes.NSRef)):
                outside.add(f"{name}.{attr}")
    return frozenset(found), frozenset(outside)


def _assignments(node: nodes.Node, in_tool: bool, out: list) -> None:
    """Every ``set`` under ``node``, with whether a branch or loop for tool calls holds it."""
    if isinstance(node, nodes.If):
        inside = in_tool or _names_tool(node.test)
        for child in node.body:
            _assignments(child, inside, out)
        for other in list(node.elif_) + list(node.else_):
            _assignments(other, in_tool, out)
        return
    if isinstance(node, nodes.For):
        inside = in_tool or _names_tool(node.iter)
        for child in list(node.body) + list(node.else_):
            _assignments(child, inside, out)
        return
    if isinstance(node, nodes.Assign):
        out.append((node, in_tool))
    for child in node.iter_child_nodes():
        _assignments(child, in_tool, out)


def _names_tool(node: nodes.Node) -> bool:
    """Whether a test or loop names a tool (``message.tool_calls``, ``message['role'] == 'tool'``)."""
    return any("tool" in c.value for c in node.find_all(nodes.Const) if isinstance(c.value, str)) or any(
        "tool" in g.attr for g in node.find_all(nodes.Getattr)) or (
        isinstance(node, nodes.Getattr) and "tool" in node.attr)


def _indexes_by_loop(body: nodes.Node, lists: set[str]) -> bool:
    """Whether ``body`` reads ``messages[...]`` (or a name for it) at a position worked out from ``loop.index0``."""
    for item in body.find_all(nodes.Getitem):
        if isinstance(item.node, nodes.Name) and item.node.name in lists and any(
                isinstance(g.node, nodes.Name) and g.node.name == "loop" and g.attr in ("index0", "index")
                for g in item.arg.find_all(nodes.Getattr)) | (isinstance(item.arg, nodes.Getattr)
                                                               and getattr(item.arg.node, "name", None) == "loop"):
            return True
    return False


def _names(node: nodes.Node) -> set[str]:
    names = {n.name for n in node.find_all(nodes.Name)}
    return names | {node.name} if isinstance(node, nodes.Name) else names


def _makes_namespace(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name == "namespace"


def carried_of_templates(templates: str | dict, outside_tools: bool = False) -> tuple[str, ...]:
    """``carried`` (or ``carried_outside_tools``) over every template of a tokenizer (a string, or named templates),
    sorted; a template that cannot be read carries nothing here (transformers refuses to render it, and every count
    says so)."""
    found: set[str] = set()
    for source in (templates.values() if isinstance(templates, dict) else [templates]):
        if isinstance(source, str):
            state = _state_of_source(source)
            found |= set(state[1] if outside_tools else state[0]) if state else set()
    return tuple(sorted(found))


@lru_cache(maxsize=32)
def _state_of_source(source: str) -> tuple[frozenset[str], frozenset[str]] | None:
    from .template_compare import _environment

    return _state(source, _environment(source))
