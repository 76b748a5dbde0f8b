"""Where a chat template writes the generation prompt, read from its syntax: the render without it is then the render
with it less a tail that a two-message render shows, not a second render of a long request.

The variant counts (``hf_variants``) need a request's render without the generation prompt beside the one with it
(to find the prompt and where its tokens start). Most templates end with ``{% if add_generation_prompt %}...{% endif %}``
and name ``add_generation_prompt`` nowhere else: what that block writes is then appended to the render and depends on
nothing the messages change where the block reads no name the template sets (``ns``, a loop variable, a value
computed from the messages), not ``messages`` nor ``loop``, and calls nothing. ``tail_only`` says so of every
template of a tokenizer; a template that names ``add_generation_prompt`` nowhere writes the same text either way.
Anything else (an ``else`` branch: Phi-3.5 writes the end-of-text token when no reply is asked; the flag read inside
the loop; a template that cannot be read) is rendered twice, as before.
"""
from __future__ import annotations

from functools import lru_cache

from jinja2 import nodes

FLAG = "add_generation_prompt"
_MESSAGE_STATE = frozenset({"messages", "loop", "message", "self", "caller", "varargs", "kwargs"})


def _assigned(tree: nodes.Template) -> set[str]:
    """Every name the template sets: ``set`` targets, loop variables, macro arguments, names a ``with`` binds."""
    names: set[str] = set()
    for node in tree.find_all((nodes.Assign, nodes.AssignBlock, nodes.For, nodes.With)):
        targets = [node.target] if not isinstance(node, nodes.With) else node.targets
        for target in targets:
            names |= {n.name for n in target.find_all(nodes.Name)} | (
                {target.name} if isinstance(target, nodes.Name) else set())
    for macro in tree.find_all((nodes.Macro, nodes.CallBlock)):
        names |= {arg.name for arg in macro.args}
    return names


def kind_of_source(source: str, environment) -> str | None:
    """``"none"``: the template names ``add_generation_prompt`` nowhere; ``"tail"``: only in the test of a last
    top-level ``if`` without ``elif`` or ``else`` whose body reads no message state and calls nothing; else ``None``."""
    try:
        tree = environment.parse(source)
    except Exception:  # noqa: BLE001 - a template its environment cannot parse: rendered, and refused, as before
        return None
    uses = [n for n in tree.find_all(nodes.Name) if n.name == FLAG]
    if not uses:
        return "none"
    last = tree.body[-1] if tree.body else None
    if (len(uses) != 1 or not isinstance(last, nodes.If) or not isinstance(last.test, nodes.Name)
            or last.test.name != FLAG or last.elif_ or last.else_):
        return None
    body = nodes.Template(last.body)  # (what the block writes)
    if any(True for _ in body.find_all((nodes.Call, nodes.Macro, nodes.CallBlock, nodes.Assign, nodes.AssignBlock,
                                        nodes.For, nodes.Include, nodes.Import, nodes.FromImport))):
        return None
    read = {n.name for n in body.find_all(nodes.Name)}
    if read & (_MESSAGE_STATE | _assigned(tree)):
        return None
    return "tail"


def tail_only(templates) -> str | None:
    """``kind_of_source`` of every template of a tokenizer (a string, or a dict of named ones): ``"none"`` where no
    template names the flag, ``"tail"`` where each names it at most at its end as above, else ``None``."""
    kinds = {_kind(source) for source in (templates.values() if isinstance(templates, dict) else [templates])
             if isinstance(source, str)}
    if not kinds or None in kinds:
        return None
    return "none" if kinds == {"none"} else "tail"


@lru_cache(maxsize=32)
def _kind(source: str) -> str | None:
    from .template_compare import _environment

    return kind_of_source(source, _environment(source))
