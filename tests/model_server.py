"""A tiny stand-in for a model server on 127.0.0.1 (OpenAI-compatible and Ollama routes), for tests.

It answers with whatever ``answer(body)`` returns, records every request it received (path, headers,
body bytes), can wait before answering (a timeout test) and can echo the Authorization header back
in its response (to check that a key never reaches a record).
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class FakeModelServer:
    def __init__(self, answer: Callable[[dict[str, Any]], str] | None = None, *, delay: float = 0.0,
                 echo_auth: bool = False, status: int = 200, model: str = "fake-model",
                 finish_reason: str = "stop") -> None:
        self.answer = answer or (lambda body: "I would rotate the logs first [rb-disk-full].")
        self.delay = delay
        self.echo_auth = echo_auth
        self.status = status
        self.model = model
        self.finish_reason = finish_reason
        self.received: list[dict[str, Any]] = []
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _reply(self, payload: Any, status: int = 200) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                server.received.append({"path": self.path, "headers": dict(self.headers), "body": b""})
                if self.path == "/v1/models":
                    self._reply({"object": "list", "data": [{"id": server.model, "object": "model",
                                                             "owned_by": "tests"}]})
                elif self.path == "/api/tags":
                    self._reply({"models": [{"name": server.model, "model": server.model,
                                             "digest": "d" * 64, "size": 1234}]})
                else:
                    self._reply({"error": "not found"}, 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server.received.append({"path": self.path, "headers": dict(self.headers), "body": raw})
                if server.delay:
                    server._stop.wait(server.delay)
                body = json.loads(raw)
                if server.status != 200:
                    self._reply({"error": {"message": "the model is unavailable"}}, server.status)
                    return
                text = server.answer(body)
                auth = self.headers.get("Authorization", "") if server.echo_auth else ""
                if self.path == "/api/chat":
                    self._reply({"model": server.model, "message": {"role": "assistant", "content": text},
                                 "done": True, "done_reason": server.finish_reason, "prompt_eval_count": 321,
                                 "eval_count": 12, "echo": auth})
                elif self.path == "/v1/chat/completions":
                    self._reply({"id": "cmpl-1", "object": "chat.completion", "model": server.model,
                                 "system_fingerprint": "fp-test",
                                 "choices": [{"index": 0, "finish_reason": server.finish_reason,
                                              "message": {"role": "assistant", "content": text}}],
                                 "usage": {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333},
                                 "echo": auth})
                else:
                    self._reply({"error": "not found"}, 404)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "FakeModelServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def chat_bodies(self) -> list[bytes]:
        return [r["body"] for r in self.received if r["body"]]


