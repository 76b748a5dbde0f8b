"""Real tokenizers for ``template_sweep --tokenizer``: the vocabulary-only GGUF files the llama-cpp-python sdist ships
(``vendor/llama.cpp/models/ggml-vocab-*.gguf``: Llama 3 and Llama SPM, Command R, DeepSeek LLM and Coder, Falcon,
GPT-2, GPT-NeoX, MPT, StarCoder, Refact, Qwen 2 and 3.5, Phi-3, Gemma 4, Baichuan, Aquila...) written out as HF
tokenizer folders by transformers' own GGUF tokenizer converter, each checked against llama.cpp's tokenizer tests
shipped beside it (``.inp``/``.out``). A tool run by hand, never by the suite; nothing is bundled or fetched.

    pip download --no-deps --no-binary :all: llama-cpp-python -d /tmp/lcpp && tar xzf /tmp/lcpp/llama_cpp_python-*.tar.gz -C /tmp/lcpp
    .venv/bin/pip install gguf      # reads the files' metadata (not a dependency of the project)
    .venv/bin/python -m tests.benchmarks.gguf_vocabs /tmp/lcpp/llama_cpp_python-*/vendor/llama.cpp/models /tmp/vocabs
    .venv/bin/python -m tests.benchmarks.template_sweep <templates> --only Phi-3.5 --tokenizer /tmp/vocabs/phi-3

transformers reads a GGUF file's metadata with torch, which this project does not install; the metadata is read here
with the ``gguf`` package instead and handed to the same converter (``get_gguf_tokenizer``, ``convert_gguf_tokenizer``).
"""
from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path


def _metadata_reader():
    """transformers' ``read_gguf_metadata`` made of the ``gguf`` package's reader (every field's value)."""
    import gguf

    def read_gguf_metadata(path, full=()):
        fields = {}
        for name, field in gguf.GGUFReader(path).fields.items():
            try:
                fields[name] = field.contents()
            except Exception:  # noqa: BLE001 - a field the reader cannot turn into a value: not the tokenizer's
                pass
        return fields, None

    module = types.ModuleType("transformers.integrations.gguf.reader")
    module.read_gguf_metadata = read_gguf_metadata
    return module


def convert(path: Path, out: Path) -> str:
    from transformers import PreTrainedTokenizerFast
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer, get_gguf_tokenizer

    architecture, tokenizer, config = get_gguf_tokenizer(str(path))
    backend, _ = convert_gguf_tokenizer(architecture, tokenizer)
    made = PreTrainedTokenizerFast(tokenizer_object=backend,
                                   **{k: v for k, v in config.items() if v is not None and k != "chat_template"})
    made.save_pretrained(str(out))
    inputs, outputs = path.with_name(path.name + ".inp"), path.with_name(path.name + ".out")
    if not inputs.exists() or not outputs.exists():
        return "no tokenizer tests beside it"
    texts = inputs.read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    pairs = list(zip(texts, outputs.read_text(encoding="utf-8").split("\n")))
    same = sum(made.encode(t, add_special_tokens=False) == [int(i) for i in o.split()] for t, o in pairs)
    return f"{same}/{len(pairs)} of llama.cpp's tokenizer tests give its ids"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", type=Path, help="llama.cpp's models folder (ggml-vocab-*.gguf)")
    parser.add_argument("out", type=Path, help="a folder to write one tokenizer folder per vocabulary into")
    args = parser.parse_args(argv)
    try:
        sys.modules["transformers.integrations.gguf.reader"] = _metadata_reader()
    except ModuleNotFoundError:
        print("the gguf package is not installed: .venv/bin/pip install gguf", file=sys.stderr)
        return 2
    files = sorted(args.models.glob("ggml-vocab-*.gguf"))
    if not files:
        print(f"no ggml-vocab-*.gguf in {args.models}", file=sys.stderr)
        return 2
    for path in files:
        name = path.name[len("ggml-vocab-"):-len(".gguf")]
        try:
            print(f"{name}: {convert(path, args.out / name)}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a vocabulary the converter does not take (BERT's): named
            print(f"{name}: not converted ({type(exc).__name__}: {str(exc)[:160]})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
