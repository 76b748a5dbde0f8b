"""Importers of provider request bodies and recorded traces (no Qt, no network).

    from core.formats import detect, import_file, count_imported, to_core_request
    imported = import_file("trace.jsonl")        # detects the format by content
    for request in imported.requests:            # one per model call, with trace/span ids
        result = count_imported(request, counter)   # an AssemblyResult, strategy "imported"
"""
from .count import CountRefused, count_imported
from .detect import detect
from .importing import import_data, import_file
from .model import (FORMATS, FailedCall, FormatError, FormatInfo, ImportedFile, ImportedRequest, ImportNote, Recorded,
                    UnsupportedFormat)
from .reassemble import to_core_request

__all__ = [
    "detect", "import_file", "import_data", "count_imported", "to_core_request",
    "FormatInfo", "ImportedFile", "ImportedRequest", "ImportNote", "Recorded", "FORMATS", "FailedCall",
    "FormatError", "UnsupportedFormat", "CountRefused",
]
