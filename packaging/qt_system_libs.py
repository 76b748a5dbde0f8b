"""The system libraries Qt's X11 platform plugin needs and this machine lacks; installs them on Debian.

``make demo`` runs this before it opens the window. PySide6's wheel carries Qt but not the X11 client
libraries Qt's xcb plugin links against (``libxcb-cursor0``, ``libxcb-icccm4``, ``libxcb-keysyms1``...);
without one of them Qt aborts with "Could not load the Qt platform plugin xcb", naming at most the
first. Here ``ldd`` lists every library the plugin (and the Qt libraries the app loads) cannot find,
each is named by its Debian package, and then:

- as root with apt-get: they are installed (``apt-get install -y --no-install-recommends``, non-interactive);
- otherwise: one ``sudo apt-get install ...`` line is printed and the exit status is 1, so ``make`` stops
  there instead of opening a window that cannot appear.

Nothing happens for the offscreen platform (tests, CI) or when nothing is missing. It never imports Qt
(importing it would fail the same way), only finds where PySide6 is installed.

    python packaging/qt_system_libs.py            # report, exit 1 when something is missing
    python packaging/qt_system_libs.py --install  # install what is missing when it can (root + apt-get)
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

# What the window loads: the xcb platform plugin (and through it QtGui, QtDBus, the X11 libraries),
# QtWidgets and QtSvg (icons); ldd follows each one's own dependencies too.
QT_FILES = ("plugins/platforms/libqxcb.so", "lib/libQt6Widgets.so.6", "lib/libQt6Svg.so.6")

# Debian names a library package after its soname (libfoo.so.1 -> libfoo1, libfoo-x11.so.0 -> libfoo-x11-0);
# these do not follow that rule.
DEBIAN_EXCEPTIONS = {
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libGLdispatch.so.0": "libglvnd0",
    "libGLX.so.0": "libglx0",
    "libOpenGL.so.0": "libopengl0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libm.so.6": "libc6",
    "libdl.so.2": "libc6",
    "libpthread.so.0": "libc6",
    "librt.so.1": "libc6",
    "libgcc_s.so.1": "libgcc-s1",
    "libz.so.1": "zlib1g",
    "libbrotlicommon.so.1": "libbrotli1",
    "libbrotlidec.so.1": "libbrotli1",
}
NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found\s*$")
OFFSCREEN = {"offscreen", "minimal", "vnc", "eglfs", "linuxfb"}

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), capture_output=True, text=True, check=False)


def qt_dir() -> Path | None:
    """The Qt folder inside the installed PySide6 (found without importing it)."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def missing_libraries(files: Sequence[Path], runner: Runner = run) -> list[str]:
    """The sonames ``ldd`` reports "not found" for any of ``files``, once each, in the order met."""
    missing: list[str] = []
    for path in files:
        if not path.exists():
            continue
        out = runner(["ldd", str(path)]).stdout
        for line in out.splitlines():
            match = NOT_FOUND.match(line)
            if match and match.group(1) not in missing:
                missing.append(match.group(1))
    return missing


def debian_package(soname: str) -> str:
    """The Debian package that ships ``soname`` (its naming rule, with the known exceptions)."""
    if soname in DEBIAN_EXCEPTIONS:
        return DEBIAN_EXCEPTIONS[soname]
    match = re.fullmatch(r"(.+?)\.so\.(\d+)(?:\..*)?", soname)
    if match is None:
        return soname
    stem, major = match.group(1).lower(), match.group(2)
    return f"{stem}-{major}" if stem[-1].isdigit() else f"{stem}{major}"


def install_line(packages: Sequence[str], *, root: bool) -> str:
    """The one command to run (a minimal Debian has no sudo, and root does not need it)."""
    return ("" if root else "sudo ") + "apt-get install -y " + " ".join(packages)


def needs_display_libraries(environ: dict[str, str]) -> bool:
    """False when Qt will not use a display plugin (offscreen tests, CI), so nothing is checked."""
    platform = environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    return platform not in OFFSCREEN


def ensure(*, install: bool, environ: dict[str, str], qt: Path | None, runner: Runner = run,
           is_root: bool | None = None, out=sys.stdout, err=sys.stderr) -> int:
    """0: nothing missing (or installed now); 1: missing and not installed (the line to run is printed)."""
    if not sys.platform.startswith("linux") or not needs_display_libraries(environ):
        return 0
    if qt is None or (runner is run and shutil.which("ldd") is None):
        return 0  # no PySide6 yet, or no ldd to ask: Qt itself will say what it lacks
    missing = missing_libraries([qt / name for name in QT_FILES], runner)
    if not missing:
        return 0
    packages = list(dict.fromkeys(debian_package(name) for name in missing))
    print(f"Qt's X11 platform plugin needs system libraries this machine lacks: {', '.join(missing)}", file=err)
    is_root = os.geteuid() == 0 if is_root is None else is_root
    apt = runner(["sh", "-c", "command -v apt-get"]).returncode == 0
    if install and is_root and apt:
        print(f"installing {' '.join(packages)} with apt-get", file=out)
        env = ["env", "DEBIAN_FRONTEND=noninteractive"]
        steps = ([*env, "apt-get", "update", "-qq"],
                 [*env, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages])
        for step in steps:
            done = runner(step)
            if done.returncode != 0:
                print(f"{' '.join(step[2:])} failed: {(done.stderr or done.stdout).strip()[-400:]}", file=err)
                print(f"Install them, then run make demo again:\n  {install_line(packages, root=is_root)}", file=err)
                return 1
        still = missing_libraries([qt / name for name in QT_FILES], runner)
        if still:
            print(f"still missing after the install: {', '.join(still)}", file=err)
            return 1
        return 0
    if apt:
        print(f"Install them, then run make demo again:\n  {install_line(packages, root=is_root)}", file=err)
    else:
        print("Install the packages of your distribution that provide them, then run make demo again "
              f"(on Debian or Ubuntu: {' '.join(packages)})", file=err)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true",
                        help="install what is missing with apt-get when running as root")
    args = parser.parse_args(argv)
    return ensure(install=args.install, environ=dict(os.environ), qt=qt_dir())


if __name__ == "__main__":
    sys.exit(main())
