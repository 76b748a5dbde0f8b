"""Named errors of the context assembler. Each carries the figures a person needs."""
from __future__ import annotations


class ContextInspectorError(Exception):
    """Base of every error the core raises on purpose."""


class InputFileError(ContextInspectorError):
    """A file could not be read as what it claims to be (missing, not UTF-8, not JSON, too large)."""

    def __init__(self, path: str, problem: str, *, line: int | None = None, column: int | None = None):
        self.path = str(path)
        self.problem = problem
        self.line = line
        self.column = column
        where = self.path
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {problem}")


class RequestError(ContextInspectorError, ValueError):
    """A request (or recorded result) does not satisfy its contract.

    ``problems`` is a list of ``(field_path, message)`` pairs, e.g. ``("evidence[2].score", "...")``.
    """

    def __init__(self, problems: list[tuple[str, str]], *, source: str | None = None):
        self.problems = list(problems)
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"{self.source}: " if self.source else ""
        parts = [f"{path or '<request>'}: {msg}" for path, msg in self.problems]
        more = ""
        if len(parts) > 3:
            more = f" (and {len(parts) - 3} more)"
            parts = parts[:3]
        return head + "; ".join(parts) + more

    def with_source(self, source: str) -> "RequestError":
        return RequestError(self.problems, source=source)


class RequiredContextTooLarge(ContextInspectorError):
    """The required content alone does not fit the input allowance."""

    def __init__(self, required_input_tokens: int, available_input_tokens: int, *,
                 context_limit: int, max_new_tokens: int, margin: int):
        self.required_input_tokens = required_input_tokens
        self.available_input_tokens = available_input_tokens
        self.context_limit = context_limit
        self.max_new_tokens = max_new_tokens
        self.margin = margin
        super().__init__(
            f"required context needs {required_input_tokens} input tokens but only "
            f"{available_input_tokens} are available (context_limit {context_limit} - "
            f"max_new_tokens {max_new_tokens} - margin {margin}); short by "
            f"{required_input_tokens - available_input_tokens}")

    def record(self) -> dict:
        return {
            "status": "rejected",
            "error": "RequiredContextTooLarge",
            "required_input_tokens": self.required_input_tokens,
            "available_input_tokens": self.available_input_tokens,
            "context_limit": self.context_limit,
            "max_new_tokens": self.max_new_tokens,
            "margin": self.margin,
        }


class AssemblyInvariantError(ContextInspectorError):
    """The assembled request broke a rule it must keep (e.g. its recount is over the allowance)."""


class CounterError(ContextInspectorError):
    """A token counter could not be built or could not count a request."""


class ManifestMismatch(CounterError):
    """A tokenizer file does not match the hash its manifest pins."""

    def __init__(self, directory: str, filename: str, expected: str, actual: str | None):
        self.directory = directory
        self.filename = filename
        self.expected = expected
        self.actual = actual
        got = actual if actual is not None else "file missing"
        super().__init__(
            f"{directory}: {filename} does not match its manifest: expected sha256 {expected}, got {got}")


class TemplateRefused(CounterError):
    """The model's chat template refused the request (it raised its own error)."""

    def __init__(self, counter_name: str, template_message: str):
        self.counter_name = counter_name
        self.template_message = template_message
        super().__init__(f"the chat template of {counter_name} refused the request: {template_message!r}")


class ContextBudgetError(ContextInspectorError):
    """A plan's prompt cannot be made to fit without breaking a rule (pinned content over the
    budget, a strategy over its allowance, a summary that could not be made). Nothing is emitted."""

    def record(self) -> dict:
        return {"status": "rejected", "error": "ContextBudgetError", "message": str(self)}


class PromptNotCountable(ContextBudgetError):
    """A plan's prompt that the counter's chat template refuses: bad input (the template's words are in it),
    not a budget that is too small. A ``ContextBudgetError`` still, so a strategy asking whether a partial
    prompt can be counted treats it as one that cannot."""


class CapabilityError(ContextInspectorError):
    """Neither the plan nor the counter says how large the budget is: there is no safe guess."""


class AssemblyCancelled(ContextInspectorError):
    """The caller cancelled the assembly (for example during a summary call): not a budget failure."""
