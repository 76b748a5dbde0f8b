"""Context assembler: builds one chat request under a token budget and records why, item by item.

Public API (the inspector uses only these names)::

    from core import parse_request, make_counter, assemble, naive_truncate, audit
    result = assemble(parse_request(data), make_counter())   # embedded mistral-common counter
    findings = audit(result, counter)

    imported = import_file("trace.jsonl")                 # provider bodies and trace exports (core.formats)
    result = count_imported(imported.requests[0], make_counter())
"""
from .assembly import AssemblyStats, assemble
from .audit import RULES, Finding, audit, has_errors
from .baseline import naive_truncate
from .contracts import (ChatMessage, Evidence, HistoryMessage, Request, ToolCall, ToolDefinition, ToolExchange,
                        ToolResult, parse_request)
from .counting import (DEFAULT_COUNTER, CounterIdentity, HFCounter, MistralCounter, TokenCounter,
                       bundled_mistral_tokenizers, make_counter, write_manifest)
from .errors import (AssemblyCancelled, AssemblyInvariantError, CapabilityError, ContextBudgetError,
                     ContextInspectorError, CounterError, InputFileError, ManifestMismatch, RequestError,
                     PromptNotCountable, RequiredContextTooLarge, TemplateRefused)
from .plans import (ByScore, CompactionOutcome, ContextAssembler, ContextPlan, DropOldest, HttpSummariser, Message,
                    NewestTurns, PinAndFold, PlanRequest, RecordedSummariser, SectionPlan, SummariseSpan, SummaryStore,
                    assemble_plan_request, parse_plan, parse_plan_request, pinned, plan_from_request)
from .loading import (JsonlIndex, LoadedEntry, RowSummary, entry_from, index_jsonl, iter_json_records, load_entries,
                      load_request, load_result, read_json)
from .jsonl_parts import JsonlPart, index_part, joined_index, plan_parts
from .render import escape, unescape
from .view import EscapedLiteral, Region, RenderedView, render_view
from .result import DECISIONS, NOT_SENT, SECTION_ORDER, AssemblyResult, TraceEntry, parse_result
from .formats import (CountRefused, FormatError, FormatInfo, ImportedFile, ImportedRequest, ImportNote, Recorded,
                      UnsupportedFormat, count_imported, detect, import_data, import_file, to_core_request)
from .export import EXPORT_KINDS, export_text, html_report, openai_body, otlp_trace, result_json, span_attributes

__all__ = [
    "assemble", "AssemblyStats", "naive_truncate", "audit", "has_errors", "Finding", "RULES",
    "Request", "ChatMessage", "Evidence", "HistoryMessage", "ToolCall", "ToolDefinition", "ToolExchange",
    "ToolResult", "parse_request", "parse_result", "AssemblyResult", "TraceEntry", "DECISIONS", "NOT_SENT", "SECTION_ORDER",
    "TokenCounter", "MistralCounter", "HFCounter", "CounterIdentity", "make_counter", "DEFAULT_COUNTER",
    "bundled_mistral_tokenizers", "write_manifest",
    "ContextInspectorError", "InputFileError", "RequestError", "RequiredContextTooLarge", "CounterError",
    "ManifestMismatch", "TemplateRefused", "PromptNotCountable", "AssemblyInvariantError", "ContextBudgetError", "CapabilityError",
    "AssemblyCancelled",
    "ContextPlan", "SectionPlan", "ContextAssembler", "Message", "pinned", "CompactionOutcome", "DropOldest",
    "PinAndFold", "SummariseSpan", "NewestTurns", "ByScore", "HttpSummariser", "RecordedSummariser", "SummaryStore",
    "PlanRequest", "parse_plan", "parse_plan_request", "assemble_plan_request", "plan_from_request",
    "LoadedEntry", "JsonlIndex", "RowSummary", "index_jsonl", "load_entries", "load_request", "load_result", "read_json", "iter_json_records", "entry_from",
    "JsonlPart", "plan_parts", "index_part", "joined_index",
    "escape", "unescape", "render_view", "RenderedView", "Region", "EscapedLiteral",
    "detect", "import_file", "import_data", "count_imported", "to_core_request", "FormatInfo", "ImportedFile",
    "ImportedRequest", "ImportNote", "Recorded", "FormatError", "UnsupportedFormat", "CountRefused",
    "openai_body", "otlp_trace", "span_attributes", "result_json", "html_report", "export_text", "EXPORT_KINDS",
]

# The RAG window adapter (seed 004): verified source windows as cited passages.
from .rag import (RAG_KIND, LoadedRag, WindowError, assemble_rag, assemble_rag_file, assemble_windows,  # noqa: E402
                  build_index, expand, finish_rag_result, is_rag_request, load_rag_request, make_request,
                  rag_request_from, validate_index, validate_windows)

__all__ += [
    "RAG_KIND", "LoadedRag", "WindowError", "assemble_rag", "assemble_rag_file", "assemble_windows", "build_index",
    "expand", "finish_rag_result", "is_rag_request", "load_rag_request", "make_request", "rag_request_from",
    "validate_index", "validate_windows",
]

# What an import read, call by call (``context-assembler show``), and the calls it could not read.
from .formats.model import FailedCall  # noqa: E402
from .formats.show import show_json, show_text  # noqa: E402

__all__ += ["FailedCall", "show_json", "show_text"]
# The budget bar's layout, the composition table and the palette the inspector and the HTML report share.
from .barlayout import FOLD_AT, MIN_ZOOM_TOKENS, Segment, content_extent, full_extent, rejection_segments  # noqa: E402
from .barlayout import result_segments, view_extent, zoom_limits  # noqa: E402
from .composition import CompositionRow, SectionFigures, composition, percent, section_figures  # noqa: E402
from .palette import (FALLBACK_COLOURS, NEWLY_DROPPED_COLOUR, NOT_SENT_COLOUR, PROVIDER_COLOUR,  # noqa: E402
                      RESERVE_COLOURS, RESERVE_TITLES, SECTION_COLOURS, SECTION_TITLES, SectionPalette,
                      section_order, section_title)

__all__ += [
    "FOLD_AT", "MIN_ZOOM_TOKENS", "Segment", "content_extent", "full_extent", "rejection_segments", "result_segments",
    "view_extent", "zoom_limits", "CompositionRow", "SectionFigures", "composition", "percent", "section_figures",
    "FALLBACK_COLOURS", "NEWLY_DROPPED_COLOUR", "NOT_SENT_COLOUR", "PROVIDER_COLOUR", "RESERVE_COLOURS",
    "RESERVE_TITLES", "SECTION_COLOURS", "SECTION_TITLES", "SectionPalette", "section_order", "section_title",
]
# Agent sessions (issue 17): a trace's model calls in order, what changed between them, the cache prefix.
from .formats.model import SpanNode  # noqa: E402
from .sessions import CallDiff, Change, Session, SessionCall, open_session, session_from_import  # noqa: E402
from .sessions.report import MARK_LEGEND as SESSION_MARK_LEGEND  # noqa: E402
from .sessions.report import marks as session_marks  # noqa: E402

__all__ += ["SpanNode", "Session", "SessionCall", "CallDiff", "Change", "open_session", "session_from_import",
            "SESSION_MARK_LEGEND", "session_marks"]
# What-if over a corpus (issue 19): ``context-assembler sweep`` and the SWEEP.json it writes.
from .sweep import (SWEEP_FORMAT, BucketMember, Setting, bucket_members, is_sweep, is_sweep_file,  # noqa: E402
                    load_sweep, member_location, run_sweep, setting_of, settings_from, sweep_text)

__all__ += [
    "SWEEP_FORMAT", "BucketMember", "Setting", "bucket_members", "is_sweep", "is_sweep_file", "load_sweep",
    "member_location", "run_sweep", "setting_of", "settings_from", "sweep_text",
]
# Experiments (seeds 003 and 001): variants sent to a model endpoint, answers recorded and graded offline;
# the permission check and the request record (seed 001, 3.3 and 3.5).
from .experiments import (EXPERIMENT_FORMAT, ILLUSTRATION, AnswersFile, Endpoint, EndpointError,  # noqa: E402
                          Experiment, Grade, Graded, PositionPoint, Rules, Sampling, Subject, VariantError,
                          grade_file, load_answers, load_rules, load_subject, parse_rules, run_experiment,
                          sniff_answers, wilson)
from .experiments import build_all as build_experiment  # noqa: E402
from .permissions import NOT_PERMITTED, permitted, recorded_json  # noqa: E402

__all__ += [
    "EXPERIMENT_FORMAT", "ILLUSTRATION", "AnswersFile", "Endpoint", "EndpointError", "Experiment", "Grade", "Graded",
    "PositionPoint", "Rules", "Sampling", "Subject", "VariantError", "grade_file", "load_answers", "load_rules",
    "load_subject", "parse_rules", "run_experiment", "sniff_answers", "wilson", "build_experiment",
    "NOT_PERMITTED", "permitted", "recorded_json",
]
# Counters by model (issue 13): openai:, harmony:, estimate:, auto, the model registry, and what a template
# leaves out of the prompt it renders.
from .counters import (AUTO, AutoCounter, CounterEntry, ModelInfo, OpenAICounter, auto_counter_spec,  # noqa: E402
                       available_counters, lookup_model, parse_template_kwargs)
from .rendered import NOT_RENDERED, mark_not_rendered  # noqa: E402

__all__ += [
    "AUTO", "AutoCounter", "CounterEntry", "ModelInfo", "OpenAICounter", "auto_counter_spec", "available_counters",
    "lookup_model", "parse_template_kwargs", "NOT_RENDERED", "mark_not_rendered",
]
# An estimate's bar drawn to the provider's recorded figure (issue 13); tiktoken's cache, filled when asked.
from .barlayout import BarBasis, bar_basis  # noqa: E402
from .counters.tiktoken_cache import ENCODINGS as TIKTOKEN_ENCODINGS  # noqa: E402
from .counters.tiktoken_cache import cache_dir as tiktoken_cache_dir  # noqa: E402
from .counters.tiktoken_cache import cached_path as cached_encoding  # noqa: E402
from .counters.tiktoken_cache import fetch as fetch_encoding  # noqa: E402

__all__ += ["BarBasis", "bar_basis", "TIKTOKEN_ENCODINGS", "tiktoken_cache_dir", "cached_encoding", "fetch_encoding"]
# The token view (issue 16): a text as the counter's tokens, ids and boundaries.
from .tokenview import TokenPiece, token_view  # noqa: E402

__all__ += ["TokenPiece", "token_view"]
# The inspector's worker processes (issue 15): an index row's entry read from its summary alone.
from .loading import entry_from_line, read_entry  # noqa: E402

__all__ += ["entry_from_line", "read_entry"]
