"""Tool definitions the way OpenAI's chat models see them: a TypeScript-like ``namespace functions``.

OpenAI does not publish the prompt its models receive, but the rendering below is the one that
reproduces its billed ``usage.prompt_tokens`` (worked out by the community from recorded usage, e.g.
hmarr/openai-chat-tokens and the openai-cookbook's "How to count tokens" notebook, and checked here
against the real recordings in ``../shared/realworld*/``): each function is a ``type name = (_: {...})
=> any;`` line preceded by its description as a ``//`` comment; object properties are listed one per
line with ``?`` for optional ones, enums as unions of literals, arrays as ``T[]``.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from ..contracts import ToolDefinition


def render_namespace(tools: Sequence[ToolDefinition]) -> str:
    lines = ["namespace functions {", ""]
    for tool in tools:
        if tool.description:
            lines.append(f"// {tool.description}")
        params = tool.parameters if isinstance(tool.parameters, dict) else {}
        if params.get("properties"):
            lines.append(f"type {tool.name} = (_: {{")
            lines.append(_properties(params, 0))
            lines.append("}) => any;")
        else:
            lines.append(f"type {tool.name} = () => any;")
        lines.append("")
    lines.append("} // namespace functions")
    return "\n".join(lines)


def _properties(schema: dict[str, Any], indent: int) -> str:
    required = schema.get("required") or []
    lines = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        if prop.get("description") and indent < 2:
            lines.append(f"// {prop['description']}")
        mark = "" if name in required else "?"
        lines.append(f"{name}{mark}: {_type(prop, indent)},")
    return "\n".join(" " * indent + line for line in lines)


def _literal(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else json.dumps(value)


def _type(prop: dict[str, Any], indent: int) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):  # ["string", "null"]: a union
        return " | ".join(_type({**prop, "type": k}, indent) for k in kind)
    if "enum" in prop and isinstance(prop["enum"], list):
        return " | ".join(_literal(v) for v in prop["enum"])
    if kind in ("string", "number", "integer", "boolean", "null"):
        return "number" if kind == "integer" else kind
    if kind == "object" or "properties" in prop:
        if not prop.get("properties"):
            return "object"
        return "{\n" + _properties(prop, indent + 2) + "\n" + " " * indent + "}"
    if kind == "array":
        items = prop.get("items")
        return f"{_type(items, indent)}[]" if isinstance(items, dict) else "any[]"
    for union in ("anyOf", "oneOf"):
        if isinstance(prop.get(union), list):
            return " | ".join(_type(p, indent) for p in prop[union] if isinstance(p, dict))
    return "any"
