"""Times as traces record them, read as Unix seconds: ISO 8601 text (Langfuse, Phoenix) or
nanoseconds since the epoch (OTLP ``startTimeUnixNano``, an int or a decimal string)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def unix_seconds(value: Any) -> float | None:
    """``value`` as Unix seconds, or ``None`` when it is absent or not a time."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isdigit()):
        number = float(value)
        if number <= 0:
            return None
        # nanoseconds (OTLP), milliseconds (JavaScript) or seconds, told apart by magnitude
        return number / 1e9 if number > 1e16 else number / 1e3 if number > 1e11 else number
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return None
