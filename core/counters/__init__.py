"""Token counters: the target model's own tokenizer and chat template, applied to a whole request.

One module per tokenizer family (``mistral``, ``hf``...), what they share in ``base``, and ``registry``
to build one from its spec. Nothing here reaches the network.
"""
from .base import CounterIdentity, TokenCounter, literal_spans, sha256_file, sha256_text
from .hf import EXTRA_TEMPLATES_DIR, MANIFEST_NAME, HFCounter, read_manifest, write_manifest
from .mistral import MistralCounter, bundled_mistral_tokenizers, mistral_data_dir, mistral_tool_call_id
from .registry import AUTO, DEFAULT_COUNTER, make_counter, parse_template_kwargs
from .auto import AutoCounter
from .catalogue import CounterEntry, available_counters
from .models import ModelInfo, auto_counter_spec, lookup as lookup_model, user_table_path
from .openai import OpenAICounter

__all__ = [
    "CounterIdentity", "TokenCounter", "literal_spans", "sha256_file", "sha256_text",
    "EXTRA_TEMPLATES_DIR", "MANIFEST_NAME", "HFCounter", "read_manifest", "write_manifest",
    "MistralCounter", "bundled_mistral_tokenizers", "mistral_data_dir", "mistral_tool_call_id",
    "DEFAULT_COUNTER", "make_counter", "AUTO", "parse_template_kwargs", "AutoCounter", "CounterEntry",
    "available_counters", "ModelInfo", "auto_counter_spec", "lookup_model", "user_table_path", "OpenAICounter",
]
