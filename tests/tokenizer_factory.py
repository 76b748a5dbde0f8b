"""Build small, local Hugging Face tokenizer directories for tests (no downloads, ever).

``build_tokenizer_dir`` trains a byte-level BPE tokenizer with the ``tokenizers`` library on a small
built-in English corpus (a few milliseconds, vocabulary ~1.5k), adds the given special tokens as
*special* added tokens, and writes a directory that ``transformers.AutoTokenizer.from_pretrained(dir,
local_files_only=True)`` loads as a ``PreTrainedTokenizerFast``-class tokenizer:

* ``tokenizer.json``        - the trained tokenizer with its added tokens;
* ``tokenizer_config.json`` - ``tokenizer_class: "PreTrainedTokenizerFast"`` and bos/eos/unk/pad tokens;
* ``chat_template.jinja``   - the chat template. This is what transformers 5 writes on
  ``save_pretrained`` and, when present, it takes priority over a ``chat_template`` entry of
  ``tokenizer_config.json``. ``template_in_config=True`` writes the older layout instead
  (the template as ``chat_template`` inside ``tokenizer_config.json``), which transformers also loads.
* ``special_tokens_map.json`` only with ``special_tokens_map=True`` (transformers 5 reads it only as a
  legacy fallback; the config carries the same tokens).

``TOY_TEMPLATE`` is a small chat template of our own (system/user/assistant/tool messages, tool
definitions as JSON, tool calls, a generation prefix and an ``enable_thinking`` switch).
``REAL_TEMPLATES`` names the real-world templates of ``../shared/realworld/chat-templates`` with the
special tokens each one uses; they are read from there (never copied into the project).
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Sequence

# --------------------------------------------------------------------------------------------
# where the real-world templates live

REALWORLD_DIR = Path(os.environ.get("CONTEXT_INSPECTOR_REALWORLD",
                                    Path(__file__).resolve().parents[2] / "shared" / "realworld"))
CHAT_TEMPLATES_DIR = REALWORLD_DIR / "chat-templates"


class RealTemplate(NamedTuple):
    """A real chat template file and the tokens its tokenizer treats specially."""

    filename: str
    special_tokens: list[str]  # added as special tokens (control tokens)
    bos: str | None
    eos: str | None
    added_tokens: tuple[str, ...] = ()  # added tokens that the real tokenizer does NOT mark special
    unk: str | None = None
    pad: str | None = None

    @property
    def path(self) -> Path:
        return CHAT_TEMPLATES_DIR / self.filename

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8")


REAL_TEMPLATES: dict[str, RealTemplate] = {
    # Gemma 4: turns are <|turn>role ... <turn|>; tools <|tool>...<tool|>; calls <|tool_call>...<tool_call|>;
    # results <|tool_response>...<tool_response|>; strings quoted with <|"|>; thinking <|think|>,
    # <|channel>thought ... <channel|>; media placeholders <|image|> <|audio|> <|video|>.
    "gemma4": RealTemplate(
        "llamacpp-google-gemma-4-31B-it.jinja",
        ["<bos>", "<eos>", "<pad>", "<unk>", "<|turn>", "<turn|>", "<|think|>", "<|tool>", "<tool|>",
         "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", '<|"|>',
         "<|channel>", "<channel|>", "<|image|>", "<|audio|>", "<|video|>"],
        "<bos>", "<eos>", unk="<unk>", pad="<pad>"),
    # Gemma 2: <bos><start_of_turn>user ... <end_of_turn>; no system role, no tools.
    "gemma2": RealTemplate(
        "llamacpp-google-gemma-2-2b-it.jinja",
        ["<bos>", "<eos>", "<pad>", "<unk>", "<start_of_turn>", "<end_of_turn>"],
        "<bos>", "<eos>", unk="<unk>", pad="<pad>"),
    # Llama 3.1: headers, <|eot_id|> ends a turn, <|eom_id|>/<|python_tag|> for built-in tools.
    "llama31": RealTemplate(
        "llamacpp-meta-llama-Llama-3.1-8B-Instruct.jinja",
        ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
         "<|eot_id|>", "<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>"],
        "<|begin_of_text|>", "<|eot_id|>"),
    # Qwen 2.5: ChatML. <tool_call>/</tool_call> are added tokens that the real tokenizer does not
    # mark special (the <tools>/<tool_response> tags are plain text).
    "qwen25": RealTemplate(
        "llamacpp-Qwen-Qwen2.5-7B-Instruct.jinja",
        ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        None, "<|im_end|>", added_tokens=("<tool_call>", "</tool_call>"), pad="<|endoftext|>"),
    # Mistral Nemo (tekken): [INST] ... [/INST], tools and tool results in bracket tokens.
    "mistral_nemo": RealTemplate(
        "llamacpp-mistralai-Mistral-Nemo-Instruct-2407.jinja",
        ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
         "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "<pad>"],
        "<s>", "</s>", unk="<unk>", pad="<pad>"),
}


def real_templates_available() -> bool:
    return all(t.path.is_file() for t in REAL_TEMPLATES.values())


# --------------------------------------------------------------------------------------------
# our own toy template

TOY_SPECIAL_TOKENS = [
    "<|bos|>", "<|eos|>", "<|pad|>", "<|im_start|>", "<|im_end|>", "<|tools|>", "<|/tools|>",
    "<|tool_call|>", "<|/tool_call|>", "<|tool_result|>", "<|/tool_result|>", "<|think|>", "<|/think|>",
]
TOY_BOS = "<|bos|>"
TOY_EOS = "<|eos|>"
TOY_PAD = "<|pad|>"

TOY_TEMPLATE_REFUSAL = "toy template: a tool message needs a tool_call_id"

TOY_TEMPLATE = r"""
{%- set ns = namespace(system=none, start=0) -%}
{%- if messages and messages[0].role == 'system' -%}
    {%- set ns.system = messages[0].content -%}
    {%- set ns.start = 1 -%}
{%- endif -%}
{{- bos_token if bos_token is defined else '' -}}
{%- if ns.system is not none or tools -%}
    {{- '<|im_start|>system\n' -}}
    {%- if ns.system is not none -%}{{- ns.system -}}{%- endif -%}
    {%- if tools -%}
        {{- '\n<|tools|>' -}}
        {%- for tool in tools -%}{{- '\n' + (tool | tojson) -}}{%- endfor -%}
        {{- '\n<|/tools|>' -}}
    {%- endif -%}
    {{- '<|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages[ns.start:] -%}
    {%- if message.role == 'system' -%}
        {{- raise_exception('toy template: a system message is only allowed first') -}}
    {%- elif message.role == 'tool' -%}
        {%- if message.tool_call_id is not defined -%}
            {{- raise_exception('""" + TOY_TEMPLATE_REFUSAL + r"""') -}}
        {%- endif -%}
        {{- '<|im_start|>tool ' + message.tool_call_id + '\n<|tool_result|>' + message.content + '<|/tool_result|><|im_end|>\n' -}}
    {%- else -%}
        {{- '<|im_start|>' + message.role + '\n' + message.content -}}
        {%- for call in (message.tool_calls or []) -%}
            {{- '<|tool_call|>' + ({'id': call.id, 'name': call.function.name, 'arguments': call.function.arguments} | tojson) + '<|/tool_call|>' -}}
        {%- endfor -%}
        {{- '<|im_end|>\n' -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- if enable_thinking is defined and enable_thinking -%}
        {{- '<|think|>' -}}
    {%- else -%}
        {{- '<|think|><|/think|>' -}}
    {%- endif -%}
{%- endif -%}
""".strip()


# --------------------------------------------------------------------------------------------
# the corpus and the trained base tokenizer

_SENTENCES = """
The quick brown fox jumps over the lazy dog while the farmer watches from the porch.
A context assembler decides which messages, tools and passages fit inside the token budget.
Every request carries instructions, a history of earlier turns, the current question and evidence.
The model reads the whole conversation, including the tool definitions, before it answers.
What is the weather like in Paris today? It is sunny with a light breeze from the west.
Please book a table for two at seven o'clock tomorrow evening near the river.
The assistant called a tool to look up the forecast and then summarised the result.
Retrieval returns passages with scores; higher scores mean the passage is more relevant.
When the budget is tight, older history is dropped before the most recent messages.
Tokens are the units a language model counts; a word may be one token or several.
She opened the window, listened to the rain and wrote a letter to her brother in London.
The library closes at six on weekdays and at noon on Saturdays and Sundays.
Numbers such as 3.14159, 2024, 42 and 1,000,000 appear in reports, tables and invoices.
Could you explain how photosynthesis turns sunlight, water and carbon dioxide into sugar?
The committee approved the budget after a long discussion about travel and equipment costs.
Our team shipped the new release on Friday, fixed three bugs and updated the documentation.
He carried the heavy boxes up the stairs, one by one, until the truck was finally empty.
A good summary keeps the important facts, drops repetition and stays faithful to the source.
The train to Berlin leaves from platform nine at half past eight in the morning.
Children played in the park, dogs chased the ball and the old man fed the pigeons.
Search the knowledge base for the refund policy and quote the relevant paragraph exactly.
The function returns a list of results, each with an identifier, a title and a short snippet.
Mountains, rivers, forests and deserts cover the continent from the coast to the plains.
Remember to save your work often, because the power may go out during the storm tonight.
""".strip().splitlines()

_SNIPPETS = [
    '{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",'
    ' "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}',
    '{"name": "search_docs", "arguments": {"query": "refund policy", "limit": 3}}',
    '{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    '{"temperature": 21, "condition": "sunny", "wind": "light breeze"}',
    "def count_tokens(messages, tools):\n    return len(render(messages, tools))\n",
    "system\nuser\nassistant\ntool\nYou are a helpful assistant.\n",
]

BASE_VOCAB_SIZE = 1500


def corpus() -> list[str]:
    """A small English corpus with some JSON and code, a few kilobytes in all."""
    lines = list(_SENTENCES) + list(_SNIPPETS)
    # a little recombination so common words and word pairs get merges of their own
    mixed = [f"{a} {b}" for a, b in zip(_SENTENCES, reversed(_SENTENCES))]
    return lines + mixed + [s.lower() for s in _SENTENCES]


@lru_cache(maxsize=None)
def _base_tokenizer_json(vocab_size: int = BASE_VOCAB_SIZE) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=1, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tokenizer.train_from_iterator(corpus(), trainer=trainer)
    return tokenizer.to_str()


def _unique(items: Sequence[str | None]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item and item not in out:
            out.append(item)
    return out


def build_tokenizer_dir(path: str | Path, *, chat_template: str | None, special_tokens: Sequence[str],
                        bos: str | None = None, eos: str | None = None, unk: str | None = None,
                        pad: str | None = None, added_tokens: Sequence[str] = (),
                        template_in_config: bool = False, special_tokens_map: bool = False,
                        vocab_size: int = BASE_VOCAB_SIZE) -> Path:
    """Write a loadable tokenizer directory at ``path`` (created if needed) and return it.

    ``special_tokens`` (plus bos/eos/unk/pad) are added as special tokens; ``added_tokens`` as
    ordinary (non-special) added tokens. ``chat_template=None`` writes no template at all.
    """
    from tokenizers import AddedToken, Tokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_str(_base_tokenizer_json(vocab_size))
    specials = _unique([bos, eos, unk, pad, *special_tokens])
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    extra = [t for t in _unique(list(added_tokens)) if t not in specials]
    if extra:
        tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in extra])
    tokenizer.save(str(path / "tokenizer.json"))

    token_map = {f"{name}_token": value for name, value in
                 (("bos", bos), ("eos", eos), ("unk", unk), ("pad", pad)) if value is not None}
    config: dict = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 32768,
                    "clean_up_tokenization_spaces": False, "add_bos_token": False,
                    "add_eos_token": False, **token_map}
    if chat_template is not None and template_in_config:
        config["chat_template"] = chat_template
    (path / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    if chat_template is not None and not template_in_config:
        (path / "chat_template.jinja").write_text(chat_template, encoding="utf-8")
    if special_tokens_map:
        (path / "special_tokens_map.json").write_text(json.dumps(token_map, indent=2) + "\n", encoding="utf-8")
    return path


def build_toy_tokenizer_dir(path: str | Path, **overrides) -> Path:
    """The toy tokenizer: ``TOY_TEMPLATE`` with ``TOY_SPECIAL_TOKENS``."""
    kwargs = dict(chat_template=TOY_TEMPLATE, special_tokens=TOY_SPECIAL_TOKENS, bos=TOY_BOS, eos=TOY_EOS,
                  pad=TOY_PAD)
    kwargs.update(overrides)
    return build_tokenizer_dir(path, **kwargs)


def build_real_tokenizer_dir(path: str | Path, key: str, **overrides) -> Path:
    """A test tokenizer carrying real template ``key``'s special tokens and the template itself
    (read from ``CHAT_TEMPLATES_DIR``; ``FileNotFoundError`` when it is absent)."""
    spec = REAL_TEMPLATES[key]
    kwargs = dict(chat_template=spec.read(), special_tokens=spec.special_tokens, bos=spec.bos, eos=spec.eos,
                  unk=spec.unk, pad=spec.pad, added_tokens=spec.added_tokens)
    kwargs.update(overrides)
    return build_tokenizer_dir(path, **kwargs)
