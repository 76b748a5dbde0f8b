"""Summaries for summarise-span (seed 002): the summariser protocol, recorded and HTTP summarisers (an
OpenAI-compatible or Ollama endpoint, contacted only when the person configures one), the span hash a
summary is keyed by, and the SQLite store summaries are written back to."""
from __future__ import annotations

import hashlib
import json
import math
import threading
from typing import TYPE_CHECKING, Any, Literal, Mapping, Protocol, Sequence

from ..contracts import ToolCall
from ..errors import AssemblyCancelled, ContextBudgetError, InputFileError
from ..waiting import call_cancellable
from .model import Message

if TYPE_CHECKING:
    from ..result import AssemblyResult
    from .strategies import Summary


class Summariser(Protocol):
    def summarise(self, span: Sequence[Message], *, cancel: threading.Event | None = None) -> str: ...


def _call_summariser(summariser: Summariser, span: Sequence[Message], cancel: threading.Event | None) -> str:
    try:
        text = summariser.summarise(span, cancel=cancel)
    except (AssemblyCancelled, KeyboardInterrupt):
        raise
    except ContextBudgetError:
        raise
    except Exception as exc:  # transport failure, timeout, a broken reply: fail closed
        raise ContextBudgetError(f"the summariser failed: {type(exc).__name__}: {exc}") from exc
    if cancel is not None and cancel.is_set():
        raise AssemblyCancelled("cancelled during a summary call")
    if not isinstance(text, str) or not text.strip():
        raise ContextBudgetError("the summariser returned nothing usable (an empty summary)")
    return text.strip()


def _span_hash(span: Sequence[Message]) -> str:
    canonical = json.dumps([_dumped(m) for m in span], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # (a lone surrogate, which a message may hold, is hashed as written: strict UTF-8 raised on it)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


_TEXT_FIELDS = ("role", "content", "id", "tool_calls", "tool_call_id", "score", "source")  # all but ``pinned``


def _dumped(m: Message) -> dict:
    """``m.model_dump(mode="json", exclude={"pinned"})``: written directly for a message whose values are already
    what JSON mode gives (strings or None, a float score: a score copied in as ``1`` or ``True`` without validation is
    dumped ``1.0`` by pydantic; tool calls whose arguments are JSON's own values, ``_calls_dumped``), as pydantic's
    dump for any other (a span of a few hundred messages was hashed at 5 us a message)."""
    if (type(m) is Message and _PLAIN_DUMP and m.role.__class__ is str
            and (m.score is None or m.score.__class__ is float)
            and all(v is None or v.__class__ is str for v in (m.content, m.id, m.tool_call_id, m.source))):
        calls = _calls_dumped(m.tool_calls) if m.tool_calls else []
        if calls is not None:
            return {"role": m.role, "content": m.content, "id": m.id, "tool_calls": calls,
                    "tool_call_id": m.tool_call_id, "score": m.score, "source": m.source}
    return m.model_dump(mode="json", exclude={"pinned"})


def _calls_dumped(calls: list) -> list[dict] | None:
    """Each call's dump in JSON mode (``raw_arguments`` left out when ``None``, as its serializer leaves it), where the
    call is a ``ToolCall`` of this model's fields whose arguments hold JSON's own values only (``_json_native``: JSON
    mode gives them as they are); ``None`` for any other."""
    out = []
    for c in calls:
        if (type(c) is not ToolCall or not _PLAIN_CALL or c.id.__class__ is not str or c.name.__class__ is not str
                or not (c.raw_arguments is None or c.raw_arguments.__class__ is str)):
            return None
        try:
            native = _json_native(c.arguments)
        except RecursionError:  # (arguments nested past the interpreter's limit: pydantic's dump says what it does)
            return None
        if not native:
            return None
        out.append({"id": c.id, "name": c.name, "arguments": c.arguments} if c.raw_arguments is None else
                   {"id": c.id, "name": c.name, "arguments": c.arguments, "raw_arguments": c.raw_arguments})
    return out


def _json_native(value: Any) -> bool:
    """Whether ``value`` is made of JSON's own values only (``str``, ``int``, ``bool``, ``None``, a finite ``float``,
    lists, dicts with string keys: exactly those types), which pydantic's JSON mode gives as they are (a tuple, a set, an
    ``int`` subclass or an infinite float it would give otherwise)."""
    kind = value.__class__
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(map(_json_native, value))
    if kind is dict:
        return all(k.__class__ is str for k in value) and all(map(_json_native, value.values()))
    return False


_PLAIN_DUMP = tuple(Message.model_fields) == _TEXT_FIELDS[:3] + ("pinned",) + _TEXT_FIELDS[3:]  # (this model's fields)
_PLAIN_CALL = tuple(ToolCall.model_fields) == ("id", "name", "arguments", "raw_arguments")


# ---------------------------------------------------------------------------------------------
# Summarisers


class RecordedSummariser:
    """Replays summaries stored with a trace, keyed by the hash of the span they replaced."""

    def __init__(self, summaries: Mapping[str, str]) -> None:
        self.summaries = dict(summaries)

    @classmethod
    def from_result(cls, result: AssemblyResult) -> "RecordedSummariser":
        recorded = (result.model_extra or {}).get("summaries") or []
        return cls({item["span_hash"]: item["text"] for item in recorded})

    def summarise(self, span, *, cancel=None) -> str:
        digest = _span_hash(span)
        if digest not in self.summaries:
            raise ContextBudgetError(f"no recorded summary for span {digest[:12]} ({len(span)} messages); "
                                     "a recorded run cannot invent one")
        return self.summaries[digest]


class HttpSummariser:
    """Asks an OpenAI-compatible (``/v1/chat/completions``) or Ollama (``/api/chat``) endpoint for a
    summary. Contacted only when a person configures it; never by default."""

    PROMPT = ("Summarise the conversation below for a later turn of the same conversation. Keep every "
              "decision, constraint, name, number and open question; drop small talk. Plain text, at most "
              "120 words.")

    def __init__(self, base_url: str, model: str, *, api: Literal["openai", "ollama"] = "openai",
                 timeout: float = 30.0, api_key: str | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api = api
        self.timeout = timeout
        self.api_key = api_key

    def _body(self, span: Sequence[Message]) -> tuple[str, bytes]:
        transcript = "\n".join(f"{m.role}: {m.content or ''}" for m in span)
        messages = [{"role": "system", "content": self.PROMPT}, {"role": "user", "content": transcript}]
        if self.api == "ollama":
            url, body = f"{self.base_url}/api/chat", {"model": self.model, "messages": messages, "stream": False}
        else:
            url, body = f"{self.base_url}/v1/chat/completions", {"model": self.model, "messages": messages}
        return url, json.dumps(body).encode("utf-8")

    def _post(self, url: str, body: bytes) -> str:
        import urllib.request

        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - user-configured URL
            reply = json.loads(response.read().decode("utf-8"))
        if self.api == "ollama":
            return reply["message"]["content"]
        return reply["choices"][0]["message"]["content"]

    def summarise(self, span, *, cancel=None) -> str:
        url, body = self._body(span)
        # wait, but let a cancel interrupt the wait at once
        return call_cancellable(lambda: self._post(url, body), cancel, "cancelled during a summary call",
                                name="summary-call")


# ---------------------------------------------------------------------------------------------
# Summary store


class SummaryStore:
    """Summaries written back to a SQLite file the user names, one transaction per assembly."""

    SCHEMA = ("CREATE TABLE IF NOT EXISTS summaries (id TEXT NOT NULL, scope TEXT NOT NULL, source TEXT NOT NULL, "
              "replaces TEXT NOT NULL, span_hash TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (scope, id))")

    def __init__(self, path: str) -> None:
        import sqlite3

        self.path = path
        try:
            self._db = sqlite3.connect(path)
            with self._db:
                self._db.execute(self.SCHEMA)
        except sqlite3.Error as exc:
            raise InputFileError(path, f"cannot open the summary store ({exc})") from exc

    def write(self, scope: str, records: Sequence[tuple[str, Summary]]) -> None:
        import sqlite3

        try:
            with self._db:  # one transaction: all of this assembly's summaries or none
                for section, summary in records:
                    self._db.execute(
                        "INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?, ?, ?)",
                        (summary.id, scope, f"compaction:{section}", json.dumps(list(summary.replaces)),
                         summary.span_hash, summary.message.content or ""))
        except sqlite3.Error as exc:  # an I/O problem, not a budget one: bad input for the CLI (exit 2)
            raise InputFileError(self.path, f"writing summaries failed, nothing was written ({exc})") from exc

    def read(self, scope: str) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT id, source, replaces, span_hash, text FROM summaries WHERE scope = ? "
                                "ORDER BY id", (scope,)).fetchall()
        return [{"id": r[0], "source": r[1], "replaces": json.loads(r[2]), "span_hash": r[3], "text": r[4]}
                for r in rows]

    def close(self) -> None:
        self._db.close()
