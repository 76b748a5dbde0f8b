"""Model endpoints an experiment sends its requests to: OpenAI-compatible chat completions
(llama.cpp's server, vLLM, Ollama's ``/v1``, a provider with a key) and Ollama's native ``/api/chat``.

Contacted only when a person runs an experiment, only at the address they gave. An API key is read
from an environment variable the person names; it travels in one request header and nowhere else:
it is never part of the body we record, and a response that echoes it back is recorded with the key
replaced (``KEY_REMOVED``).
"""
from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ContextInspectorError

API_KINDS = ("openai", "ollama")
KEY_REMOVED = "[api key removed]"


class EndpointError(ContextInspectorError):
    """The endpoint could not be reached, did not answer in time, or answered with an error."""

    def __init__(self, url: str, problem: str, *, status: int | None = None, body: str | None = None):
        self.url = url
        self.problem = problem
        self.status = status  # the HTTP status when the server answered with an error
        self.body = body  # what it said (key removed)
        super().__init__(f"{url}: {problem}")

    @property
    def refused_request(self) -> bool:
        """The server is there and refused this one request (HTTP 400, 422, 500...): recorded as that
        run's answer. Not for 401/403/404, which say the endpoint, model or key is wrong."""
        return self.status is not None and self.status not in (401, 403, 404, 405)


@dataclass(frozen=True)
class Sampling:
    """Generation settings held constant across an experiment (the seed varies per run)."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int | None = None  # None: the request's own max_new_tokens

    def to_json(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}


@dataclass
class Reply:
    """One answer as the server gave it."""

    raw: str  # the response body as received (with any echoed key removed)
    content: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    reported_model: str | None
    extra: dict[str, Any] = field(default_factory=dict)  # system_fingerprint and the like


def public_url(url: str) -> str:
    """The URL as records show it: no user name, password, query or fragment."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class Endpoint:
    """A chat endpoint: ``body_for`` builds the exact bytes to send, ``send`` posts them."""

    def __init__(self, base_url: str, model: str, *, api: Literal["openai", "ollama"] = "openai",
                 timeout: float = 120.0, api_key_env: str | None = None) -> None:
        if api not in API_KINDS:
            raise ValueError(f"api must be one of {', '.join(API_KINDS)}, not {api!r}")
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the endpoint must be an http(s) URL, not {base_url!r}")
        if timeout <= 0:
            raise ValueError(f"the timeout must be positive, not {timeout}")
        self.base_url = base_url.rstrip("/")
        for suffix in ("/v1/chat/completions", "/api/chat", "/v1"):
            if self.base_url.endswith(suffix):
                self.base_url = self.base_url[: -len(suffix)]
                break
        self.model = model
        self.api = api
        self.timeout = timeout
        self.api_key_env = api_key_env
        self._key: str | None = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"the environment variable {api_key_env} (named by --api-key-env) is not set")
            self._key = key

    # ---- what is sent

    @property
    def chat_url(self) -> str:
        return self.base_url + ("/api/chat" if self.api == "ollama" else "/v1/chat/completions")

    def identity(self) -> dict[str, Any]:
        """The endpoint as a record shows it: never the key, only the variable's name."""
        out: dict[str, Any] = {"url": public_url(self.chat_url), "api": self.api, "timeout_seconds": self.timeout}
        if self.api_key_env:
            out["api_key_env"] = self.api_key_env
        return out

    def body_for(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], sampling: Sampling,
                 max_tokens: int, seed: int) -> bytes:
        """The exact request body for one run (UTF-8 JSON, keys in a fixed order)."""
        if self.api == "ollama":
            body: dict[str, Any] = {"model": self.model, "messages": [_ollama_message(m) for m in messages],
                                    "stream": False,
                                    "options": {"temperature": sampling.temperature, "top_p": sampling.top_p,
                                                "num_predict": max_tokens, "seed": seed}}
            if tools:
                body["tools"] = tools
        else:
            body = {"model": self.model, "messages": messages, "temperature": sampling.temperature,
                    "top_p": sampling.top_p, "max_tokens": max_tokens, "seed": seed, "stream": False}
            if tools:
                body["tools"] = tools
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    # ---- talking to the server

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def scrub(self, text: str) -> str:
        """``text`` with the key (if any) replaced: what a record may hold."""
        return text.replace(self._key, KEY_REMOVED) if self._key else text

    def _exchange(self, url: str, body: bytes | None) -> str:
        method = "POST" if body is not None else "GET"
        request = urllib.request.Request(url, data=body, headers=self._headers(), method=method)
        shown = public_url(url)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - person's URL
                raw = response.read()
        except urllib.error.HTTPError as exc:
            said = self.scrub(exc.read().decode("utf-8", "replace"))
            detail = said.strip().replace("\n", " ")
            raise EndpointError(shown, f"the server answered HTTP {exc.code}: {detail[:300] or exc.reason}",
                                status=exc.code, body=said) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise EndpointError(shown, f"no answer within {self.timeout:g} s (timeout)") from None
            if isinstance(reason, ConnectionRefusedError):
                raise EndpointError(shown, "cannot connect: connection refused (is the server running?)") from None
            raise EndpointError(shown, f"cannot connect: {getattr(reason, 'strerror', None) or reason}") from None
        except (socket.timeout, TimeoutError):
            raise EndpointError(shown, f"no answer within {self.timeout:g} s (timeout)") from None
        except (ConnectionError, OSError) as exc:
            raise EndpointError(shown, f"the connection failed: {exc.strerror or exc}") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EndpointError(shown, "the answer is not UTF-8") from None

    def model_identity(self) -> dict[str, Any]:
        """What the server says about the model (``/v1/models`` or Ollama's ``/api/tags``): its id and,
        where reported, a digest. Unreachable is an error; a server without the listing reports nothing."""
        url = self.base_url + ("/api/tags" if self.api == "ollama" else "/v1/models")
        try:
            listing = json.loads(self._exchange(url, None))
        except EndpointError as exc:
            if "HTTP 404" in exc.problem or "HTTP 405" in exc.problem:
                return {"requested": self.model, "listed": None}
            raise
        except json.JSONDecodeError:
            return {"requested": self.model, "listed": None}
        entries = listing.get("models" if self.api == "ollama" else "data") if isinstance(listing, dict) else None
        found: dict[str, Any] | None = None
        for entry in entries or []:
            if isinstance(entry, dict) and self.model in (entry.get("id"), entry.get("name"), entry.get("model")):
                found = entry
                break
        out: dict[str, Any] = {"requested": self.model, "listed": found is not None}
        if found is not None:
            for key in ("id", "name", "digest", "owned_by", "created", "modified_at", "size"):
                if key in found:
                    out[key] = found[key]
            details = found.get("details")
            if isinstance(details, dict):
                out["details"] = details
        return out

    def send(self, body: bytes) -> tuple[Reply, float]:
        """Post ``body``; the reply and the seconds it took."""
        started = time.perf_counter()
        raw = self.scrub(self._exchange(self.chat_url, body))
        latency = time.perf_counter() - started
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            raise EndpointError(public_url(self.chat_url), f"the answer is not JSON: {raw[:120]!r}") from None
        return self._reply(raw, data), latency

    def _reply(self, raw: str, data: Any) -> Reply:
        if not isinstance(data, dict):
            raise EndpointError(public_url(self.chat_url), "the answer is not a JSON object")
        if self.api == "ollama":
            message = data.get("message") or {}
            return Reply(raw=raw, content=message.get("content"), finish_reason=data.get("done_reason"),
                         prompt_tokens=_int(data.get("prompt_eval_count")),
                         completion_tokens=_int(data.get("eval_count")), reported_model=data.get("model"))
        choices = data.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        usage = data.get("usage") or {}
        extra = {k: data[k] for k in ("system_fingerprint", "id") if data.get(k) is not None}
        if message.get("tool_calls"):
            extra["tool_calls"] = message["tool_calls"]
        return Reply(raw=raw, content=message.get("content"), finish_reason=choice.get("finish_reason"),
                     prompt_tokens=_int(usage.get("prompt_tokens")),
                     completion_tokens=_int(usage.get("completion_tokens")), reported_model=data.get("model"),
                     extra=extra)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ollama_message(message: dict[str, Any]) -> dict[str, Any]:
    """Ollama's native chat takes tool-call arguments as objects, not JSON strings."""
    if not message.get("tool_calls"):
        return message
    out = dict(message)
    calls = []
    for call in message["tool_calls"]:
        function = dict(call.get("function") or {})
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                function["arguments"] = json.loads(arguments)
            except json.JSONDecodeError:
                pass
        calls.append({"function": function})
    out["tool_calls"] = calls
    return out
