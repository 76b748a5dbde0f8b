"""Context assembler: builds one chat request under a token budget and records why, item by item."""
