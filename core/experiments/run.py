"""Running an experiment: every variant's request sent N times (one per seed), every answer recorded.

The requests are assembled first, all of them, so a variant that cannot be built is refused before
the model is contacted. Each run sends the exact bytes ``Endpoint.body_for`` made; the record keeps
those bytes (UTF-8 text) with their sha256. An endpoint that cannot be reached or does not answer
in time stops the experiment with ``EndpointError``; what was recorded until then stays in the file.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

from ..counting import TokenCounter
from ..errors import AssemblyCancelled
from ..export import openai_body
from ..result import AssemblyResult
from .endpoints import Endpoint, EndpointError, Reply, Sampling
from .grading import Rules
from .records import EXPERIMENT_FORMAT, ILLUSTRATION, AnswersWriter, sha256_hex
from .variants import Subject, build_variant, expand_specs, position_of

Progress = Callable[[int, int, str], None]  # (done, total, what) after each answer


@dataclass
class Experiment:
    """One request, its variants, a model endpoint, sampling settings and N seeds."""

    subject: Subject
    endpoint: Endpoint
    variants: list[str]
    seeds: list[int]
    sampling: Sampling = field(default_factory=Sampling)
    rules: Rules | None = None
    request_file: str | None = None
    declared_model: dict[str, Any] = field(default_factory=dict)  # e.g. {"sha256": ...} the person vouches for

    def __post_init__(self) -> None:
        self.variants = expand_specs(self.variants, self.subject)
        if not self.seeds:
            raise ValueError("an experiment needs at least one seed")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("a seed is listed twice")


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_all(experiment: Experiment, counter: TokenCounter) -> dict[str, AssemblyResult]:
    return {spec: build_variant(spec, experiment.subject, counter) for spec in experiment.variants}


def header(experiment: Experiment, counter: TokenCounter, model: dict[str, Any]) -> dict[str, Any]:
    subject = experiment.subject
    out: dict[str, Any] = {
        "format": EXPERIMENT_FORMAT, "kind": "experiment", "started_at": now(),
        "request_id": subject.label, "request_file": experiment.request_file,
        "endpoint": experiment.endpoint.identity(), "model": model,
        "sampling": experiment.sampling.to_json(), "seeds": list(experiment.seeds),
        "variants": list(experiment.variants), "counter": counter.identity.model_dump(mode="json"),
        "note": ILLUSTRATION,
    }
    if experiment.declared_model:
        out["model_declared"] = dict(experiment.declared_model)
    if subject.relevant is not None:
        out["relevant_passage"] = subject.relevant
    if experiment.rules is not None:
        out["rules"] = experiment.rules.model_dump()
    return out


def run_experiment(experiment: Experiment, counter: TokenCounter, output: str, *, overwrite: bool = False,
                   progress: Progress | None = None, cancel: threading.Event | None = None,
                   results: dict[str, AssemblyResult] | None = None) -> int:
    """Run every variant under every seed and write the answers file; returns the answers recorded.

    ``results`` are the variants' requests if already built (``build_all``). ``EndpointError``
    (unreachable, timeout, wrong route or key) propagates; ``cancel`` stops between runs and during
    the wait for a reply (``AssemblyCancelled``)."""
    if results is None:
        results = build_all(experiment, counter)  # refuse a bad variant before any network traffic
    endpoint = experiment.endpoint
    model = endpoint.model_identity()
    total = len(results) * len(experiment.seeds)
    done = 0
    with AnswersWriter(output, overwrite=overwrite) as writer:
        writer.write(header(experiment, counter, model))
        for spec, result in results.items():
            writer.write({"kind": "variant", "variant": spec, "position": position_of(spec),
                          "result": result.model_dump(mode="json", exclude_none=True)})
        for spec, result in results.items():
            for seed in experiment.seeds:
                if cancel is not None and cancel.is_set():
                    raise AssemblyCancelled(f"cancelled after {done} of {total} answers")
                writer.write(run_one(experiment, spec, result, seed, cancel=cancel))
                done += 1
                if progress is not None:
                    progress(done, total, f"{spec} seed {seed}")
    return done


def run_one(experiment: Experiment, spec: str, result: AssemblyResult, seed: int, *,
            cancel: threading.Event | None = None) -> dict[str, Any]:
    endpoint, sampling = experiment.endpoint, experiment.sampling
    body = openai_body(result, model=endpoint.model)
    max_tokens = sampling.max_tokens or result.max_new_tokens
    data = endpoint.body_for(body["messages"], body.get("tools", []), sampling, max_tokens, seed)
    started = now()
    try:
        reply, latency = _send(endpoint, data, cancel)
    except EndpointError as exc:
        if not exc.refused_request:
            raise
        reply, latency = Reply(raw=exc.body or "", content=None, finish_reason=None, prompt_tokens=None,
                               completion_tokens=None, reported_model=None), None
        error = exc.problem
    else:
        error = None
    return {
        "kind": "answer", "variant": spec, "seed": seed, "position": position_of(spec), "at": started,
        "request_sha256": sha256_hex(data), "request_body": data.decode("utf-8"),
        "model": {"requested": endpoint.model, "reported": reply.reported_model},
        "sampling": {**sampling.to_json(), "max_tokens": max_tokens, "seed": seed},
        "prompt_tokens": {"ours": result.input_tokens, "counter": result.counter.name if result.counter else None,
                          "server": reply.prompt_tokens},
        "completion_tokens": reply.completion_tokens,
        "latency_seconds": round(latency, 3) if latency is not None else None,
        **({"error": error} if error else {}),
        "answer": reply.content, "finish_reason": reply.finish_reason, **({"reply_extra": reply.extra} if reply.extra
                                                                          else {}),
        "response_raw": reply.raw,
    }


def _send(endpoint: Endpoint, data: bytes, cancel: threading.Event | None):
    if cancel is None:
        return endpoint.send(data)
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            outcome["reply"] = endpoint.send(data)
        except BaseException as exc:  # handed to the waiting thread below
            outcome["error"] = exc

    worker = threading.Thread(target=call, name="experiment-call", daemon=True)
    worker.start()
    while worker.is_alive():  # wait, but let a cancel interrupt the wait at once
        worker.join(0.05)
        if cancel.is_set():
            raise AssemblyCancelled("cancelled while waiting for the model")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["reply"]
