"""Where the bundled files live. One place, so packaging can move them without touching the GUI."""
from __future__ import annotations

from pathlib import Path


def fixtures_dir() -> Path:
    """The bundled fixtures (a source checkout keeps them beside the package)."""
    return Path(__file__).resolve().parent.parent / "fixtures"


def demo_request_path() -> Path:
    return fixtures_dir() / "demo.request.json"
