"""Reading a file into decoded records: one JSON value, JSON Lines, or YAML.

YAML is read with ``yaml.SafeLoader`` semantics plus ``!!binary`` (already safe: it gives bytes).
Any other tag (``!!python/object/apply:...``, ``!custom``) is read as the plain mapping, list or
string it is written as, and named in a note: nothing is ever constructed or executed from a tag.
A file that cannot be decoded raises ``FormatError`` naming the format it looks like and the place.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..inputs import MAX_NESTING, MAX_YAML_BYTES, check_value, decode_json
from ..loading import looks_like_jsonl, read_text
from .model import FormatError, ImportNote

# Key names that give a format away even in a file cut off half-way.
_PREFIX_HINTS: tuple[tuple[str, str], ...] = (
    (r'"parentUuid"|"isSidechain"', "claude-code-transcript"),
    (r'"type"\s*:\s*"(session_meta|response_item|turn_context|event_msg|compacted)"', "codex-rollout"),
    (r'"resource(Spans|Logs)"|"resource_(spans|logs)"', "otlp-json"),
    (r'^\s*(interactions|http_interactions)\s*:|"(http_)?interactions"', "vcr-cassette"),
    (r'"observations"', "langfuse-trace"),
    (r'"evalId"', "promptfoo-export"),
    (r'"span_kind"|"context"\s*:\s*\{\s*"trace_id"', "phoenix-spans"),
    (r'^\s*\[\s*\{\s*"scope"\s*:', "nock-recording"),
    (r'"ai\.prompt\.messages"|"instrumentationScope"', "otel-js-spans"),
    (r'"toolUse"|"toolResult"|"toolConfig"|"inferenceConfig"|"reasoningContent"', "bedrock-converse"),
    (r'"contents"\s*:\s*\[|"systemInstruction"|"functionDeclarations"', "gemini-generate"),
    (r'"previous_response_id"|"function_call_output"|"input"\s*:\s*\[', "openai-responses"),
    (r'"input_schema"|"tool_use"|"tool_result"|"system"\s*:\s*\[', "anthropic-messages"),
    (r'"messages"', "openai-chat"),
    (r'"gen_ai\.|"llm\.input_messages', "genai-attributes"),
)


def guess_format(text: str) -> str:
    """The format a (possibly broken) text most likely is, from the first key names it mentions."""
    head = text[:20000]
    for pattern, name in _PREFIX_HINTS:
        if re.search(pattern, head, re.MULTILINE):
            return name
    return "json"


@dataclass
class Parsed:
    """Decoded records: ``(line, value)``; ``line`` is set for JSON Lines only."""

    path: str
    kind: str  # "json" | "jsonl" | "yaml"
    records: list[tuple[int | None, Any]]
    notes: list[ImportNote] = field(default_factory=list)
    one_line: bool = False  # a single JSON object on one line: also a one-line JSON Lines file

    @property
    def single(self) -> Any:
        return self.records[0][1] if self.kind != "jsonl" and self.records else None


class _CassetteLoader(yaml.SafeLoader):
    """SafeLoader that reads unknown tags as plain values instead of refusing the file."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.unknown_tags: list[tuple[str, int]] = []
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent, index):  # bounded: no alias bombs, no nesting past the input layer's limit
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise _YamlLimit(f"more than {MAX_YAML_ALIASES} aliases (a YAML alias bomb?)")
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                raise _YamlLimit(f"YAML nested more than {MAX_NESTING} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _YamlLimit(Exception):
    """A limit of the input layer, met while composing a YAML document."""


def _plain(loader: _CassetteLoader, node: yaml.Node) -> Any:
    loader.unknown_tags.append((node.tag, node.start_mark.line + 1))
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_CassetteLoader.add_constructor(None, _plain)
MAX_YAML_ALIASES = 10_000


def load_yaml(text: str, path: str) -> tuple[Any, list[ImportNote]]:
    if len(text) > MAX_YAML_BYTES:
        raise FormatError(path, "yaml", "", f"a YAML document of {len(text):,} characters, over the "
                                            f"{MAX_YAML_BYTES:,} limit")
    try:
        loader = _CassetteLoader(text)  # its reader refuses control characters at once
    except yaml.YAMLError as exc:
        raise FormatError(path, "yaml", "", f"malformed YAML: {exc}".split("\n")[0]) from None
    try:
        data = loader.get_single_data()
        check_value(data, max_nodes=4 * len(text) + 10_000)  # aliases may not multiply the document
    except (_YamlLimit, ValueError) as exc:
        raise FormatError(path, "yaml", "", str(exc)) from None
    except RecursionError:
        raise FormatError(path, "yaml", "", "YAML nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise FormatError(path, guess_format(text) if guess_format(text) != "json" else "yaml", "",
                          f"malformed YAML: {exc.problem or exc.context}",
                          line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise FormatError(path, "yaml", "", f"malformed YAML: {exc}") from None
    finally:
        loader.dispose()
    notes = [ImportNote(f"line {line}", f"YAML tag {tag} is not a plain type; read as plain data, not constructed")
             for tag, line in loader.unknown_tags]
    return data, notes


def _json_error(path: str, text: str, exc: json.JSONDecodeError, line_offset: int = 0) -> FormatError:
    truncated = exc.pos >= len(text.rstrip()) - 1
    problem = f"malformed JSON: {exc.msg}" + (" (the file ends early: truncated?)" if truncated else "")
    return FormatError(path, guess_format(text), "", problem, line=exc.lineno + line_offset, column=exc.colno)


def parse_text(text: str, path: str) -> Parsed:
    stripped = text.lstrip()
    if not stripped:
        raise FormatError(path, "unknown", "", "the file is empty")
    if looks_like_jsonl(text):
        records: list[tuple[int | None, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, decode_json(line)))
            except json.JSONDecodeError as exc:
                raise _json_error(path, line, exc, line_offset=number - 1) from None
            except ValueError as exc:  # a limit of the input layer
                raise FormatError(path, guess_format(line), f"line {number}", str(exc)) from None
        return Parsed(path, "jsonl", records)
    if stripped[0] in "{[":
        try:
            return Parsed(path, "json", [(None, decode_json(text))], one_line="\n" not in text.strip())
        except json.JSONDecodeError as exc:
            raise _json_error(path, text, exc) from None
        except ValueError as exc:  # a limit of the input layer
            raise FormatError(path, guess_format(text), "", str(exc)) from None
    data, notes = load_yaml(text, path)
    if not isinstance(data, (dict, list)):
        raise FormatError(path, "unknown", "", f"neither JSON nor a YAML mapping (found a {type(data).__name__})")
    return Parsed(path, "yaml", [(None, data)], notes)


def parse_file(path: str | Path) -> Parsed:
    return parse_text(read_text(path), str(path))
