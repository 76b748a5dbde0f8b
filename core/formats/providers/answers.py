"""What the provider bodies share about a recorded answer."""
from __future__ import annotations

from typing import Any

from ..normalise import Context


def readable_answer(response: Any, place: str, ctx: Context, *, error: str | None = None) -> bool:
    """Whether a recorded response can be read; if not (not an object, or the provider's error), a note
    says why. ``error`` names the response's error message when it has one (Bedrock's ``message``)."""
    if not isinstance(response, dict):
        ctx.warn(place, "the recorded response is not a JSON object; its usage is not read")
        return False
    if error is None and isinstance(response.get("error"), dict):
        error = str(response["error"].get("message", ""))
    if error is not None:
        ctx.warn(place, f"the provider answered with an error: {error}")
        return False
    return True
