"""nock recordings (``nock.recorder`` output, as JS test suites keep them): a JSON list of
``{scope, method, path, body, status, response}``. Each request to a model API becomes one model call."""
from __future__ import annotations

import json
from typing import Any

from .. import anthropic, openai
from ..model import ImportNote
from ..normalise import Malformed, Outcome, as_int, shown_names
from . import by_request, import_request

FORMAT = "nock-recording"


def is_nock(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, dict) and isinstance(v.get("scope"), str) and "path" in v and "method" in v for v in value)


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def import_nock(entries: list[Any]) -> Outcome:
    out = Outcome()
    skipped: list[str] = []
    for i, entry in enumerate(entries):
        place = f"[{i}]"
        if not isinstance(entry, dict):
            raise Malformed(place, f"a recorded request must be an object, found {type(entry).__name__}")
        path = entry.get("path") if isinstance(entry.get("path"), str) else ""
        method = str(entry.get("method") or "").upper()
        label = f"recording {i + 1}: {method} {entry.get('scope')}{path}"
        body = _decoded(entry.get("body"))
        response = _decoded(entry.get("response"))
        provider = by_request(path.split("?")[0], body)
        try:
            if provider is not None:
                request = import_request(provider, body, f"{place}.body", label, file_format=FORMAT,
                                         path=path.split("?")[0], response=response)
            elif isinstance(body, dict) and isinstance(body.get("messages"), list):
                module = anthropic if path.endswith("/messages") or anthropic.has_markers(body) else openai
                request = module.import_body(body, f"{place}.body", label, file_format=FORMAT,
                                             response=response if isinstance(response, dict) else None)
            else:
                skipped.append(f"{method} {path}")
                continue
        except Malformed as exc:
            out.fail(exc, "recorded request")
            continue
        status = as_int(entry.get("status"))
        if status is not None and status >= 400:
            request.warnings.append(ImportNote(f"{place}.status", f"the provider answered HTTP {status}"))
        out.requests.append(request)
    if skipped:
        out.warnings.append(ImportNote("", f"{len(skipped)} recorded request(s) are not model calls and were "
                                          f"skipped: {shown_names(skipped)}"))
    return out
