"""Token counters: the target model's own tokenizer and chat template, applied to a whole request.

One module per tokenizer family (``mistral``, ``hf``...), what they share in ``base``, and ``registry``
to build one from its spec. Nothing here reaches the network.
"""
from .base import CounterIdentity, TokenCounter, literal_spans, sha256_file, sha256_text
from .hf import EXTRA_TEMPLATES_DIR, MANIFEST_NAME, HFCounter, read_manifest, write_manifest
from .mistral import MistralCounter, bundled_mistral_tokenizers, mistral_data_dir, mistral_tool_call_id
from .registry import DEFAULT_COUNTER, make_counter

__all__ = [
    "CounterIdentity", "TokenCounter", "literal_spans", "sha256_file", "sha256_text",
    "EXTRA_TEMPLATES_DIR", "MANIFEST_NAME", "HFCounter", "read_manifest", "write_manifest",
    "MistralCounter", "bundled_mistral_tokenizers", "mistral_data_dir", "mistral_tool_call_id",
    "DEFAULT_COUNTER", "make_counter",
]
