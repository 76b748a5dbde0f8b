"""Controllers: what the window asks of the core and the workers (opening files, the counter, imported
requests, the replay). Each holds its own state and reports through the window, never to a pane."""
