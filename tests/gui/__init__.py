"""Tests of the desktop app (pytest-qt, offscreen)."""
