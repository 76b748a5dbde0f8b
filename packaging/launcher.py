"""The frozen application's entry point (PyInstaller needs a script, not an entry point).

One executable serves both commands: ``context-inspector`` (the desktop app) and, through the
``context-assembler`` link that packaging/build.sh puts beside it, the command line of the core.
"""
from __future__ import annotations

import os
import sys


def main() -> int:
    if os.path.basename(sys.argv[0]).startswith("context-assembler"):
        from core.cli import main as command
    else:
        from inspector.app import main as command
    return command()


if __name__ == "__main__":
    raise SystemExit(main())
