"""The model registry (context window, max output, provider, counter per model name), ``--counter auto``,
estimates for models without a public tokenizer, and what the count result says is authoritative."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import make_counter
from core.cli import main
from core.counters import AutoCounter, auto_counter_spec, available_counters, lookup_model
from core.formats import count_imported, import_file

REALWORLD = Path(__file__).resolve().parents[1] / ".." / "shared" / "realworld"


@pytest.fixture(autouse=True)
def _no_user_table(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXT_ASSEMBLER_MODELS", str(tmp_path / "absent-models.json"))


@pytest.mark.parametrize("name,key,window,output,provider,counter", [
    ("gpt-4o", "gpt-4o", 128000, 16384, "openai", "openai:gpt-4o"),
    ("gpt-4.1-2025-04-14", "gpt-4.1-2025-04-14", 1047576, 32768, "openai", "openai:gpt-4.1-2025-04-14"),
    ("gpt-3.5-turbo", "gpt-3.5-turbo", 16385, 4096, "openai", "openai:gpt-3.5-turbo"),
    ("claude-3-5-haiku-20241022", "claude-3-5-haiku-20241022", 200000, 8192, "anthropic",
     "estimate:claude-3-5-haiku-20241022"),
    ("claude-sonnet-4-6", "claude-sonnet-4-6", 1000000, 128000, "anthropic", "estimate:claude-sonnet-4-6"),
    ("gpt-oss-120b", "gpt-oss-120b", 131072, 32768, None, "harmony:gpt-oss-120b"),
])
def test_registry_lookups(name, key, window, output, provider, counter):
    info = lookup_model(name)
    assert info is not None and info.key == key
    assert (info.context_window, info.max_output, info.counter) == (window, output, counter)
    if provider:
        assert info.provider == provider


def test_names_with_prefixes_and_suffixes_find_their_base_entry():
    assert lookup_model("openai/gpt-4o").context_window == 128000
    assert lookup_model("gpt-4o-2099-01-01").key == "gpt-4o"  # a date suffix the table does not list
    assert lookup_model("no-such-model-anywhere") is None


def test_the_person_adds_and_overrides_entries(tmp_path, monkeypatch):
    mine = tmp_path / "models.json"
    mine.write_text(json.dumps({"gpt-4o": {"max_input_tokens": 64000, "max_output_tokens": 1000},
                                "house-llm": {"max_input_tokens": 8192, "counter": "mistral:tekken_240718"}}))
    monkeypatch.setenv("CONTEXT_ASSEMBLER_MODELS", str(mine))
    assert lookup_model("gpt-4o").context_window == 64000 and lookup_model("gpt-4o").source == str(mine)
    assert lookup_model("house-llm").counter == "mistral:tekken_240718"
    mine.write_text("{not json")
    with pytest.raises(Exception, match="not a readable JSON model table"):
        lookup_model("gpt-4o")


@pytest.mark.parametrize("model,spec", [
    ("gpt-4o", "openai:gpt-4o"), ("gpt-4o-mini-2024-07-18", "openai:gpt-4o-mini-2024-07-18"),
    ("claude-3-5-sonnet-20240620", "estimate:claude-3-5-sonnet-20240620"),
    ("gemini-2.5-flash", "estimate:gemini-2.5-flash"), ("gpt-oss-20b", "harmony:gpt-oss-20b"),
    ("mistral-large-latest", "mistral:tekken_240911"), (None, "mistral:tekken_240911"),
])
def test_auto_picks_the_counter_from_the_model_name(model, spec):
    assert auto_counter_spec(model) == spec


def test_auto_falls_back_in_words_when_the_encoding_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    counter, why = AutoCounter().pick("gpt-4o")
    # never downloaded: an estimate stands in, and says why and what to run, in its identity too
    assert counter.name == "estimate:gpt-4o" and counter.identity.kind == "estimate"
    assert "auto picked openai:gpt-4o" in why and "tokenizers fetch o200k_base" in why
    assert why.endswith("counted as an estimate (estimate:gpt-4o) instead")
    assert counter.identity.notes.startswith("an estimate: openai:gpt-4o cannot be used here: the tiktoken "
                                             "encoding o200k_base is not in the cache")
    assert "counted with mistral:tekken_240911" in counter.identity.notes
    assert not any(tmp_path.iterdir())  # nothing was fetched on its own


def test_count_says_loudly_when_auto_falls_back_to_an_estimate(tmp_path, monkeypatch, capsys):
    path = REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert main(["count", str(path)]) == 0
    captured = capsys.readouterr()
    assert "counted with estimate:gpt-3.5-turbo" in captured.out
    assert "input: 40 tokens, the provider's recorded figure" in captured.out  # the estimate yields to theirs
    assert captured.err.startswith("count: warning: 3 request(s) counted as an estimate: openai:gpt-3.5-turbo "
                                   "cannot be used here")
    assert "context-assembler tokenizers fetch cl100k_base" in captured.err


def test_an_estimate_says_so_and_the_provider_figure_is_authoritative(tiktoken_cache):
    path = REALWORLD / "anthropic-messages" / "openllmetry-test_anthropic_tools_history_legacy.yaml"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    request = import_file(path).requests[0]
    counter = make_counter("auto", model=request.recorded.model)
    assert counter.identity.kind == "estimate" and "Anthropic does not publish" in counter.identity.notes
    result = count_imported(request, counter)
    extra = result.model_extra
    assert extra["count_is_estimate"] is True and extra["authoritative_source"] == "provider"
    assert extra["authoritative_input_tokens"] == request.recorded.input_tokens == 568
    # o200k proxy plus the 346-token tool-use system prompt Anthropic documents: within 10% of its figure
    assert abs(result.input_tokens - 568) / 568 < 0.10
    assert result.context_limit == 200000 and extra["context_limit_source"].startswith("model registry")
    template = next(e for e in result.trace if e.section == "template")
    assert template.tokens >= 346 and "346-token tool-use system prompt" in template.reason
    assert all(e.tokens < 346 for e in result.trace if e.section == "tools")


def test_count_defaults_to_auto_and_says_which_counter_and_window(tiktoken_cache, capsys):
    path = REALWORLD / "openai-chat" / "openllmetry-test_chat_tool_calls.yaml"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    assert main(["count", str(path)]) == 0
    out = capsys.readouterr().out
    assert "counter: auto" in out and "total: 40 input tokens (openai:gpt-3.5-turbo, as recorded)" in out
    assert "drift +0" in out and "context limit: 16385 (model registry: gpt-3.5-turbo" in out
    anthropic = REALWORLD / "anthropic-messages" / "openllmetry-test_anthropic_tools_history_legacy.yaml"
    assert main(["count", str(anthropic)]) == 0
    assert "estimate: estimate:claude-3-5-haiku-20241022 is an estimate; the provider recorded 568" in \
        capsys.readouterr().out


def test_the_catalogue_lists_every_family(tiktoken_cache):
    specs = [e.spec for e in available_counters(["/tmp/some-tokenizer"])]
    assert "auto" in specs and "mistral:tekken_240911" in specs and "mistral:tekken_240718" in specs
    assert "openai:gpt-4o" in specs and "openai:o200k_base" in specs and "openai:cl100k_base" in specs
    assert "harmony:gpt-oss-20b" in specs and "hf:/tmp/some-tokenizer" in specs
    assert any(e.estimate and e.spec.startswith("estimate:claude") for e in available_counters())


def test_chat_template_kwargs_reach_an_hf_counter_from_the_cli(toy_tokenizer_dir, capsys, tmp_path):
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "local", "messages": [{"role": "user", "content": "hi"}]}))
    assert main(["count", str(body), "--counter", f"hf:{toy_tokenizer_dir}",
                 "--chat-template-kwargs", "enable_thinking=true", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["requests"][0]["counted_with"] == f"hf:{toy_tokenizer_dir}?enable_thinking=true"
    code = main(["count", str(body), "--counter", "mistral:tekken_240911", "--chat-template-kwargs", "x=1"])
    assert code == 2 and "apply to hf: counters only" in capsys.readouterr().err


def test_tokenizers_list_prints_every_counter(tiktoken_cache, capsys):
    assert main(["tokenizers", "list"]) == 0
    out = capsys.readouterr().out
    assert "openai:gpt-4o" in out and "mistral:tekken_240911" in out and "estimate:claude-sonnet-4-6" in out
    assert "tiktoken cache:" in out and "o200k_base" in out


def test_the_catalogue_lists_the_counters_of_the_persons_model_table(tmp_path, monkeypatch):
    table = tmp_path / "models.json"
    table.write_text(json.dumps({"my-finetune": {"max_input_tokens": 32768, "counter": "hf:/opt/my-tokenizer"},
                                 "my-other": {"max_input_tokens": 8192, "counter": "hf:/opt/my-tokenizer"},
                                 "gpt-4o": {"max_input_tokens": 128000, "counter": "openai:gpt-4o"}}))
    monkeypatch.setenv("CONTEXT_ASSEMBLER_MODELS", str(table))
    entries = {e.spec: e for e in available_counters()}
    assert entries["hf:/opt/my-tokenizer"].description == (
        f"named in your model table {table} for my-finetune, my-other")
    assert [e.spec for e in available_counters()].count("openai:gpt-4o") == 1  # listed once
    table.write_text("{not json")
    assert "hf:/opt/my-tokenizer" not in {e.spec for e in available_counters()}  # unreadable: not listed


def test_a_sweep_under_auto_counts_a_model_whose_encoding_is_not_cached_as_an_estimate(tmp_path, monkeypatch):
    from core.sweep.models import counters

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    get = counters("auto")
    counter = get("gpt-4o")
    # as count and the inspector do: an estimate named as such, never the embedded counter in its place
    assert counter.name == "estimate:gpt-4o" and counter.identity.kind == "estimate"
    assert "openai:gpt-4o cannot be used here" in counter.identity.notes
    assert get("gpt-4o") is counter and get(None).name == "mistral:tekken_240911"
    assert not any(tmp_path.iterdir())  # nothing fetched on its own
