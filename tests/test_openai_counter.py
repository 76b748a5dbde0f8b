"""``openai:<model>``: tiktoken plus OpenAI's billed chat format, held to hand-checked figures and to the
usage OpenAI recorded in the real files of ../shared (tests/openai_drift.py builds the README's table)."""
from __future__ import annotations

import http.server
import statistics
import threading

import pytest

from core import ChatMessage, ToolCall, ToolDefinition, make_counter
from core.cli import main
from core.counters import tiktoken_cache
from core.errors import CounterError

M = ChatMessage


def tool(name, parameters, description=""):
    return ToolDefinition(name=name, description=description, parameters=parameters)


# Figures OpenAI billed for these gpt-3.5-turbo requests, recorded by hmarr/openai-chat-tokens against the live
# API (its tests' table); each was checked here by hand against the rules in core/counters/openai.py.
GPT35_CASES = [
    ([M(role="user", content="hello")], [], 8),
    ([M(role="user", content="hello world")], [], 9),
    ([M(role="system", content="hello")], [], 8),
    ([M(role="system", content="hello:")], [], 9),
    ([M(role="system", content="# Important: you're the best robot"), M(role="user", content="hello robot"),
      M(role="assistant", content="hello world")], [], 27),
    ([M(role="user", content="hello")], [tool("foo", {"type": "object", "properties": {}})], 31),
    ([M(role="user", content="hello")], [tool("foo", {"type": "object", "properties": {}}, "Do a foo")], 36),
    ([M(role="user", content="hello")],
     [tool("bing_bong", {"type": "object", "properties": {"foo": {"type": "string"}}}, "Do a bing bong")], 49),
    ([M(role="user", content="hello")],
     [tool("bing_bong", {"type": "object", "properties": {"foo": {"type": "string"},
                                                          "bar": {"type": "number", "description": "A number"}}},
           "Do a bing bong")], 57),
    ([M(role="user", content="hello")],
     [tool("bing_bong", {"type": "object", "properties": {"foo": {"type": "object", "properties": {
         "bar": {"type": "string", "enum": ["a", "b", "c"]}, "baz": {"type": "boolean"}}}}}, "Do a bing bong")], 68),
    ([M(role="system", content="Hello"), M(role="user", content="Hi there")],
     [tool("do_stuff", {"type": "object", "properties": {}})], 35),
    ([M(role="system", content="Hello:"), M(role="user", content="Hi there")],
     [tool("do_stuff", {"type": "object", "properties": {}})], 35),
]


@pytest.mark.parametrize("messages,tools,expected", GPT35_CASES)
def test_gpt35_counts_equal_the_billed_figures(tiktoken_cache, messages, tools, expected):
    assert make_counter("openai:gpt-3.5-turbo").count(messages, tools) == expected


def test_the_recipe_schema_of_nested_arrays_and_enums(tiktoken_cache):
    recipe = {"type": "object", "required": ["ingredients", "instructions", "time_to_cook"], "properties": {
        "ingredients": {"type": "array", "items": {"type": "object", "required": ["name", "unit", "amount"],
                                                   "properties": {"name": {"type": "string"},
                                                                  "unit": {"enum": ["grams", "ml", "cups", "pieces",
                                                                                    "teaspoons"], "type": "string"},
                                                                  "amount": {"type": "number"}}}},
        "instructions": {"type": "array", "items": {"type": "string"},
                         "description": "Steps to prepare the recipe (no numbering)"},
        "time_to_cook": {"type": "number", "description": "Total time to prepare the recipe in minutes"}}}
    counter = make_counter("openai:gpt-3.5-turbo")
    assert counter.count([M(role="user", content="hello")], [tool("get_recipe", recipe)]) == 106
    text = counter.render_text([M(role="user", content="hello")], [tool("get_recipe", recipe)])
    assert "type get_recipe = (_: {" in text and 'unit: "grams" | "ml" | "cups" | "pieces" | "teaspoons",' in text


def test_encodings_by_model_and_what_the_identity_says(tiktoken_cache):
    four_o, legacy, five = (make_counter(f"openai:{m}") for m in ("gpt-4o", "gpt-4", "gpt-5-mini"))
    assert four_o.encoding_name == "o200k_base" and legacy.encoding_name == "cl100k_base"
    assert four_o.identity.kind == "openai-tiktoken" and "o200k_base" in four_o.identity.revision
    hello = [M(role="user", content="hello")]
    # 4 per message with its role, 3 to prime the reply; gpt-5's reply priming is one token shorter
    assert four_o.count(hello, []) == 1 + 4 + 3 and five.count(hello, []) == 1 + 4 + 2
    with pytest.raises(CounterError, match="not an OpenAI chat model"):
        make_counter("openai:claude-3-opus")


def test_tool_calls_and_results_are_named_and_costed(tiktoken_cache):
    counter = make_counter("openai:gpt-3.5-turbo")
    call = ToolCall(id="1", name="get_current_weather", arguments={"location": "San Francisco"})
    messages = [M(role="assistant", tool_calls=[call]),
                M(role="tool", tool_call_id="1", content="The weather in San Francisco is 70 degrees and sunny.")]
    # the recorded request of openllmetry's test_chat_tool_calls cassette: OpenAI billed 40
    assert counter.count(messages, []) == 40
    text = counter.render_text(messages, [])
    assert "<|im_start|>tool<|name|>get_current_weather<|im_sep|>The weather" in text
    assert counter.token_ids(messages, []) and len(counter.token_ids(messages, [])) == 40


def test_median_drift_against_recorded_usage_and_text_only_exact(tiktoken_cache):
    from openai_drift import drift_rows, table

    rows = drift_rows()
    if not rows:
        pytest.skip("no OpenAI calls with recorded usage in ../shared/realworld*")
    print(table(rows))
    assert len(rows) >= 15
    assert statistics.median(abs(r.drift) for r in rows) <= 0.01
    unexplained = [r for r in rows if r.ours != r.provider and not r.note]
    assert not unexplained
    exact = {(r.file, r.model) for r in rows if r.ours == r.provider}
    assert ("promptfoo-sample-export.json", "gpt-5") in exact and ("openllmetry-test_chat_tools.yaml",
                                                                   "gpt-3.5-turbo") in exact
    assert ("openllmetry-test_responses_with_input_history.yaml", "gpt-4.1-nano") in exact


def test_an_encoding_not_in_the_cache_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(CounterError, match=r"run `context-assembler tokenizers fetch o200k_base` once"):
        make_counter("openai:gpt-4o")
    assert list(tmp_path.iterdir()) == []  # nothing was downloaded


class _OneFile(http.server.BaseHTTPRequestHandler):
    payload = b""
    served: list[str] = []

    def do_GET(self):  # noqa: N802 - the stdlib's name
        type(self).served.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def local_server(tiktoken_cache):
    _OneFile.payload = (tiktoken_cache / tiktoken_cache_name("cl100k_base")).read_bytes()
    _OneFile.served = []
    server = http.server.HTTPServer(("127.0.0.1", 0), _OneFile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def tiktoken_cache_name(name):
    return tiktoken_cache.ENCODINGS[name].cache_name


def test_tokenizers_fetch_downloads_once_into_the_cache(local_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    url = f"{local_server}/cl100k_base.tiktoken"
    assert main(["tokenizers", "fetch", "cl100k_base", "--url", url]) == 0
    target = tmp_path / "cache" / tiktoken_cache_name("cl100k_base")
    assert target.is_file() and str(target) in capsys.readouterr().out
    assert make_counter("openai:gpt-4").count([M(role="user", content="hello")], []) == 8
    assert main(["tokenizers", "fetch", "cl100k_base", "--url", url]) == 0  # already there: no second download
    assert _OneFile.served == ["/cl100k_base.tiktoken"]


def test_tokenizers_fetch_refuses_a_file_that_is_not_the_encoding(local_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    code = main(["tokenizers", "fetch", "o200k_base", "--url", f"{local_server}/o200k_base.tiktoken"])
    assert code == 2 and "the downloaded file is not o200k_base" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
