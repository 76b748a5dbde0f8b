"""What an importer hands back: the file's format, one normalised request per model call, and
every warning about what could not be mapped, each with its place in the file."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..contracts import ChatMessage, ToolDefinition
from ..errors import InputFileError

# Format names ``detect`` reports, with what each is.
FORMATS: dict[str, str] = {
    "openai-chat": "OpenAI Chat Completions request body",
    "anthropic-messages": "Anthropic Messages request body",
    "otlp-json": "OTLP JSON trace export",
    "otlp-jsonl": "OTLP JSON Lines trace export (one TracesData per line)",
    "genai-attributes": "one span's attributes as a flat JSON object",
    "genai-messages": "an OTel GenAI message list (a gen_ai.input.messages value saved as a file)",
    "vcr-cassette": "VCR cassette of recorded HTTP interactions",
    "langfuse-trace": "Langfuse trace export (trace with observations)",
    "phoenix-spans": "Phoenix span list",
    "promptfoo-export": "promptfoo eval export",
    "openai-responses": "OpenAI Responses API request body",
    "gemini-generate": "Gemini / Vertex AI generateContent request body",
    "bedrock-converse": "Amazon Bedrock Converse request body",
    "nock-recording": "nock recording of HTTP requests (a JSON list of scope, method, path, body, response)",
    "otel-js-spans": "OpenTelemetry JS spans as a JSON list (Vercel AI SDK and others)",
    "claude-code-transcript": "Claude Code session transcript (JSON Lines; calls reconstructed from the conversation)",
    "codex-rollout": "OpenAI Codex CLI session rollout (JSON Lines; calls reconstructed from the conversation)",
    "context-inspector": "Context Inspector request or recorded result (open it with core.load_entries)",
    "unknown": "not a format Context Inspector imports",
}


@dataclass(frozen=True)
class FormatInfo:
    """The format found by content (``name`` is a key of ``FORMATS``) and what was seen."""

    name: str
    detail: str


@dataclass(frozen=True)
class ImportNote:
    """Something in the file that could not be mapped (or was mapped with a loss), and where."""

    place: str
    message: str

    def __str__(self) -> str:
        return f"{self.place}: {self.message}" if self.place else self.message


@dataclass(frozen=True)
class Recorded:
    """What the file recorded about the call beside the messages. ``format`` names the file's format
    and, after a slash, the flavour the request was read from (``otlp-json/openinference``)."""

    format: str
    model: str | None = None
    provider: str | None = None
    input_tokens: int | None = None  # the provider's own figure for the whole input
    output_tokens: int | None = None
    finish_reason: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    name: str | None = None
    source_place: str = ""
    max_output_tokens: int | None = None  # what the request asked for (max_tokens and the like)
    # Optional per-call metadata, set where the file records it (transcripts, Responses, Gemini, Bedrock):
    cached_input_tokens: int | None = None  # of input_tokens, read from the provider's prompt cache
    cache_write_tokens: int | None = None  # of input_tokens, written to the prompt cache
    started_at: str | None = None  # ISO 8601 time of the call as the file records it
    entry_id: str | None = None  # the file's own id of the call (a transcript line's uuid, a response id)
    parent_id: str | None = None  # the id of the entry it follows (parentUuid, previous_response_id)
    session_id: str | None = None  # the session or conversation the call belongs to
    reconstructed: bool = False  # the input was rebuilt from a conversation log, not recorded byte for byte
    # Where the call sits in its trace (sessions read these; None where the file does not record them).
    start_time: float | None = None  # Unix seconds
    end_time: float | None = None
    parent_span_id: str | None = None
    conversation_id: str | None = None  # an explicit conversation (gen_ai.conversation.id, a transcript's session)


@dataclass
class ImportedRequest:
    """One model call as recorded, normalised: messages, tools, the section each message belongs
    to (inferred), where each message sits in the file, and the recorded answer when present."""

    label: str
    messages: list[ChatMessage]
    tools: list[ToolDefinition]
    recorded: Recorded
    sections: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    output: list[ChatMessage] = field(default_factory=list)
    warnings: list[ImportNote] = field(default_factory=list)


@dataclass(frozen=True)
class FailedCall:
    """A model call of the file that could not be read: its label, where it is, and why.
    ``position`` is its index among all the file's calls (read and failed) in file order."""

    label: str
    place: str
    reason: str
    position: int

    def __str__(self) -> str:
        return f"{self.label}: not read: {self.place + ': ' if self.place else ''}{self.reason}"


@dataclass(frozen=True)
class SpanNode:
    """One span (or Langfuse observation) of a trace, model call or not: the tree sessions draw."""

    span_id: str
    parent_id: str | None
    name: str
    kind: str  # the file's own word: LLM, AGENT, TOOL, CHAIN, GENERATION, SPAN... ("" when it has none)
    model_call: bool
    trace_id: str | None = None
    start_time: float | None = None  # Unix seconds
    end_time: float | None = None


@dataclass
class ImportedFile:
    """A whole file: its format, its requests in file order, the model calls that could not be read
    (``failed``), and every warning (the file's own and each request's, so this list alone says
    everything that was not mapped)."""

    path: str
    format: FormatInfo
    requests: list[ImportedRequest]
    warnings: list[ImportNote] = field(default_factory=list)
    failed: list[FailedCall] = field(default_factory=list)
    spans: list[SpanNode] = field(default_factory=list)  # every span of the file's traces, where it has them

    def calls(self) -> list[ImportedRequest | FailedCall]:
        """Every model call in file order: the requests read and the calls that failed."""
        out: list[ImportedRequest | FailedCall] = list(self.requests)
        for failure in sorted(self.failed, key=lambda f: f.position):
            out.insert(min(failure.position, len(out)), failure)
        return out


class FormatError(InputFileError):
    """A file is (or looks like) a known format but is malformed or truncated where it matters.

    The message names the file, the format, the place and the problem:
    ``trace.json:12:5: otlp-json: resourceSpans[0].scopeSpans: expected a list, found a string``.
    """

    def __init__(self, path: str, format_name: str, place: str, problem: str, *,
                 line: int | None = None, column: int | None = None):
        self.format_name = format_name
        self.place = place
        self.detail = problem
        where = f"{place}: " if place else ""
        super().__init__(path, f"{format_name}: {where}{problem}", line=line, column=column)


class UnsupportedFormat(FormatError):
    """The file's content is not one of the formats in ``FORMATS`` (or is our own request/result)."""
