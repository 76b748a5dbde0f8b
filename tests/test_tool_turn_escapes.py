"""Tool-call turns whose values a template writes as JSON (Llama 3.1 writes a tool result ``| tojson``: quotes,
backslashes and newlines escaped) are not written alike with turns whose values it leaves as they are, so they are
not one shape (``core.assembly_tools._escaped``). Found by a random draw on the real Llama 3.1 template (session
18): the representative and the two members that checked the shape's constant held no quote, and turns whose
results did were priced 3 and 5 tokens short in the trace of dropped turns."""
from __future__ import annotations

import pytest
from support import same_as_reference_at_every_fill

from core import make_counter

TOOLS = [{"name": "fetch_page", "description": "Fetch a page.",
          "parameters": {"type": "object", "properties": {"url": {"type": "string"}}}}]
RESULTS = ["ok r0", "fine r1", "done r2", 'the page says "closed" r3', 'a "quoted"\nline and \\ r4',
           "plain again r5", 'é字 "q" r6']


def _data(limit: int) -> dict:
    history = []
    for t, result in enumerate(RESULTS):
        call = f"call{t:04d}"
        history += [{"role": "user", "content": f"Look up page {t}", "id": f"t{t}"},
                    {"role": "assistant", "content": None,
                     "tool_calls": [{"id": call, "name": "fetch_page", "arguments": {"url": f"https://x.test/{t}"}}]},
                    {"role": "tool", "tool_call_id": call, "content": result},
                    {"role": "assistant", "content": f"Page {t} read."}]
    return {"instructions": "Be brief.", "current": "What did they say?", "history": history, "tools": TOOLS,
            "max_new_tokens": 8, "margin": 0, "context_limit": limit}


@pytest.mark.parametrize("key", ["llama31", "qwen25"])
def test_tool_turns_with_escaped_values_cost_what_the_reference_says(real_template_tokenizer_dir, key):
    counter = make_counter(f"hf:{real_template_tokenizer_dir(key)}")
    same_as_reference_at_every_fill(counter, _data)
