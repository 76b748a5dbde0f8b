"""Conformance corpus: every real file in ../shared/realworld*/ read by ``show --json`` and compared
with the expectation written from reading the file itself (tests/conformance/). Prints the table
(files, calls, faithful, wrong); fails for any wrong file outside the folders another branch owns."""
from __future__ import annotations

import pytest
from conformance.compare import PENDING_AREAS, check, expectations, table
from support import SHARED

pytestmark = pytest.mark.realworld

SKIP = {"chat-templates"}  # Jinja chat templates: counter inputs, not recorded calls


def real_files() -> list[str]:
    files = []
    for folder in ("realworld", "realworld2"):
        for path in sorted((SHARED / folder).rglob("*")):
            if path.is_file() and path.name != "SOURCES.md" and path.parent.name not in SKIP:
                files.append(path.relative_to(SHARED).as_posix())
    return files


@pytest.fixture(scope="module")
def shared():
    if not (SHARED / "realworld").is_dir():
        pytest.skip(f"the shared real-world files are absent ({SHARED / 'realworld'} not found)")
    return SHARED


def test_every_real_file_has_an_expectation(shared):
    missing = sorted(set(real_files()) - set(expectations()))
    assert not missing, f"real files without an expectation in tests/conformance/: {missing}"


def test_conformance_table(shared, capsys):
    results = [check(key, want, shared) for key, want in sorted(expectations().items())
               if (shared / key).is_file()]
    with capsys.disabled():
        print("\n" + table(results))
    wrong = [r.key for r in results if r.problems and not r.pending]
    assert not wrong, f"not read faithfully (see the table above): {wrong}"
    pending_faithful = [r.key for r in results if r.pending and r.faithful]
    if pending_faithful and len(pending_faithful) == sum(r.pending for r in results):
        pytest.fail(f"every file of the pending folders {sorted(PENDING_AREAS)} is now faithful: empty "
                    "PENDING_AREAS in tests/conformance/compare.py")
