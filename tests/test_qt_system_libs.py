"""``make demo``'s set-up of Qt's system libraries (packaging/qt_system_libs.py): what it finds missing,
the Debian packages it names, and what it does as root and as anyone else. ``ldd`` and apt-get are
replaced by a recording fake; one test asks this machine's real ``ldd`` and ``dpkg``."""
from __future__ import annotations

import importlib.util
import io
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("qt_system_libs", ROOT / "packaging" / "qt_system_libs.py")
qsl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qsl)

LDD_MISSING = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-util.so.1 => /lib/x86_64-linux-gnu/libxcb-util.so.1 (0x00007f6e)
\tlibxcb-keysyms.so.1 => not found
\tlibxkbcommon-x11.so.0 => not found
"""


class FakeSystem:
    """ldd answers from ``missing`` (emptied by a successful apt-get install); every command is recorded."""

    def __init__(self, ldd_output: str, *, apt: bool = True, install_fails: bool = False) -> None:
        self.ldd_output = ldd_output
        self.apt = apt
        self.install_fails = install_fails
        self.commands: list[list[str]] = []

    def __call__(self, command):
        command = list(command)
        self.commands.append(command)
        if command[0] == "ldd":
            return subprocess.CompletedProcess(command, 0, self.ldd_output, "")
        if command[:2] == ["sh", "-c"]:
            return subprocess.CompletedProcess(command, 0 if self.apt else 1, "", "")
        if "install" in command:
            if self.install_fails:
                return subprocess.CompletedProcess(command, 100, "", "E: Unable to locate package")
            self.ldd_output = ""  # installed: nothing is missing any more
        return subprocess.CompletedProcess(command, 0, "", "")

    @property
    def apt_commands(self) -> list[list[str]]:
        return [c for c in self.commands if "apt-get" in c]


@pytest.fixture
def qt(tmp_path):
    for name in qsl.QT_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def ensure(qt, system, *, install=True, root=True, environ=None):
    out, err = io.StringIO(), io.StringIO()
    code = qsl.ensure(install=install, environ=environ if environ is not None else {"DISPLAY": ":0"}, qt=qt,
                      runner=system, is_root=root, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_missing_libraries_are_named_once_each_in_the_order_ldd_meets_them(qt):
    assert qsl.missing_libraries([qt / n for n in qsl.QT_FILES], FakeSystem(LDD_MISSING)) == [
        "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxkbcommon-x11.so.0"]


@pytest.mark.parametrize("soname, package", [
    ("libxcb-cursor.so.0", "libxcb-cursor0"), ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"), ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libdbus-1.so.3", "libdbus-1-3"), ("libglib-2.0.so.0", "libglib2.0-0"), ("libEGL.so.1", "libegl1"),
    ("libpng16.so.16", "libpng16-16")])
def test_each_soname_is_named_by_its_debian_package(soname, package):
    assert qsl.debian_package(soname) == package


def test_as_root_the_missing_packages_are_installed_non_interactively(qt):
    system = FakeSystem(LDD_MISSING)
    code, out, err = ensure(qt, system)
    assert code == 0
    update, install = system.apt_commands
    assert update[:2] == ["env", "DEBIAN_FRONTEND=noninteractive"] and update[2:4] == ["apt-get", "update"]
    assert install[2:4] == ["apt-get", "install"] and "-y" in install
    assert install[-4:] == ["libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0"]
    assert "libxcb-icccm.so.4" in err and "installing" in out


def test_without_root_one_apt_get_line_is_printed_and_make_stops(qt):
    system = FakeSystem(LDD_MISSING)
    code, _out, err = ensure(qt, system, root=False)
    assert code == 1
    assert not system.apt_commands  # nothing was tried
    lines = [line.strip() for line in err.splitlines() if "apt-get" in line]
    assert lines == ["sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0"]


def test_a_failed_install_says_so_and_prints_the_line(qt):
    code, _out, err = ensure(qt, FakeSystem(LDD_MISSING, install_fails=True))
    assert code == 1
    assert "Unable to locate package" in err and "apt-get install -y libxcb-cursor0" in err


def test_without_apt_get_the_libraries_and_the_debian_names_are_given(qt):
    code, _out, err = ensure(qt, FakeSystem(LDD_MISSING, apt=False))
    assert code == 1 and "libxcb-keysyms.so.1" in err and "libxcb-keysyms1" in err


def test_nothing_missing_or_offscreen_does_nothing(qt):
    system = FakeSystem("\tlibxcb.so.1 => /lib/x86_64-linux-gnu/libxcb.so.1 (0x1)\n")
    assert ensure(qt, system) == (0, "", "")
    assert not system.apt_commands
    offscreen = FakeSystem(LDD_MISSING)
    assert ensure(qt, offscreen, environ={"QT_QPA_PLATFORM": "offscreen"}) == (0, "", "")
    assert offscreen.commands == []  # not even ldd: tests and CI never pay for the check


@pytest.mark.skipif(shutil.which("ldd") is None or shutil.which("dpkg") is None, reason="needs ldd and dpkg (Debian)")
def test_the_naming_rule_matches_dpkg_for_every_library_qt_finds_here():
    qt = qsl.qt_dir()
    if qt is None or not (qt / qsl.QT_FILES[0]).exists():
        pytest.skip("PySide6's xcb plugin is not installed")
    found: dict[str, str] = {}
    for name in qsl.QT_FILES:
        for line in qsl.run(["ldd", str(qt / name)]).stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/") and str(qt) not in parts[2] \
                    and "/Qt/" not in parts[2]:
                found[parts[0]] = parts[2]
    owners = qsl.run(["dpkg", "-S", *found.values()]).stdout
    package_of = {line.split(": ", 1)[1].strip(): line.split(":", 1)[0] for line in owners.splitlines() if ": " in line}
    checked = {so: package_of[path] for so, path in found.items() if path in package_of}
    assert len(checked) >= 10, f"dpkg named too few of {sorted(found)}"
    wrong = {so: (pkg, qsl.debian_package(so)) for so, pkg in checked.items() if qsl.debian_package(so) != pkg}
    assert not wrong, f"dpkg's package, our name: {wrong}"
