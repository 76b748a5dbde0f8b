"""The window's panes. Each shows what the window gives it and reports what the person picked through
its signals; panes never talk to each other (the window connects them)."""
