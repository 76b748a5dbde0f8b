# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test fixtures screenshots icons dist clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# Qt's X11 plugin needs system libraries the PySide6 wheel does not carry: installed here as root
# (apt-get), else one apt-get line is printed and make stops (packaging/qt_system_libs.py).
demo: $(STAMP)
	$(BIN)/python packaging/qt_system_libs.py --install
	$(BIN)/context-inspector --demo

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

fixtures: $(STAMP)
	$(BIN)/python fixtures/regenerate.py
	$(BIN)/python fixtures/rag/regenerate.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector --demo --screenshot resources/screenshots/demo.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector fixtures/rag_tight.result.json --screenshot resources/screenshots/rag_tight.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector fixtures/rag_literal_boundary.result.json fixtures/rag_literal_boundary.baseline.json --screenshot resources/screenshots/literal_boundary.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector fixtures/demo.result.json fixtures/demo.baseline.json --row 2 --tab audit --screenshot resources/screenshots/demo_baseline_audit.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector --demo --replay-limit 900 --screenshot resources/screenshots/replay.png
	$(BIN)/python fixtures/large.py /tmp/context-inspector-large
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector /tmp/context-inspector-large/demo_200k.request.json --bar-view fit --size 1280x800 --screenshot resources/screenshots/window_200k_fit.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector /tmp/context-inspector-large/demo_200k.request.json --bar-view composition --size 1280x800 --screenshot resources/screenshots/window_200k_composition.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector /tmp/context-inspector-large/long_chat.request.json --size 1280x800 --screenshot resources/screenshots/many_drops.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector /tmp/context-inspector-large/long_chat_roomy.request.json --replay-limit 1200 --size 1280x800 --screenshot resources/screenshots/replay_newly_dropped.png
	QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector fixtures/trip_plan_pin_and_fold.result.json --bar-view composition --size 1280x800 --screenshot resources/screenshots/plan_sections.png
	if [ -e ../shared/realworld/anthropic-messages ]; then QT_QPA_PLATFORM=offscreen $(BIN)/context-inspector ../shared/realworld/anthropic-messages/openllmetry-test_anthropic_tools_history_legacy.yaml --tab audit --screenshot resources/screenshots/provider_drift.png; fi

# the app icon's PNGs, from resources/icons/context-inspector.svg
icons: $(STAMP)
	$(BIN)/python packaging/render_icons.py

# the wheel + sdist and the one-folder desktop app (PyInstaller) in dist/; see README "Packaging"
dist: $(STAMP)
	packaging/build.sh

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
