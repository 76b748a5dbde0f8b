"""``python -m inspector``: the same entry point as the ``context-inspector`` command."""
from .app import main

raise SystemExit(main())
