"""Which message fields a Jinja chat template compares between messages by value.

Most templates render each message from its own fields and its position (``loop.first``,
``messages[0]``, the last user message's index): what a message adds to the count is then the same
whichever texts the other messages hold. A few compare messages with one another: Mistral Nemo's
``message == user_messages[-1]`` writes the tool list beside every user message *equal* to the last
one, so a history turn that repeats the question costs the tool list again. The default assembly's
per-item predictions hold only where no such comparison can see two equal values.

``compared_fields(source, environment)`` reads the template's syntax tree, follows every value that
comes from ``messages`` (through ``set``, ``for``, namespaces, filters, macro arguments; flow- and
scope-insensitively, so it may say too much, never too little) and returns the fields compared
between two such values by ``==``, ``!=``, ``in``, ``not in``, the ``equalto``/``sameas``/``in``
tests, ``.index()``/``.count()``, ``loop.changed`` or ``unique``/``groupby``: ``"message"`` for whole
messages, else the field names (``"content"``, ``"tool_call_id"``...). Comparing roles alone is not
reported: a message's role is part of the shape the assembly learns. ``None``: the template could
not be read (the caller then assumes it compares whole messages).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import nodes

MESSAGE = "message"  # a whole message, or a list of them
ROLE = "role"
_EQUALITY_OPS = {"eq", "ne", "in", "notin"}
_EQUALITY_TESTS = {"equalto", "eq", "==", "sameas", "in", "ne", "!="}
_COMPARING_FILTERS = {"unique", "groupby"}
_COMPARING_METHODS = {"index", "count"}
_SCALAR_FILTERS = {"length", "count", "wordcount"}  # a size, not a value: where a message is, not what it holds
_MAX_PASSES = 12


class _Taint:
    """One flow-insensitive pass over the tree; repeated until the names' labels no longer grow."""

    def __init__(self, template: nodes.Template) -> None:
        self.template = template
        self.names: dict[str, frozenset[str]] = {"messages": frozenset({MESSAGE})}
        self.macros: dict[str, list[str]] = {m.name: [a.name for a in m.args] for m in template.find_all(nodes.Macro)}
        self.compared: set[str] = set()
        self.changed = False

    def run(self) -> frozenset[str]:
        for _ in range(_MAX_PASSES):
            self.changed = False
            self.visit(self.template)
            if not self.changed:
                break
        return frozenset(self.compared)

    def assign(self, key: str, labels: frozenset[str]) -> None:
        if labels and not labels <= self.names.get(key, frozenset()):
            self.names[key] = self.names.get(key, frozenset()) | labels
            self.changed = True

    def assign_target(self, target: nodes.Node, labels: frozenset[str]) -> None:
        if isinstance(target, nodes.Name):
            self.assign(target.name, labels)
        elif isinstance(target, nodes.NSRef):
            self.assign(f"{target.name}.{target.attr}", labels)
        elif isinstance(target, (nodes.Tuple, nodes.List)):
            for item in target.items:
                self.assign_target(item, labels)

    def record(self, *operands: frozenset[str]) -> None:
        tainted = [labels for labels in operands if labels]
        if len(tainted) >= 2:
            fields = frozenset().union(*tainted) - {ROLE}
            if fields and not fields <= self.compared:
                self.compared |= fields

    # ---- statements

    def visit(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.For):
            labels = self.labels(node.iter)
            self.assign_target(node.target, labels)
            self.assign("loop", labels)
            if node.test is not None:
                self.labels(node.test)
            for child in node.body + node.else_:
                self.visit(child)
            return
        if isinstance(node, nodes.Assign):
            self.assign_target(node.target, self.labels(node.node))
            return
        if isinstance(node, nodes.AssignBlock):
            outputs = [self.labels(e) for o in node.find_all(nodes.Output) for e in o.nodes]
            self.assign_target(node.target, frozenset().union(*outputs) if outputs else frozenset())
        if isinstance(node, nodes.With):
            for target, value in zip(node.targets, node.values):
                self.assign_target(target, self.labels(value))
        if isinstance(node, nodes.Expr):
            self.labels(node)
            return
        for child in node.iter_child_nodes():
            self.visit(child)

    # ---- expressions: the labels of the message fields a value carries

    def labels(self, node: Any) -> frozenset[str]:
        if not isinstance(node, nodes.Node):
            return frozenset()
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is not None:
            return method(node)
        found = [self.labels(child) for child in node.iter_child_nodes()]
        return frozenset().union(*found) if found else frozenset()

    def _Const(self, node) -> frozenset[str]:
        return frozenset()

    def _Name(self, node: nodes.Name) -> frozenset[str]:
        return self.names.get(node.name, frozenset())

    def _Not(self, node) -> frozenset[str]:
        self.labels(node.node)
        return frozenset()

    def _field(self, base: frozenset[str], field: Any) -> frozenset[str]:
        if MESSAGE not in base:
            return base
        rest = base - {MESSAGE}
        return rest | {field if isinstance(field, str) else MESSAGE}

    def _Getattr(self, node: nodes.Getattr) -> frozenset[str]:
        if isinstance(node.node, nodes.Name):
            if node.node.name == "loop":
                return self.names.get("loop", frozenset()) if node.attr in ("previtem", "nextitem") else frozenset()
            ns = self.names.get(f"{node.node.name}.{node.attr}")
            if ns is not None:
                return ns | self._field(self.labels(node.node), node.attr)
        return self._field(self.labels(node.node), node.attr)

    def _Getitem(self, node: nodes.Getitem) -> frozenset[str]:
        self.labels(node.arg)
        key = node.arg.value if isinstance(node.arg, nodes.Const) else None
        return self._field(self.labels(node.node), key)

    def _Compare(self, node: nodes.Compare) -> frozenset[str]:
        left = self.labels(node.expr)
        for operand in node.ops:
            right = self.labels(operand.expr)
            if operand.op in _EQUALITY_OPS:
                self.record(left, right)
            left = right
        return frozenset()

    def _Test(self, node: nodes.Test) -> frozenset[str]:
        subject = self.labels(node.node)
        args = [self.labels(a) for a in node.args] + [self.labels(k.value) for k in node.kwargs]
        if node.name in _EQUALITY_TESTS:
            self.record(subject, *args)
        return frozenset()

    def _Filter(self, node: nodes.Filter) -> frozenset[str]:
        subject = self.labels(node.node) if node.node is not None else frozenset()
        args = [self.labels(a) for a in node.args] + [self.labels(k.value) for k in node.kwargs]
        names = [a.value for a in node.args if isinstance(a, nodes.Const) and isinstance(a.value, str)]
        if node.name in _COMPARING_FILTERS and subject:
            self.record(subject, subject)
        if node.name in ("selectattr", "rejectattr", "select", "reject") and set(names) & _EQUALITY_TESTS:
            attr = frozenset({names[0]}) if node.name.endswith("attr") and names and MESSAGE in subject else subject
            self.record(attr, *args)
        if node.name in _SCALAR_FILTERS:
            return frozenset()
        attribute = next((k.value.value for k in node.kwargs if k.key == "attribute"
                          and isinstance(k.value, nodes.Const)), None)
        if node.name == "map" and isinstance(attribute, str):
            return self._field(subject, attribute.split(".")[0])
        return frozenset().union(subject, *args)

    def _Call(self, node: nodes.Call) -> frozenset[str]:
        args = [self.labels(a) for a in node.args]
        kwargs = {k.key: self.labels(k.value) for k in node.kwargs}
        for extra in (node.dyn_args, node.dyn_kwargs):
            if extra is not None:
                args.append(self.labels(extra))
        callee = node.node
        if isinstance(callee, nodes.Name):
            params = self.macros.get(callee.name)
            if params is not None:  # a macro: its parameters carry what the call passes
                for name, labels in zip(params, args):
                    self.assign(name, labels)
                for name, labels in kwargs.items():
                    self.assign(name, labels)
            elif callee.name == "namespace":
                return frozenset().union(*kwargs.values()) if kwargs else frozenset()
            return frozenset().union(*args, *kwargs.values())
        if isinstance(callee, nodes.Getattr):
            owner = self.labels(callee.node)
            if isinstance(callee.node, nodes.Name) and callee.node.name == "loop":
                if callee.attr == "changed":  # compares its arguments with the last iteration's
                    changed = frozenset().union(*args)
                    self.record(changed, changed)
                return frozenset()
            if callee.attr in _COMPARING_METHODS:
                self.record(owner, *args)
                return frozenset()
            if callee.attr == "get" and args and isinstance(node.args[0], nodes.Const):
                return self._field(owner, node.args[0].value)
            return frozenset().union(owner, *args, *kwargs.values())
        return frozenset().union(self.labels(callee), *args, *kwargs.values())

    def _CondExpr(self, node: nodes.CondExpr) -> frozenset[str]:
        self.labels(node.test)
        return self.labels(node.expr1) | self.labels(node.expr2)


def compared_fields(source: str, environment) -> frozenset[str] | None:
    """The message fields ``source`` compares between messages (see the module's words); ``None`` when the
    template cannot be parsed."""
    try:
        tree = environment.parse(source)
    except Exception:  # noqa: BLE001 - a template this cannot read is taken to compare whole messages
        return None
    return _Taint(tree).run()


def fields_of_templates(templates: str | dict) -> frozenset[str]:
    """``compared_fields`` over every template of a tokenizer (a string, or named templates: transformers picks
    ``tool_use`` by itself when tools are passed), parsed by the environment transformers renders them in."""
    found: set[str] = set()
    for source in (templates.values() if isinstance(templates, dict) else [templates]):
        if not isinstance(source, str):
            continue
        fields = _fields_of_source(source)
        found |= {MESSAGE} if fields is None else fields
    return frozenset(found)


@lru_cache(maxsize=32)
def _fields_of_source(source: str) -> frozenset[str] | None:
    """``compared_fields`` of one template, worked out once per process: it depends on the template's text only
    (and the environment transformers compiles that text in), and reading its syntax tree takes milliseconds (a
    tenth of a small plan's assembly on a counter made afresh for it, as a replay in a worker or a new window's is)."""
    return compared_fields(source, _environment(source))


def _environment(source: str):
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template

        return _compile_jinja_template(source).environment
    except Exception:  # noqa: BLE001 - another transformers, or a template it does not compile
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        return ImmutableSandboxedEnvironment(extensions=[loopcontrols])
